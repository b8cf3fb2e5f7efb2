"""The excitation design problem (robid.excitation.optimiser): robot, harmonics, limits, criterion and search
settings (:class:`DesignProblem`), the tuning constants of the search, and what a design returns (:class:`StartRecord`
per start, :class:`DesignResult`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robid.excitation.cartesian import CartesianLimit
from robid.excitation.constraints import CheckReport, JointLimitSet, TorqueFunction
from robid.excitation.criteria import (
    DEFAULT_CRITERION,
    CriterionValues,
)
from robid.excitation.fourier import FourierTrajectory, minimum_harmonics
from robid.excitation.velocity_floor import (
    DEFAULT_MIN_RMS_VELOCITY,
    floor_speeds,
    reachable_speed,
)
from robid.model.robot_model import RobotModel

#: default constraint samples per harmonic: the inter-sample bound M_{k+2} h^2 / 8 then costs about 1-2 % of an
#: acceleration limit (0.4 % at 32 per harmonic, with four times the rows and about twice the SLSQP time)
CONSTRAINT_POINTS_PER_HARMONIC = 16

#: smallest decrease of the objective (log cond, or -logdet) that counts as progress of a start
IMPROVEMENT = 1e-4

#: an iterate whose smallest limit row is above -TRACK_TOLERANCE (rows are relative to their limit) may become
#: the start's result, after being shrunk into the limits
TRACK_TOLERANCE = 1e-3

#: samples of one period on which candidate starting points are ranked
COARSE_POINTS = 64

#: a start's result meets the excitation floor when every floored joint's RMS velocity is >= (1 - this) of its
#: floor (the kept iterate may sit TRACK_TOLERANCE below a row and is then shrunk by about as much)
FLOOR_TOLERANCE = 5e-3


@dataclass(frozen=True, eq=False)
class DesignProblem:
    """Everything the designer needs besides the regressor. ``limits`` are the hard limits (SI)."""

    period: float
    harmonics: int
    center: np.ndarray
    limits: JointLimitSet
    margin: float = 0.05
    rest_order: int | None = 4
    criterion: str = DEFAULT_CRITERION
    raw_weight: float = 1.0  # weight of log cond_raw in the cond_both criterion
    #: excitation floor: every joint's RMS velocity over the period >= this fraction of its reachable speed (its
    #: velocity limit, or less where the position range and acceleration limit allow less in the period;
    #: robid.excitation.velocity_floor; 0: none)
    min_rms_velocity: float = DEFAULT_MIN_RMS_VELOCITY
    grid_points: int = 250
    seed: int = 0
    starts: int = 4
    max_iterations: int = 150
    cartesian: Sequence[CartesianLimit] = ()
    model: RobotModel | None = None
    torque_fn: TorqueFunction | None = None
    joint_names: tuple[str, ...] = ()
    #: 0: every constraint sample is a row of the optimiser; n > 0: the soft minimum of each of n windows of
    #: samples per limit (fewer rows, same limits; robid.excitation.grid_constraints)
    constraint_windows: int = 0
    #: samples of one period on which the limits are imposed (None: CONSTRAINT_POINTS_PER_HARMONIC per harmonic,
    #: at least 64); the inter-sample bound M h^2 / 8 keeps the limits valid between them
    constraint_points: int | None = None
    #: a start stops when its best feasible criterion has not improved for this many iterations (0: never)
    patience: int = 25
    #: candidate starting points per start, ranked on a coarse grid (robid.excitation.starts); 1: no screening
    #: (the default: on the UR10e and payload designs the screened starts ended no better, docs/excitation.md)
    screening: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", np.asarray(self.center, dtype=float).reshape(-1))
        if not 0.0 <= self.min_rms_velocity < 1.0:
            raise ValueError(
                f"min_rms_velocity: a fraction of the reachable speed in [0, 1), got {self.min_rms_velocity}"
            )
        if self.rest_order is not None and self.harmonics < minimum_harmonics(self.rest_order):
            raise ValueError(
                f"rest-to-rest of order {self.rest_order} needs at least {minimum_harmonics(self.rest_order)} harmonics"
            )

    @property
    def dof(self) -> int:
        return self.center.shape[0]

    def constraint_samples(self) -> int:
        if self.constraint_points is not None:
            return int(self.constraint_points)
        return max(64, CONSTRAINT_POINTS_PER_HARMONIC * self.harmonics)

    def reachable_speeds(self) -> np.ndarray:
        """Every joint's reachable speed within the limits narrowed by the margin
        (:func:`robid.excitation.velocity_floor.reachable_speed`)."""
        lim = self.limits.with_margin(self.margin)
        return reachable_speed(lim.position, lim.velocity, lim.acceleration, lim.jerk, self.center, self.period,
                               self.harmonics)

    def floor_speeds(self) -> np.ndarray:
        """The RMS velocity floor of every joint (rad/s or m/s; 0: none): ``min_rms_velocity`` x its reachable
        speed."""
        return floor_speeds(self.min_rms_velocity, self.reachable_speeds())


@dataclass(frozen=True)
class StartRecord:
    index: int
    objective: float
    iterations: int
    evaluations: int
    success: bool
    message: str
    shrink: float  # amplitude factor applied afterwards to restore feasibility (1.0 = none)
    seconds: float  # wall time of the start, where it ran
    cpu_seconds: float = math.nan  # CPU time of the process that ran it, during the start
    floor_met: bool = True  # every joint's RMS velocity reaches its floor (DesignProblem.min_rms_velocity)


@dataclass(frozen=True, eq=False)
class DesignResult:
    trajectory: FourierTrajectory
    criteria: CriterionValues
    check: CheckReport
    starts: tuple[StartRecord, ...]
    best_start: int
    seconds: float
    problem: DesignProblem = field(repr=False)


