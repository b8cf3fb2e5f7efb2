"""Reduced-speed programs and the speeds a program commands (docs/excitation.md, "A first run at reduced speed").

A design run at ``scale`` s of its speed keeps its path and stretches its time: the period becomes T / s, and with
the Swevers form's velocity amplitudes a, b (robid.excitation.fourier) the positions q(t) stay those of the design
at time s t when the amplitudes become s a, s b -- so every velocity is s times the design's, every acceleration
s^2 times, every jerk s^3 times, at the same poses. A first run on a new cell uses s = 0.1 (``FIRST_RUN_SCALE``):
the robot sweeps the whole path at a tenth of the speed, so that the operator can stop it before a collision the
design did not know of.

Every program states, in its comment block, the scale, the largest speed it commands on every joint and the
largest Cartesian speed of the tool point (the origin of the last body frame, or the design's tool point) over its
timeline; the parse-back check (robid.excitation.programs.export_program) then verifies on the executed motion that
no joint exceeds s times the design's peak speed and s^2 times its peak acceleration, besides every hard limit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile

#: the speed scale of a first run on a new cell (``robid export --first-run``)
FIRST_RUN_SCALE = 0.1
#: samples per design period for the peaks
PEAK_SAMPLES = 4096
#: relative margin of the parse-back's speed-scale check (interpolation between program points)
SCALE_TOLERANCE = 0.01


def slowed(tf: TrajectoryFile, scale: float) -> TrajectoryFile:
    """The design run at ``scale`` of its speed (module docstring); the design record notes the scale and the
    design's own period. ValueError for a scale outside (0, 1] or a trajectory that is not a Fourier series."""
    if not 0.0 < scale <= 1.0 or not math.isfinite(scale):
        raise ValueError(f"speed scale: expected a number in (0, 1], got {scale!r}")
    traj = tf.trajectory
    if scale == 1.0:
        return tf
    if not isinstance(traj, FourierTrajectory):
        raise ValueError("speed scale: only robid's Fourier designs (TRAJ.json) can be slowed")
    slow = FourierTrajectory(traj.period / scale, traj.center, scale * traj.a, scale * traj.b, traj.rest_order,
                             traj.joint_names)
    design = {**tf.design, "speed_scale": scale, "design_period": traj.period}
    return dataclasses.replace(tf, trajectory=slow, design=design)


def timeline_peaks(tf: TrajectoryFile, periods: int = 1, lead: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Peak |velocity| and |acceleration| per joint over a program's timeline (the excited periods and, for a
    periodic design, its fades), on PEAK_SAMPLES samples per period."""
    from robid.excitation.programs.timeline import timeline_derivative

    traj = tf.trajectory
    lead = (0 if traj.rest_to_rest else 1) if lead is None else lead
    span = (periods + 2 * lead) * traj.period if lead else traj.period
    t = np.linspace(0.0, span, int(PEAK_SAMPLES * span / traj.period) + 1)
    qd = timeline_derivative(traj, t, periods, lead, 1)
    qdd = timeline_derivative(traj, t, periods, lead, 2)
    return np.max(np.abs(qd), axis=0), np.max(np.abs(qdd), axis=0)


def tool_speed(tf: TrajectoryFile, model=None) -> tuple[float | None, str]:
    """(peak Cartesian speed of the tool point in m/s, what the point is); None when the robot the design names
    cannot be loaded. The tool point is the design's ``tool_point`` (robot-file units, last body) or the origin
    of the last body frame."""
    from robid.errors import RobidInputError

    if model is None:
        from robid.model.loader import read_robot

        name = tf.design.get("robot")
        if not name:
            return None, "no robot named in the design"
        try:
            model = read_robot(str(name))
        except (RobidInputError, OSError):
            return None, f"robot {name} not found"
    if model.dof != tf.trajectory.dof:
        return None, f"robot {model.name} has {model.dof} joints, the design {tf.trajectory.dof}"
    from robid.excitation.cartesian import chain_frames

    traj = tf.trajectory
    point = np.asarray(tf.design.get("tool_point", (0.0, 0.0, 0.0)), dtype=float)
    t = np.linspace(0.0, traj.period, PEAK_SAMPLES + 1)
    poses, _, _ = chain_frames(model, traj.derivative(t, 0))
    p = poses[:, -1, :3, :3] @ point + poses[:, -1, :3, 3]
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / np.diff(t)
    where = "the tool point" if "tool_point" in tf.design else f"the origin of {model.joints[-1].name}'s body frame"
    return float(np.max(speed)), where


def speed_lines(tf: TrajectoryFile, model=None, periods: int = 1) -> list[str]:
    """The comment lines stating the speed scale, the peak joint speeds and the tool speed a program commands."""
    traj = tf.trajectory
    scale = float(tf.design.get("speed_scale", 1.0))
    lines = []
    if scale != 1.0:
        lines.append(f"speed scale {scale:g} of the design (a first run at reduced speed): period {traj.period:g} s "
                     f"instead of {tf.design.get('design_period', traj.period * scale):g} s, velocities x{scale:g}, "
                     f"accelerations x{scale * scale:g}, the same path")
    else:
        lines.append("speed scale 1: the design's full speed (robid export --first-run writes it at 0.1)")
    qd, _ = timeline_peaks(tf, periods)
    lines.append("max joint speeds commanded: " + ", ".join(
        f"{n} {v:.4g} rad/s ({math.degrees(v):.3g} deg/s)" for n, v in zip(traj.joint_names, qd, strict=True)))
    speed, where = (None, "not computed for this trajectory") if not isinstance(traj, FourierTrajectory) \
        else tool_speed(tf, model)
    lines.append(f"max Cartesian speed of {where}: {speed:.4g} m/s" if speed is not None
                 else f"max Cartesian tool speed not stated: {where}")
    return lines


def scale_items(motion, design: TrajectoryFile, scale: float, names) -> tuple:
    """The parse-back items of a reduced-speed program: per joint, the executed peak |velocity| at most ``scale``
    times the design's peak and the peak |acceleration| at most ``scale^2`` times (SCALE_TOLERANCE for the
    interpolation between points)."""
    from robid.excitation.programs.limit_item import ProgramLimit

    qd, qdd = timeline_peaks(design, motion.periods, motion.lead)
    items = []
    for j, name in enumerate(names):
        for quantity, arr, peak, factor in (("velocity x scale", motion.qd, qd[j], scale),
                                            ("acceleration x scale^2", motion.qdd, qdd[j], scale * scale)):
            value = float(np.max(np.abs(arr[:, j])))
            bound = factor * float(peak)
            items.append(ProgramLimit(quantity, name, value, bound, value <= bound * (1 + SCALE_TOLERANCE) + 1e-12))
    return tuple(items)
