"""Excitation design: minimise the criterion over the Fourier coefficients under certified limits.

Variables: for every joint the coefficients [a, b] (periodic design) or their coordinates z in the
orthonormal basis N of the rest-to-rest subspace (X_j = N z_j), so the boundary conditions hold exactly for
every iterate. Constraints: :class:`~robid.excitation.grid_constraints.GridConstraints` on
``constraint_points`` samples of one period (16 per harmonic by default: joint limits with their inter-sample
bound, Cartesian points, torques), against the limits shrunk by the safety margin. Objective: log cond (default
``cond``: log kappa(W D^-1); ``cond_both`` adds raw_weight log kappa(W)) or -logdet of the base regressor on
``grid_points`` samples, with the analytic gradient of :func:`~robid.excitation.criteria.objective_and_gradient`
chained through :func:`~robid.excitation.channels.channel_derivatives` (5 dof + 1 regressor evaluations per
gradient).

Multi-start: the starting points are random normal directions (optionally the best ``starts`` of ``starts *
screening`` candidates ranked on a coarse grid, :mod:`robid.excitation.starts`), each scaled to 80 % of its
largest feasible amplitude;
SLSQP (scipy) runs from each, keeps its best iterate near the limits and stops after ``patience`` iterations
without progress; the kept point is pulled towards the centre pose (amplitude bisection) until feasible. The
best start wins (ties: the lower start index). Same inputs and seed give the same trajectory.

Parallel starts: all starting points are drawn in the calling process first (the same sequence as the serial
loop), so each start depends only on (seed, start index); ``map_starts(fn, items)`` (argument of
:func:`design_excitation`, or set for a block with :func:`start_map`) then runs the starts, e.g. on Dask workers
(``robid design --workers N``). :func:`run_start` is the picklable unit of work; compiled robid regressors do not
pickle, so :func:`portable_robot` wraps a robot whose methods travel as (model, terms) and are rebuilt once per
worker process from the shared derivation cache. Same result, bit for bit, as the serial loop.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import logging
import math
import pickle
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from robid import progress
from robid.excitation.cartesian import CartesianLimit
from robid.excitation.centre import workspace_room
from robid.excitation.channels import channel_derivatives
from robid.excitation.constraints import CheckReport, JointLimitSet, TorqueFunction, check_trajectory
from robid.excitation.criteria import (
    DEFAULT_CRITERION,
    BaseRegressor,
    CriterionValues,
    criterion_grid,
    evaluate_criteria,
    objective_and_gradient,
    objective_value,
    stack,
)
from robid.excitation.fourier import FourierTrajectory, basis, minimum_harmonics, rest_nullspace
from robid.excitation.grid_constraints import GridConstraints
from robid.excitation.starts import largest_feasible_scale, screened_starts
from robid.excitation.velocity_floor import (
    DEFAULT_MIN_RMS_VELOCITY,
    VelocityFloor,
    floor_speeds,
    lift_to_floor,
    reachable_speed,
)
from robid.model.robot_model import RobotModel

_log = logging.getLogger(__name__)

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


def _passive_joints(p: DesignProblem):
    """The closed chain's passive joints with limits, narrowed by the margin (None for a serial robot)."""
    from robid.excitation.passive_limits import PassiveJoints

    passive = PassiveJoints.from_model(p.model) if p.model is not None else None
    return passive.with_margin(p.margin) if passive is not None else None


