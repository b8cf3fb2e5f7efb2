"""Sampled trajectory as CSV: columns ``t, q1..qn, qd1..qn, qdd1..qn`` (SI, robid joint convention).

The file holds exactly ``periods`` excited periods sampled at ``rate`` (T * rate rounded to an integer number
of samples per period, the end point of the last period left out so that the file is an integer number of
periods, as the signal stage's period averaging expects). No approach and no fade segments: this is the
design itself, for streaming interfaces, ``robid simulate`` or plotting; the design is described in the
trajectory file. Values are written with 12 significant digits (the trajectory file is the exact record).
Default rate 250 Hz.
"""

from __future__ import annotations

import io

import numpy as np

from robid.excitation.programs.common import ProgramOptions, samples_per_period
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
    dof = traj.dof
    header = ["t"] + [f"q{j + 1}" for j in range(dof)] + [f"qd{j + 1}" for j in range(dof)]
    header += [f"qdd{j + 1}" for j in range(dof)]
    data = np.column_stack([t, q, qd, qdd])
    buf = io.StringIO()
    buf.write(",".join(header) + "\n")
    np.savetxt(buf, data, delimiter=",", fmt="%.12g")
    return {".csv": buf.getvalue()}
