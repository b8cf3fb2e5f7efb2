"""A short payload excitation: a Fourier design of a few (wrist) joints, the others held at a pose.

robid's excitation designer (robid.excitation.optimiser.design_excitation: Swevers Fourier series, certified
continuous-time joint limits, multi-start SLSQP) is run on the moving joints only: its "regressor" maps their
states to the full robot's (held joints at the pose, at rest) and returns the payload columns Y_last
(robid.payload.regressor) of the moving joints' rows. The default criterion is D-optimality, log det(Y^T Y / rows)
(robid.excitation.criteria): it grows with the motion's amplitude, i.e. with the payload's torque against the
sensor noise. The condition number of the column-scaled columns, kappa(Y D^-1), is scale-free: on kr_heavy (A3-A6,
10 s, 20 kg, realistic noise) the cond design (kappa 2.9) left A4 and A6 at 0.1-0.15 rad/s and the COM came out
4 mm off (std 1.4 mm); the logdet design (kappa 3.6, all four joints near their limits) 0.9 mm. kappa is reported
for both. Held joints' rows are left out of the criterion: a joint at standstill
carries stiction, not a usable torque (identification leaves those rows out by the same rule, --min-speed).

This is what controllers' load-data routines do (e.g. KUKA's load data determination or ABB's LoadIdentify move
the wrist axes, optionally axis 3, through a short motion). A spherical wrist alone cannot tell the mass from the
first moment along the flange axis: every wrist axis passes through the wrist centre, so gravity and the wrist
motion see m only through m d6 + mz; moving the axis before the wrist as well gives the mass its own lever arm
(``joints`` then includes it).
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.excitation.constraints import JointLimitSet, check_trajectory
from robid.excitation.criteria import CriterionValues, evaluate_criteria
from robid.excitation.fourier import FourierTrajectory, minimum_harmonics
from robid.excitation.optimiser import DesignProblem, design_excitation
from robid.excitation.trajectory_file import TrajectoryFile
from robid.payload.regressor import payload_regressor
from robid.robot import Robot


@dataclass(frozen=True)
class PayloadDesignSettings:
    """What a payload excitation is: moving ``joints`` (0-based) around ``pose`` (rad or m, one value per joint;
    the held joints stay there), ``harmonics`` of a ``period`` (s), rest-to-rest of ``rest_order``, the robot
    file's limits shrunk by ``margin``, ``starts`` optimiser starts from ``seed``, ``criterion`` logdet (default)
    or cond (robid.excitation.criteria.CRITERIA)."""

    joints: tuple[int, ...]
    pose: tuple[float, ...]
    period: float = 12.0
    harmonics: int = 5
    rest_order: int | None = 4
    margin: float = 0.1
    seed: int = 0
    starts: int = 2
    grid_points: int = 150
    max_iterations: int = 60
    criterion: str = "logdet"


@dataclass(frozen=True, eq=False)
class PayloadDesign:
    """The designed trajectory of every joint (held ones with zero coefficients), its criteria on the payload
    columns, the continuous-time limit check, and the trajectory file to write."""

    trajectory: FourierTrajectory
    criteria: CriterionValues
    check_ok: bool
    check_summary: str
    file: TrajectoryFile
    seconds: float


def default_joints(robot: Robot) -> tuple[int, ...]:
    """The wrist: the last three joints (all of them for a robot with three or fewer)."""
    return tuple(range(max(0, robot.dof - 3), robot.dof))


def default_pose(robot: Robot) -> tuple[float, ...]:
    """The middle of every joint's position range (0 where a joint has no finite range)."""
    limits = JointLimitSet.from_model(robot.model).position
    mid = np.where(np.all(np.isfinite(limits), axis=1), limits.mean(axis=1), 0.0)
    return tuple(float(x) for x in mid)


