"""KUKA KRL program (.src + .dat, KSS 8.3 or later) for the excitation.

Structure: the .dat holds the start pose ``XSTART`` and the point list ``XP[1..n]`` (E6AXIS, degrees for
rotary axes, mm for linear ones); the .src makes a slow PTP approach to ``XSTART`` ($VEL_AXIS and
$ACC_AXIS at ``approach_percent``) and then runs ``PTP_SPLINE`` blocks of ``SPTP XP[i]`` segments with equal
``TIME_BLOCK PART`` weights and ``TIME_BLOCK END`` = the period, inside ``FOR K=1 TO periods``.

Interpolation assumed (and modelled by the parse-back): the PTP spline passes through every point at its
time-block time and is C2 in joint space, i.e. the clamped cubic spline through the points (zero velocity at
the block's start and end, where a rest-to-rest design is at rest); the controller samples it at its IPO
cycle (12 ms on KR C4). A rest-to-rest design makes every period an independent block that starts and ends at
rest, so the FOR loop repeats it exactly. A periodic design is emitted as one block (fade-in, periods,
fade-out). Check the controller's limit on segments per spline block; lower ``--rate`` if needed.
"""

from __future__ import annotations

import re

import numpy as np

from robid.excitation.programs.common import PointList, ProgramOptions
from robid.excitation.trajectory_file import TrajectoryFile

RATES = (10.0, 20.0, 50.0)  # Hz, tried in this order when --rate is not given
IPO_CYCLE = 0.012  # s


def krl_name(stem: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "r_" + name
    return name[:24]


def _axis(values: np.ndarray) -> str:
    return "{" + ",".join(f"A{j + 1} {v:.6f}" for j, v in enumerate(values)) + "}"


def render_krl(tf: TrajectoryFile, options: ProgramOptions, rate: float, stem: str) -> dict[str, str]:
    traj = tf.trajectory
    if traj.dof > 6:
        raise ValueError("KRL export handles up to 6 robot axes")
    name = krl_name(stem)
    if name != stem:
        raise ValueError(
            f"the KRL file name must be a KRL name (letters, digits, _, at most 24 characters, as DEF {name} "
            f"must match the file), got {stem!r}"
        )
    points = PointList.sample(traj, options, rate)
    dt, blocks, segments, values = points.dt, points.blocks, points.segments, points.values
    start = values[0]
    approach = max(1, min(30, int(round(100 * options.approach_fraction))))
    timing = f"points every {dt:.6g} s ({1.0 / dt:.6g} Hz), PTP spline with TIME_BLOCK, repeated {blocks} time(s)"
    comments = points.comments(tf, "krl", options, timing, dt=repr(dt))
    dat = ["&ACCESS RVP", "&REL 1", f"DEFDAT {name} PUBLIC"]
    dat += [f"; {c}" for c in comments]
    dat.append(f"DECL E6AXIS XSTART={_axis(start)}")
    dat.append(f"DECL E6AXIS XP[{segments + 1}]")
    for i, v in enumerate(values):
        dat.append(f"XP[{i + 1}]={_axis(v)}")
    dat.append("ENDDAT")

    src = ["&ACCESS RVP", "&REL 1", f"DEF {name}( )"]
    src += [f"; {c}" for c in comments]
    src += ["DECL INT K", "BAS(#INITMOV, 0)", f"; slow approach to the start pose ({approach} % axis speed)"]
    src += [f"$VEL_AXIS[{j + 1}]={approach}" for j in range(traj.dof)]
    src += [f"$ACC_AXIS[{j + 1}]={approach}" for j in range(traj.dof)]
    src += ["PTP XSTART", "; excitation: timing set by the time blocks"]
    src += [f"$VEL_AXIS[{j + 1}]=100" for j in range(traj.dof)]
    src += [f"$ACC_AXIS[{j + 1}]=100" for j in range(traj.dof)]
    src.append(f"FOR K=1 TO {blocks}")
    src.append("  PTP_SPLINE")
    src.append("    SPTP XP[1]")
    src.append("    TIME_BLOCK START")
    for i in range(2, segments + 2):
        src.append(f"    SPTP XP[{i}]")
        src.append("    TIME_BLOCK PART = 1")
    src.append(f"    TIME_BLOCK END = {segments * dt:.6f}")
    src.append("  ENDSPLINE")
    src.append("ENDFOR")
    src.append("END")
    return {".src": "\n".join(src) + "\n", ".dat": "\n".join(dat) + "\n"}
