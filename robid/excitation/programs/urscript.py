"""Universal Robots URScript (.script) for the excitation.

The script evaluates the Fourier series on the controller, tick by tick: no point list, no interpolation
error beyond the servo rate. ``movej`` approaches the start pose slowly; then for tick k = 0 .. NTICK it
computes the phase 2 pi (k mod K) / K (K ticks per period; integer arithmetic, so no drift), the harmonics
sin(l x), cos(l x) by the angle-addition recurrence from sin x, cos x, the joint targets
q_j = sign_j (c_j + env * sum_l SA_jl sin(l x) - SB_jl cos(l x)) + offset_j (SA = a/(l w), SB = b/(l w);
env = 1, or the C4 smoothstep fade for periodic designs) and sends ``servoj(q, 0, 0, DT, LOOKAHEAD, GAIN)``.

Interpolation assumed (and modelled by the parse-back): the targets are tracked with linear interpolation
between servo ticks at 1/DT (500 Hz on e-Series, 125 Hz on CB3), so the executed velocity, acceleration and
jerk are the first, second and third differences of the targets.
"""

from __future__ import annotations

import numpy as np

from robid.excitation.programs.common import (
    JointConvention,
    ProgramOptions,
    lead_periods,
    program_comments,
    samples_per_period,
)
from robid.excitation.trajectory_file import TrajectoryFile

DEFAULT_RATE = 500.0
TEMPLATE_VERSION = "robid-urscript-template 1"


def _list(values) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


#: The controller's tick loop (module docstring): phase, harmonics by recurrence, fade envelope, targets, servoj.
_TICK_LOOP = (
    "  NTICK = NPER * K + 2 * LEAD",
    "  k = 0",
    "  while k <= NTICK:",
    "    x = 6.283185307179586 * ((k % K) * 1.0) / K",
    "    s1 = sin(x)",
    "    c1 = cos(x)",
    "    SN[0] = s1",
    "    CS[0] = c1",
    "    l = 1",
    "    while l < H:",
    "      SN[l] = SN[l - 1] * c1 + CS[l - 1] * s1",
    "      CS[l] = CS[l - 1] * c1 - SN[l - 1] * s1",
    "      l = l + 1",
    "    end",
    "    env = 1.0",
    "    if LEAD > 0:",
    "      u = 1.0",
    "      if k < LEAD:",
    "        u = (k * 1.0) / LEAD",
    "      elif k > NTICK - LEAD:",
    "        u = ((NTICK - k) * 1.0) / LEAD",
    "      end",
    "      env = u * u * u * u * u * (126.0 + u * (-420.0 + u * (540.0 + u * (-315.0 + 70.0 * u))))",
    "    end",
    "    j = 0",
    "    while j < NJ:",
    "      acc = 0.0",
    "      l = 0",
    "      while l < H:",
    "        acc = acc + SA[j * H + l] * SN[l] - SB[j * H + l] * CS[l]",
    "        l = l + 1",
    "      end",
    "      q[j] = SIGNS[j] * (CENTER[j] + env * acc) + OFFSETS[j]",
    "      j = j + 1",
    "    end",
    "    servoj(q, 0, 0, DT, 0.1, 300)",
    "    k = k + 1",
    "  end",
    "  stopj(2.0)",
    '  textmsg("robid excitation: done")',
    "end",
    "robid_excitation()",
)


def render_urscript(tf: TrajectoryFile, options: ProgramOptions, rate: float, stem: str) -> dict[str, str]:
    traj = tf.trajectory
    if traj.dof != 6:
        raise ValueError("URScript export needs a 6-axis trajectory")
    conv = JointConvention.create(traj.dof, options, 1.0)
    k_per = samples_per_period(traj.period, rate)
    dt = traj.period / k_per
    lead = lead_periods(traj, options)
    v_app = float(np.min(tf.limits.velocity)) * options.approach_fraction
    a_app = float(np.min(tf.limits.acceleration)) * options.approach_fraction
    comments = program_comments(
        tf,
        "urscript",
        options,
        [
            f"servoj every {dt:.6g} s ({1.0 / dt:.6g} Hz); targets computed on the controller",
            "joint values: controller = sign * robid + offset (rad)",
            TEMPLATE_VERSION,
        ],
        {"rate": repr(1.0 / dt), "periods": options.periods, "lead": lead},
    )
    body = [
        "def robid_excitation():",
        *[f"  # {c}" for c in comments],
        *_constants(traj, options, conv, k_per, dt, lead),
        '  textmsg("robid excitation: approach")',
        f"  movej(START, a={a_app:.4f}, v={v_app:.4f})",
        *_TICK_LOOP,
    ]
    return {".script": "\n".join(body) + "\n"}


def _constants(traj, options: ProgramOptions, conv: JointConvention, k_per: int, dt: float, lead: int) -> list[str]:
    """The script's constants (read back by the parse-back): sizes, timing, the series ``SA = a/(l w)``,
    ``SB = b/(l w)`` joint by joint, the joint convention, the start pose, and the work arrays."""
    ls = np.arange(1, traj.harmonics + 1) * traj.omega
    sa = (traj.a / ls).reshape(-1)
    sb = (traj.b / ls).reshape(-1)
    start = conv.to_controller(traj.center)  # rest-to-rest and faded designs both start at the centre
    return [
        f"  NJ = {traj.dof}",
        f"  H = {traj.harmonics}",
        f"  K = {k_per}",
        f"  NPER = {options.periods}",
        f"  LEAD = {lead * k_per}",
        f"  DT = {dt!r}",
        f"  CENTER = {_list(traj.center)}",
        f"  SA = {_list(sa)}",
        f"  SB = {_list(sb)}",
        f"  SIGNS = {_list(conv.signs)}",
        f"  OFFSETS = {_list(conv.offsets)}",
        f"  START = {_list(start)}",
        "  SN = " + _list(np.zeros(traj.harmonics)),
        "  CS = " + _list(np.zeros(traj.harmonics)),
        "  q = " + _list(np.zeros(traj.dof)),
    ]