class _Evaluator:
    """Objective and constraints in the reduced variables z (dof, r), with caching between calls."""

    def __init__(self, problem: DesignProblem, base_regressor: BaseRegressor):
        p = problem
        self.p = p
        self.regressor = base_regressor
        h2 = 2 * p.harmonics
        self.null = rest_nullspace(p.harmonics, p.rest_order) if p.rest_order is not None else np.eye(h2)
        self.r = self.null.shape[1]
        self.constraints = GridConstraints(
            p.limits.with_margin(p.margin),
            p.period,
            p.harmonics,
            p.constraint_samples(),
            p.center,
            p.cartesian,
            p.model,
            p.torque_fn,
            passive=_passive_joints(p),
        )
        self.floor = VelocityFloor(p.floor_speeds())
        self.t = criterion_grid(p.period, p.grid_points)
        self.basis = [basis(self.t, p.period, p.harmonics, k) for k in range(3)]
        t_coarse = criterion_grid(p.period, min(p.grid_points, COARSE_POINTS))
        self._coarse = [basis(t_coarse, p.period, p.harmonics, k) for k in range(3)]
        self.windows = p.constraint_windows if p.constraint_windows > 0 else None  # None: every sample a row
        self._cache_f: tuple[bytes, float, np.ndarray, np.ndarray] | None = None
        self._cache_g: tuple[bytes, np.ndarray, np.ndarray] | None = None
        self.evaluations = 0

    def coefficients(self, z: np.ndarray) -> np.ndarray:
        return np.asarray(z, dtype=float).reshape(self.p.dof, self.r) @ self.null.T

    def states(self, x_all: np.ndarray):
        q = self.basis[0] @ x_all.T + self.p.center
        return q, self.basis[1] @ x_all.T, self.basis[2] @ x_all.T

    def _criterion(self, z: np.ndarray, with_gradient: bool) -> tuple[float, np.ndarray, np.ndarray | None]:
        """(f, W as (N, dof, nb), df/dW or None) at z, kept for the gradient at the same point."""
        key = np.asarray(z).tobytes()
        if self._cache_f is None or self._cache_f[0] != key:
            q, qd, qdd = self.states(self.coefficients(z))
            w3 = np.asarray(self.regressor(q, qd, qdd), dtype=float)
            self.evaluations += 1
            f = objective_value(stack(w3), self.p.criterion, self.p.raw_weight)
            self._cache_f = (key, f if math.isfinite(f) else 1e6, w3, None)
        key, f, w3, g = self._cache_f
        if with_gradient and g is None:
            f_again, g = objective_and_gradient(stack(w3), self.p.criterion, self.p.raw_weight)
            if not math.isfinite(f_again):
                g = np.zeros_like(g)
            self._cache_f = (key, f, w3, g)
        return f, w3, g

    def objective(self, z: np.ndarray) -> float:
        return self._criterion(z, False)[0]

    def gradient(self, z: np.ndarray) -> np.ndarray:
        """df/dz: the criterion's analytic gradient in W (:func:`objective_and_gradient`: singular pairs of the
        Gram matrix, d sigma = u^T dW v) chained through the joint channels (:func:`channel_derivatives`) and the
        Fourier basis to the coefficients, then to the rest-to-rest coordinates z."""
        _, w3, g = self._criterion(z, True)
        q, qd, qdd = self.states(self.coefficients(z))
        g3 = g.reshape(w3.shape)
        grad_x = np.zeros((self.p.dof, 2 * self.p.harmonics))
        for kind, j, dw in channel_derivatives(self.regressor, q, qd, qdd, w3):
            weights = np.einsum("nrc,nrc->n", g3, dw)
            grad_x[j] += self.basis[kind].T @ weights
        self.evaluations += 5 * self.p.dof
        return (grad_x @ self.null).reshape(-1)

    def _constraints(self, z: np.ndarray):
        """(key, rows, Jacobian): the limit rows, then the excitation floor's rows."""
        key = np.asarray(z).tobytes()
        if self._cache_g is None or self._cache_g[0] != key:
            x_all = self.coefficients(z)
            g, jz = self.constraints.evaluate_windows(x_all, self.windows, self.null)
            if self.floor.rows:
                g = np.concatenate([g, self.floor.values(x_all)])
                jz = np.vstack([jz, self.floor.jacobian(x_all, self.null)])
            self._cache_g = (key, g, jz)
        return self._cache_g

    def constraint_values(self, z: np.ndarray) -> np.ndarray:
        """The optimiser's rows at z, limits then floor (line searches need no Jacobian: it is computed only when
        asked for)."""
        key = np.asarray(z).tobytes()
        if self._cache_g is not None and self._cache_g[0] == key:
            return self._cache_g[1]
        if self.windows is not None:
            return self._constraints(z)[1]
        x_all = self.coefficients(z)
        g = self.constraints.values(x_all)
        return np.concatenate([g, self.floor.values(x_all)]) if self.floor.rows else g

    def constraint_jacobian(self, z: np.ndarray) -> np.ndarray:
        return self._constraints(z)[2]

    def feasible(self, z: np.ndarray) -> bool:
        """Every certified limit row >= 0 at z (all samples; the excitation floor is not a limit: see
        :meth:`floor_met`)."""
        return bool(np.min(self.constraints.values(self.coefficients(z)), initial=0.0) >= 0.0)

    def floor_met(self, z: np.ndarray, tolerance: float = 0.0) -> bool:
        """Every floored joint's RMS velocity >= (1 - tolerance) of its floor at z."""
        return self.floor.met(self.coefficients(z), tolerance)

    def lift_to_floor(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A starting point z raised onto the excitation floor within the limits
        (:func:`robid.excitation.velocity_floor.lift_to_floor`)."""
        z = np.array(z, dtype=float).reshape(self.p.dof, self.r)
        return lift_to_floor(z, self.floor, self.coefficients, self.feasible, self.null, self.p.harmonics, rng)

    def largest_feasible_scale(self, z: np.ndarray) -> float:
        """Largest alpha in [0, 1] (bisection) with z scaled by alpha feasible; 0 if only the centre pose is."""
        return largest_feasible_scale(self.feasible, z, upper=1.0)

    def coarse_objective(self, z: np.ndarray) -> float:
        """The criterion on the coarse screening grid (:data:`COARSE_POINTS` samples of one period)."""
        x_all = self.coefficients(z)
        q = self._coarse[0] @ x_all.T + self.p.center
        w3 = np.asarray(self.regressor(q, self._coarse[1] @ x_all.T, self._coarse[2] @ x_all.T), dtype=float)
        return objective_value(stack(w3), self.p.criterion, self.p.raw_weight)


#: ``map_starts(fn, items)`` -> the results of ``fn`` over ``items``, in the order of ``items`` (may be lazy)
StartMap = Callable[[Callable, Sequence], Iterable]
_START_MAP: contextvars.ContextVar[StartMap | None] = contextvars.ContextVar("robid_start_map", default=None)


@contextlib.contextmanager
def start_map(map_starts: StartMap | None) -> Iterator[None]:
    """Within the block, :func:`design_excitation` runs its starts through ``map_starts`` (None: serially)."""
    token = _START_MAP.set(map_starts)
    try:
        yield
    finally:
        _START_MAP.reset(token)


@dataclass(frozen=True)
class StartOutcome:
    """What one start sends back: its record and its final reduced coefficients z."""

    record: StartRecord
    z: np.ndarray


def initial_points(problem: DesignProblem, ev: _Evaluator) -> list[np.ndarray]:
    """The feasible starting points of all starts (:func:`robid.excitation.starts.screened_starts`: ``starts *
    screening`` random candidates from ``default_rng(seed)``, the best ``starts`` on a coarse grid when
    screening > 1), as flat z vectors."""
    rng = np.random.default_rng(problem.seed)
    points, _ = screened_starts(
        rng,
        problem.starts,
        problem.starts * max(1, problem.screening),
        ev.null,
        problem.dof,
        problem.harmonics,
        ev.feasible,
        ev.coarse_objective,
        lift=(lambda z, i: ev.lift_to_floor(z, np.random.default_rng([problem.seed, i]))) if ev.floor.rows else None,
    )
    return [z.reshape(-1) for z in points]


def run_start(problem: DesignProblem, base_regressor: BaseRegressor, s: int, z0: np.ndarray) -> StartOutcome:
    """Start ``s`` from ``z0`` with a fresh evaluator: the unit of work of a parallel design (module level, so
    that it pickles; ``base_regressor`` must pickle too, see :func:`portable_robot`)."""
    return _timed_start(problem, _Evaluator(problem, base_regressor), s, z0, _NoBar(), [math.inf], [0.0])


class _NoBar:
    enabled = False

    def note(self, text: str) -> None:
        pass


def _start_task(item: tuple) -> StartOutcome:
    return run_start(*item)


def design_excitation(
    problem: DesignProblem, base_regressor: BaseRegressor, map_starts: StartMap | None = None
) -> DesignResult:
    """Run the multi-start optimisation and verify the winner in continuous time (hard limits).

    ``map_starts(fn, items)`` runs the starts (default: the one set by :func:`start_map`, else serially in this
    process with a shared evaluator); every start's initial point is drawn here first, so the result does not
    depend on where or in which order the starts run."""
    t_start = time.perf_counter()
    ev = _Evaluator(problem, base_regressor)
    if not ev.feasible(np.zeros(problem.dof * ev.r)):
        raise ValueError(centre_violations(problem))
    z0s = initial_points(problem, ev)
    if map_starts is None:
        map_starts = _START_MAP.get()
    records: list[StartRecord] = []
    best: tuple[float, np.ndarray, int] | None = None
    closest: tuple[float, np.ndarray] | None = None  # (smallest RMS velocity / floor, z) of the best start at it
    best_value = [math.inf]  # for the progress line (the callback must not close over ``best``)
    last_print = [0.0]
    with progress.bar(problem.starts, "design: starts", "starts") as bar:
        if map_starts is None:
            outcomes: Iterable[StartOutcome] = (
                _timed_start(problem, ev, s, z0s[s], bar, best_value, last_print) for s in range(problem.starts)
            )
        else:
            outcomes = map_starts(_start_task, [(problem, base_regressor, s, z0s[s]) for s in range(problem.starts)])
        for s, outcome in enumerate(outcomes):
            rec, z, f = outcome.record, outcome.z, outcome.record.objective
            assert rec.index == s
            records.append(rec)
            _log.info(
                f"design: start {s + 1}/{problem.starts} done: {problem.criterion} "
                f"{_display(f, problem.criterion):.4g} ({rec.iterations} iterations, {rec.seconds:.1f} s)"
            )
            closest = _closest_to_floor(ev, z, closest)
            if rec.floor_met and (best is None or f < best[0]):
                best = (f, z.copy(), s)
                best_value[0] = f
            bar.note(f"best {problem.criterion} {_display(best_value[0], problem.criterion):.4g}")
            bar.update()

    assert len(records) == problem.starts
    if best is None:
        names = problem.joint_names or tuple(f"q{j + 1}" for j in range(problem.dof))
        raise FloorMissed(ev.floor.missed(ev.coefficients(closest[1]), names, problem.min_rms_velocity, len(records))
                          + workspace_room(problem), closest[0])
    x = ev.coefficients(best[1])
    h = problem.harmonics
    names = problem.joint_names or tuple(f"q{j + 1}" for j in range(problem.dof))
    traj = FourierTrajectory(problem.period, problem.center, x[:, :h], x[:, h:], problem.rest_order, tuple(names))
    traj = traj.project_rest()
    criteria = evaluate_criteria(traj, base_regressor, problem.grid_points)
    check = check_trajectory(traj, problem.limits, problem.cartesian, problem.model, problem.torque_fn)
    return DesignResult(traj, criteria, check, tuple(records), best[2], time.perf_counter() - t_start, problem)


class FloorMissed(ValueError):
    """No start reached the excitation floor; ``reached``: the smallest RMS velocity / floor of the start that
    came closest (robid.excitation.design relaxes the floor to what it reached, with a note)."""

    def __init__(self, message: str, reached: float):
        super().__init__(message)
        self.reached = float(reached)


def centre_violations(problem: DesignProblem) -> str:
    """The one-line error when the centre pose at rest violates a limit the designer works in (narrowed by the
    margin), naming each: a position outside its range, a Cartesian point outside its half-spaces, a holding
    torque above its limit."""
    still = FourierTrajectory(problem.period, problem.center, np.zeros((problem.dof, 1)), np.zeros((problem.dof, 1)))
    limits = problem.limits.with_margin(problem.margin)
    check = check_trajectory(still, limits, problem.cartesian, problem.model, problem.torque_fn)
    worst: dict = {}  # one per limit and name (a capsule's two ends against a plane are one pair)
    for item in sorted(check.violations(), key=lambda i: i.sampled_slack):
        worst.setdefault((item.quantity, item.name), item)
    failing = [f"{item.quantity} of {item.name} (limit {_limit_text(item.limit)}, at rest {item.value:.4g})"
               for item in worst.values()]
    what = ", ".join(failing) if failing else "a limit row at rest"
    return (f"the centre pose itself violates {what} (within the limits narrowed by margin {problem.margin:g}): "
            "move center, or relax that limit")


def _limit_text(limit) -> str:
    return f"[{limit[0]:.4g}, {limit[1]:.4g}]" if isinstance(limit, tuple) else f"{limit:.4g}"


def _closest_to_floor(ev: _Evaluator, z: np.ndarray, closest):
    """(min_j RMS velocity_j / floor_j, z) of whichever of ``z`` and ``closest`` comes nearer the floor."""
    ratio = ev.floor.worst_ratio(ev.coefficients(z))
    return (ratio, z) if closest is None or ratio > closest[0] else closest


def _timed_start(problem: DesignProblem, ev: _Evaluator, s: int, z0: np.ndarray, bar, best_value: list,
                 last_print: list) -> StartOutcome:
    t0, c0 = time.perf_counter(), time.process_time()
    res, z, f, shrink, n_eval0 = _one_start(problem, ev, z0, s, bar, best_value, last_print)
    record = StartRecord(
        s,
        f,
        int(res.nit),
        ev.evaluations - n_eval0,
        bool(res.success),
        str(res.message),
        shrink,
        time.perf_counter() - t0,
        time.process_time() - c0,
        ev.floor_met(z, FLOOR_TOLERANCE),
    )
    return StartOutcome(record, z)


def _one_start(problem: DesignProblem, ev: _Evaluator, z0: np.ndarray, s: int, bar, best_value: list,
               last_print: list):
    """Start ``s``: SLSQP from the feasible point ``z0``. SLSQP's iterates do not decrease the criterion
    monotonically (its merit function weighs limit violations, and log cond is not smooth where the extreme
    singular values cross), so the best iterate within ``TRACK_TOLERANCE`` of the limits is kept (and shrunk into
    them at the end, amplitude bisection), and the start stops once that has not improved by ``IMPROVEMENT`` for
    ``problem.patience`` iterations. The start point is kept if nothing beat it. A start point below the
    excitation floor (robid.excitation.velocity_floor: it is drawn against the limits only) is not a candidate:
    SLSQP first moves out of it (its rows are linearised like the limits'), and patience counts from the first
    iterate that meets every row. A line about every second while it runs (DEBUG when a bar shows it).
    (scipy result, coefficients, objective, shrink factor, evaluation count before it)."""
    iteration = [0]
    z_start = z0.reshape(-1)
    start_ok = ev.floor_met(z_start)
    best = [ev.objective(z_start) if start_ok else math.inf, z_start, 0]  # objective, point, iteration

    def callback(zk):
        iteration[0] += 1
        f_k = ev.objective(zk)  # cached: SLSQP has just evaluated the new iterate
        if f_k < best[0] - IMPROVEMENT and np.min(ev.constraint_values(zk), initial=0.0) >= -TRACK_TOLERANCE:
            best[:] = [f_k, np.array(zk, dtype=float), iteration[0]]
        now = time.perf_counter()
        level = logging.DEBUG if bar.enabled else logging.INFO
        if now - last_print[0] > 1.0 and (bar.enabled or _log.isEnabledFor(level)):
            last_print[0] = now
            current = f"{problem.criterion} {_display(f_k, problem.criterion):.4g}"
            best_txt = "" if s == 0 else f", best {_display(best_value[0], problem.criterion):.4g}"
            bar.note(f"start {s + 1}: iteration {iteration[0]}, {current}{best_txt}")
            _log.log(
                level,
                f"design: start {s + 1}/{problem.starts}, iteration {iteration[0]}, {current}{best_txt}",
            )
        if problem.patience and math.isfinite(best[0]) and iteration[0] - best[2] >= problem.patience:
            raise StopIteration  # scipy ends the run and returns the current iterate

    n_eval0 = ev.evaluations
    res = scipy.optimize.minimize(
        ev.objective,
        z_start,
        jac=ev.gradient,
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": ev.constraint_values, "jac": ev.constraint_jacobian}],
        options={"maxiter": problem.max_iterations, "ftol": 1e-7},
        callback=callback,
    )
    z = np.asarray(res.x, dtype=float)
    if not (ev.objective(z) < best[0] and np.min(ev.constraint_values(z), initial=0.0) >= -TRACK_TOLERANCE):
        z = best[1]
    shrink = ev.largest_feasible_scale(z)
    z = shrink * z if shrink < 1.0 else z
    f = ev.objective(z)
    if start_ok and not (math.isfinite(f) and f <= ev.objective(z_start)):
        z, f, shrink = z_start, ev.objective(z_start), 1.0
    return res, z, f, shrink, n_eval0


def _display(objective: float, criterion: str) -> float:
    """Objective -> the number users know (cond, or logdet)."""
    if criterion.startswith("cond"):
        return math.exp(objective) if objective < 700 else math.inf  # cond_both: the weighted product
    return -objective


# ---- robots whose regressors travel to other processes ---------------------------------------------------------------
#: per process: hash of (model, terms) -> robid.robot.Robot rebuilt from the derivation cache
_REBUILT: dict[str, object] = {}


class _RobotMethod:
    """Picklable stand-in for ``Robot.inverse_dynamics`` or ``Robot.base_parameters().regressor``: pickles as
    (model, terms); after unpickling the robot is rebuilt on first call (once per process: the derivation cache is
    shared and locked, so a robot type derives at most once). Same compiled code, so the same numbers."""

    def __init__(self, model: RobotModel, terms: tuple[str, ...], kind: str, fn: Callable | None = None):
        self.model, self.terms, self.kind = model, tuple(terms), kind
        self._fn = fn

    def __getstate__(self) -> dict:
        return {"model": self.model, "terms": self.terms, "kind": self.kind, "_fn": None}

    def __call__(self, *args, **kwargs):
        if self._fn is None:
            from robid.robot import Robot

            key = hashlib.sha256(pickle.dumps((self.model, self.terms))).hexdigest()  # nominal values included
            robot = _REBUILT.get(key)
            if robot is None:
                robot = _REBUILT[key] = Robot(self.model, self.terms)
            self._fn = robot.base_parameters().regressor if self.kind == "base_regressor" else robot.inverse_dynamics
        return self._fn(*args, **kwargs)


class _PortableBase:
    def __init__(self, base, regressor: _RobotMethod):
        self.names = list(getattr(base, "names", []))
        self.regressor = regressor


class _PortableRobot:
    """The parts of a robot that :func:`robid.excitation.design.design_from_spec` uses, picklable."""

    def __init__(self, robot):
        self.model = robot.model
        base = robot.base_parameters()
        self._base = _PortableBase(base, _RobotMethod(robot.model, robot.terms, "base_regressor", base.regressor))
        self.inverse_dynamics = _RobotMethod(robot.model, robot.terms, "inverse_dynamics", robot.inverse_dynamics)

    def base_parameters(self) -> _PortableBase:
        return self._base


def portable_robot(robot):
    """``robot`` itself when its base regressor and inverse dynamics pickle (e.g. a pure-Python stand-in), else a
    wrapper for a :class:`robid.robot.Robot` (compiled code) whose methods are rebuilt where they are unpickled."""
    try:
        pickle.dumps((robot.model, robot.base_parameters().regressor, getattr(robot, "inverse_dynamics", None)))
        return robot
    except Exception:  # ctypes handles of the compiled backend, generated modules
        if not hasattr(robot, "terms"):
            raise
        return _PortableRobot(robot)