def check_settings(robot: Robot, s: PayloadDesignSettings) -> None:
    """Input errors a user can act on, each naming its field."""
    if not s.joints or len(set(s.joints)) != len(s.joints) or not all(0 <= j < robot.dof for j in s.joints):
        raise RobidOptionError("joints", f"expected distinct joints 1..{robot.dof}, got "
                              f"{[j + 1 for j in s.joints]}")
    if len(s.pose) != robot.dof:
        raise RobidOptionError("pose", f"expected {robot.dof} values (one per joint, rad), got {len(s.pose)}")
    if not s.period > 0:
        raise RobidOptionError("period", f"must be positive seconds, got {s.period:g}")
    if s.rest_order is not None and s.harmonics < minimum_harmonics(s.rest_order):
        raise RobidOptionError("harmonics", f"a rest-to-rest motion needs at least "
                               f"{minimum_harmonics(s.rest_order)} harmonics, got {s.harmonics}")
    if not 0.0 <= s.margin < 0.5:
        raise RobidOptionError("margin", f"a fraction in [0, 0.5), got {s.margin:g}")
    limits = JointLimitSet.from_model(robot.model)
    for j in s.joints:
        for name, arr in (("position", limits.position[j]), ("velocity", limits.velocity[j:j + 1]),
                          ("acceleration", limits.acceleration[j:j + 1])):
            if not np.all(np.isfinite(arr)):
                raise RobidInputError(f"{robot.model.source or robot.name}: joint {robot.joint_names[j]}: limits."
                                      f"{name}: needed to design the payload excitation")
    shrunk = limits.with_margin(s.margin).position
    for j in range(robot.dof):
        lo, hi = shrunk[j]
        if not lo <= s.pose[j] <= hi:
            raise RobidOptionError("pose", f"joint {robot.joint_names[j]}: {s.pose[j]:.6g} rad is outside its "
                                   f"position limits narrowed by the margin [{lo:.6g}, {hi:.6g}]")


def design_payload_excitation(robot: Robot, s: PayloadDesignSettings) -> PayloadDesign:
    """Design the moving joints' Fourier coefficients (module docstring) and embed them in a trajectory of every
    joint; the whole trajectory is checked against the robot file's hard limits in continuous time
    (robid.excitation.constraints.check_trajectory)."""
    check_settings(robot, s)
    t0 = time.perf_counter()
    moving = list(s.joints)
    pose = np.asarray(s.pose, dtype=float)
    full = JointLimitSet.from_model(robot.model)
    sub = JointLimitSet(full.position[moving], full.velocity[moving], full.acceleration[moving],
                        full.jerk[moving], np.full(len(moving), np.inf))

    def columns(q, qd, qdd):
        return payload_regressor(robot, *_embed(q, qd, qdd, moving, pose))[:, moving, :]

    problem = DesignProblem(period=s.period, harmonics=s.harmonics, center=pose[moving], limits=sub,
                            margin=s.margin, rest_order=s.rest_order, criterion=s.criterion,
                            grid_points=s.grid_points, seed=s.seed, starts=s.starts,
                            max_iterations=s.max_iterations,
                            joint_names=tuple(robot.joint_names[j] for j in moving))
    try:
        result = design_excitation(problem, columns)
    except ValueError as exc:
        raise RobidInputError(f"payload design: {exc}") from None
    a = np.zeros((robot.dof, s.harmonics))
    b = np.zeros((robot.dof, s.harmonics))
    a[moving], b[moving] = result.trajectory.a, result.trajectory.b
    traj = FourierTrajectory(s.period, pose, a, b, s.rest_order, tuple(robot.joint_names))
    criteria = evaluate_criteria(traj, lambda q, qd, qdd: payload_regressor(robot, q, qd, qdd)[:, moving, :],
                                 s.grid_points)
    check = check_trajectory(traj, full)
    design = {
        "robot": robot.name,
        "purpose": "payload identification (robid payload design)",
        "moving_joints": [robot.joint_names[j] for j in moving],
        "held_pose": [float(x) for x in pose],
        "criterion": f"{s.criterion} of the payload columns (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) "
                     "of the moving joints' rows",
        "criteria": criteria.to_dict(),
        "seed": s.seed,
        "starts": s.starts,
        "grid_points": s.grid_points,
        "max_iterations": s.max_iterations,
        "check": {"ok": check.ok, "summary": check.summary()},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.platform(),
    }
    tf = TrajectoryFile(traj, full, s.margin, (), design)
    return PayloadDesign(traj, criteria, check.ok, check.summary(), tf, time.perf_counter() - t0)


def _embed(q, qd, qdd, moving: list[int], pose: np.ndarray):
    """Full-robot states of the moving joints' states: held joints at the pose, at rest."""
    n = np.shape(q)[0]
    fq = np.tile(pose, (n, 1))
    fqd = np.zeros_like(fq)
    fqdd = np.zeros_like(fq)
    fq[:, moving], fqd[:, moving], fqdd[:, moving] = q, qd, qdd
    return fq, fqd, fqdd
