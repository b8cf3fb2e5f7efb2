"""ABB RAPID module (.mod) for the excitation.

Structure: ``JSTART`` and the jointtarget array ``JP{n}`` (degrees, external axes 9E9); ``main`` makes a slow
``MoveAbsJ`` to ``JSTART`` (``fine``, speed ``VAPPROACH``) and then, ``NPER`` times, ``MoveAbsJ JP{i}`` with
``\\T:=DT`` and corner zone ``ZEXC`` for the inner points and ``fine`` for the last one.

Interpolation assumed (and modelled by the parse-back): joint-space linear segments of duration DT whose
corners are blended over the whole segment (zone at least half a segment), i.e. the uniform quadratic
B-spline with the points as control points; each block starts and stops at rest at a ``fine`` point
(control points doubled at the ends). Acceleration is piecewise constant, (P_{i-1} - 2 P_i + P_{i+1}) / DT^2,
and the path cuts each corner by |P_{i-1} - 2 P_i + P_{i+1}| / 8; blending the two stops adds DT/2 at each
end of a block, so one period lasts T + DT on the controller. Re-sampled at 4 ms.
"""

from __future__ import annotations

import re

import numpy as np

from robid.excitation.programs.common import DEG, PointList, ProgramOptions
from robid.excitation.trajectory_file import TrajectoryFile

RATES = (10.0, 20.0, 25.0)
IPO_CYCLE = 0.004


def rapid_name(stem: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    if not name or not name[0].isalpha():
        name = "r_" + name
    return name[:32]


def _jt(values: np.ndarray) -> str:
    rob = list(values) + [0.0] * (6 - len(values))
    return "[[" + ",".join(f"{v:.6f}" for v in rob) + "],[9E9,9E9,9E9,9E9,9E9,9E9]]"


def render_rapid(tf: TrajectoryFile, options: ProgramOptions, rate: float, stem: str) -> dict[str, str]:
    traj = tf.trajectory
    if traj.dof > 6:
        raise ValueError("RAPID export handles up to 6 robot axes")
    name = rapid_name(stem)
    points = PointList.sample(traj, options, rate)
    dt, blocks, segments, values = points.dt, points.blocks, points.segments, points.values
    vmax_deg = float(np.min(tf.limits.velocity)) * DEG * options.approach_fraction
    timing = f"points every {dt:.6g} s, MoveAbsJ \\T:=DT with corner zones, repeated {blocks} time(s)"
    comments = points.comments(tf, "rapid", options, timing)
    lines = [f"MODULE {name}"]
    lines += [f"  ! {c}" for c in comments]
    lines.append(f"  CONST num NPTS := {segments + 1};")
    lines.append(f"  CONST num NPER := {blocks};")
    lines.append(f"  CONST num DT := {dt:.9f};")
    lines.append(f"  CONST speeddata VAPPROACH := [100, {max(1.0, vmax_deg):.1f}, 100, {max(1.0, vmax_deg):.1f}];")
    lines.append("  CONST speeddata VEXC := [7000, 500, 5000, 1000];")
    lines.append("  CONST zonedata ZEXC := [FALSE, 200, 300, 300, 30, 300, 30];")
    lines.append(f"  CONST jointtarget JSTART := {_jt(values[0])};")
    lines.append(f"  CONST jointtarget JP{{{segments + 1}}} := [")
    for i, v in enumerate(values):
        lines.append(f"    {_jt(v)}{',' if i < len(values) - 1 else ''}")
    lines.append("  ];")
    lines += [
        "  PROC main()",
        "    ConfJ \\Off;",
        "    ! slow approach to the start pose",
        "    MoveAbsJ JSTART\\NoEOffs, VAPPROACH, fine, tool0;",
        "    FOR k FROM 1 TO NPER DO",
        "      FOR i FROM 2 TO NPTS - 1 DO",
        "        MoveAbsJ JP{i}\\NoEOffs, VEXC \\T:=DT, ZEXC, tool0;",
        "      ENDFOR",
        "      MoveAbsJ JP{NPTS}\\NoEOffs, VEXC \\T:=DT, fine, tool0;",
        "    ENDFOR",
        "  ENDPROC",
        "ENDMODULE",
    ]
    return {".mod": "\n".join(lines) + "\n"}
