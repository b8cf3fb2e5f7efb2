"""Sampled trajectory as CSV: columns ``t, q1..qn, qd1..qn, qdd1..qn`` (SI, robid joint convention).

The file holds exactly ``periods`` excited periods sampled at ``rate`` (T * rate rounded to an integer number
of samples per period, the end point of the last period left out so that the file is an integer number of
periods, as the signal stage's period averaging expects). No approach and no fade segments: this is the
design itself, for streaming interfaces, ``robid simulate`` or plotting; the design is described in the
trajectory file. Values are written with 12 significant digits (the trajectory file is the exact record).
Default rate 250 Hz.

With a commanded path (``robid export --motor-side``) the q, qd, qdd columns hold its positions, velocities
and accelerations instead (the same layout, so a streaming set-up reads it unchanged), and ``#`` comment lines
before the column header state it, with the design and the ``robid-program:`` line.
"""

from __future__ import annotations

import io

import numpy as np

from robid.excitation.programs.common import ProgramOptions, commanded_lines, program_comments, samples_per_period
from robid.excitation.trajectory_file import TrajectoryFile

DEFAULT_RATE = 250.0


def render_csv(tf: TrajectoryFile, options: ProgramOptions) -> dict[str, str]:
    traj = tf.trajectory
    if options.signs is not None or options.offsets is not None:
        raise ValueError("CSV files are written in robid's joint convention: joint signs/offsets do not apply")
    rate = options.rate or DEFAULT_RATE
    n = samples_per_period(traj.period, rate)
    dt = traj.period / n
    t = np.arange(options.periods * n) * dt
    q, qd, qdd = traj.evaluate(t, 2)
    buf = io.StringIO()
    if options.commanded is not None:
        link = q
        q, qd, qdd = options.commanded.excited(t)
        notes = [f"samples every {dt:.6g} s ({1.0 / dt:.6g} Hz), the excited periods only (no approach, no fades)"]
        lines = commanded_lines(options, q, link)
        for line in program_comments(tf, "csv", options, notes, {"rate": repr(1.0 / dt)}, lines):
            buf.write(f"# {line}\n")
    dof = traj.dof
    header = ["t"] + [f"q{j + 1}" for j in range(dof)] + [f"qd{j + 1}" for j in range(dof)]
    header += [f"qdd{j + 1}" for j in range(dof)]
    data = np.column_stack([t, q, qd, qdd])
    buf.write(",".join(header) + "\n")
    np.savetxt(buf, data, delimiter=",", fmt="%.12g")
    return {".csv": buf.getvalue()}
