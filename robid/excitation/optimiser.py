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

The problem and result types are in design_problem.py, the objective and limit rows in evaluator.py, the robots
that travel to worker processes in portable.py; this module runs the starts (their old import paths still work).

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
import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from robid import progress
from robid.excitation.centre import workspace_room
from robid.excitation.constraints import check_trajectory
from robid.excitation.criteria import BaseRegressor, evaluate_criteria
from robid.excitation.design_problem import COARSE_POINTS as COARSE_POINTS
from robid.excitation.design_problem import CONSTRAINT_POINTS_PER_HARMONIC as CONSTRAINT_POINTS_PER_HARMONIC
from robid.excitation.design_problem import (
    FLOOR_TOLERANCE,
    IMPROVEMENT,
    TRACK_TOLERANCE,
    DesignProblem,
    DesignResult,
    StartRecord,
)
from robid.excitation.evaluator import _Evaluator, for_many_calls
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.portable import portable_robot as portable_robot
from robid.excitation.starts import screened_starts

_log = logging.getLogger(__name__)

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
    criteria = evaluate_criteria(traj, for_many_calls(base_regressor), problem.grid_points)
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


