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

Commanded path (``robid export --motor-side``, rest-to-rest designs only): CENTER, SA, SB hold the commanded
path's series (:class:`~robid.excitation.programs.common.CommandedSeries`, H its harmonics) and every target
gets the term DE_j E_j, E_j = DECAY_j^k by the recurrence E_j <- E_j DECAY_j after each tick.
"""

from __future__ import annotations

import numpy as np

from robid.excitation.programs.common import (
    CommandedSeries,
    JointConvention,
    ProgramOptions,
    commanded_lines,
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


#: the target line of the tick loop and, with a commanded path, its replacement (module docstring)
_TARGET = "      q[j] = SIGNS[j] * (CENTER[j] + env * acc) + OFFSETS[j]"
_COMMANDED_TARGET = (
    "      q[j] = SIGNS[j] * (CENTER[j] + env * acc + DE[j] * E[j]) + OFFSETS[j]",
    "      E[j] = E[j] * DECAY[j]",
)


def _link_series(traj) -> CommandedSeries:
    """The design's own series: SA = a/(l w), SB = b/(l w)."""
    ls = np.arange(1, traj.harmonics + 1) * traj.omega
    zeros = np.zeros(traj.dof)
    return CommandedSeries(traj.center, traj.a / ls, traj.b / ls, zeros, zeros, "")


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
    notes = [
        f"servoj every {dt:.6g} s ({1.0 / dt:.6g} Hz); targets computed on the controller",
        "joint values: controller = sign * robid + offset (rad)",
        TEMPLATE_VERSION,
    ]
    series, lines, loop = _link_series(traj), [], _TICK_LOOP
    if options.commanded is not None:
        if lead:
            raise ValueError(
                "URScript computes its targets from a series on the controller; the commanded "
                f"({options.commanded.label}) path of a periodic design's fade-in and fade-out is not one: export "
                "krl, rapid or csv, or design rest-to-rest"
            )
        series = options.commanded.series(dt)
        ticks = np.arange(options.periods * k_per + 1) * dt
        lines = commanded_lines(options, options.commanded.positions(ticks, options.periods, 0), traj.derivative(ticks))
        notes.insert(2, series.note)
        i = loop.index(_TARGET)
        loop = (*loop[:i], *_COMMANDED_TARGET, *loop[i + 1 :])
    metadata = {"rate": repr(1.0 / dt), "periods": options.periods, "lead": lead}
    comments = program_comments(tf, "urscript", options, notes, metadata, lines)
    body = [
        "def robid_excitation():",
        *[f"  # {c}" for c in comments],
        *_constants(series, options, conv, k_per, dt, lead),
        '  textmsg("robid excitation: approach")',
        f"  movej(START, a={a_app:.4f}, v={v_app:.4f})",
        *loop,
    ]
    return {".script": "\n".join(body) + "\n"}


def _constants(
    series: CommandedSeries, options: ProgramOptions, conv: JointConvention, k_per: int, dt: float, lead: int
) -> list[str]:
    """The script's constants (read back by the parse-back): sizes, timing, the series ``SA``, ``SB`` joint by
    joint, the joint convention, the start pose, and the work arrays; with a commanded path also ``DE``,
    ``DECAY`` and the work array ``E``."""
    dof, harmonics = series.sa.shape
    commanded = options.commanded is not None
    # rest-to-rest and faded designs both start at the centre; a commanded series at its value at t = 0
    first = series.center - series.sb.sum(axis=1) + series.start if commanded else series.center
    lines = [
        f"  NJ = {dof}",
        f"  H = {harmonics}",
        f"  K = {k_per}",
        f"  NPER = {options.periods}",
        f"  LEAD = {lead * k_per}",
        f"  DT = {dt!r}",
        f"  CENTER = {_list(series.center)}",
        f"  SA = {_list(series.sa.reshape(-1))}",
        f"  SB = {_list(series.sb.reshape(-1))}",
        f"  SIGNS = {_list(conv.signs)}",
        f"  OFFSETS = {_list(conv.offsets)}",
        f"  START = {_list(conv.to_controller(first))}",
    ]
    if commanded:
        lines += [f"  DE = {_list(series.start)}", f"  DECAY = {_list(series.decay)}", "  E = " + _list(np.ones(dof))]
    return lines + [
        "  SN = " + _list(np.zeros(harmonics)),
        "  CS = " + _list(np.zeros(harmonics)),
        "  q = " + _list(np.zeros(dof)),
    ]
