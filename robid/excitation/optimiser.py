"""Excitation design: minimise the criterion over the Fourier coefficients under certified limits.

Variables: for every joint the coefficients [a, b] (periodic design) or their coordinates z in the
orthonormal basis N of the rest-to-rest subspace (X_j = N z_j), so the boundary conditions hold exactly for
every iterate. Constraints: :class:`~robid.excitation.constraints.GridConstraints` on ``grid_points`` over one
period (joint limits with their inter-sample bound, Cartesian points, torques), against the limits shrunk by
the safety margin. Objective: log cond or -logdet of the base regressor on the same grid, with the gradient
of :func:`~robid.excitation.criteria.objective_and_gradient` chained through
:func:`~robid.excitation.channels.channel_derivatives` (3 dof + 1 regressor evaluations per gradient).

Multi-start: start s draws random coefficients (harmonic l scaled by 1/l) from ``numpy.random.default_rng
(seed)`` and scales them to 80 % of the largest feasible amplitude; SLSQP (scipy) runs from each; a result
that ends marginally infeasible is pulled towards the centre pose (amplitude bisection) until feasible. The
best feasible start wins. Same inputs and seed give the same trajectory.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from robid import progress
from robid.excitation.cartesian import CartesianLimit
from robid.excitation.channels import channel_derivatives
from robid.excitation.constraints import CheckReport, GridConstraints, JointLimitSet, TorqueFunction, check_trajectory
from robid.excitation.criteria import (
    BaseRegressor,
    CriterionValues,
    criterion_grid,
    evaluate_criteria,
    objective_and_gradient,
    stack,
)
from robid.excitation.fourier import FourierTrajectory, basis, minimum_harmonics, rest_nullspace
from robid.model.robot_model import RobotModel

_log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class DesignProblem:
    """Everything the designer needs besides the regressor. ``limits`` are the hard limits (SI)."""

    period: float
    harmonics: int
    center: np.ndarray
    limits: JointLimitSet
    margin: float = 0.05
    rest_order: int | None = 4
    criterion: str = "cond"
    raw_weight: float = 1.0  # weight of log cond_raw in the cond_both criterion
    grid_points: int = 250
    seed: int = 0
    starts: int = 4
    max_iterations: int = 150
    cartesian: Sequence[CartesianLimit] = ()
    model: RobotModel | None = None
    torque_fn: TorqueFunction | None = None
    joint_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", np.asarray(self.center, dtype=float).reshape(-1))
        if self.rest_order is not None and self.harmonics < minimum_harmonics(self.rest_order):
            raise ValueError(
                f"rest-to-rest of order {self.rest_order} needs at least {minimum_harmonics(self.rest_order)} harmonics"
            )

    @property
    def dof(self) -> int:
        return self.center.shape[0]


@dataclass(frozen=True)
class StartRecord:
    index: int
    objective: float
    iterations: int
    evaluations: int
    success: bool
    message: str
    shrink: float  # amplitude factor applied afterwards to restore feasibility (1.0 = none)
    seconds: float


@dataclass(frozen=True, eq=False)
class DesignResult:
    trajectory: FourierTrajectory
    criteria: CriterionValues
    check: CheckReport
    starts: tuple[StartRecord, ...]
    best_start: int
    seconds: float
    problem: DesignProblem = field(repr=False)


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
            max(p.grid_points, 32 * p.harmonics),
            p.center,
            p.cartesian,
            p.model,
            p.torque_fn,
        )
        self.t = criterion_grid(p.period, p.grid_points)
        self.basis = [basis(self.t, p.period, p.harmonics, k) for k in range(3)]
        self._cache_f: tuple[bytes, float, np.ndarray | None] | None = None
        self._cache_g: tuple[bytes, np.ndarray, np.ndarray] | None = None
        self.evaluations = 0

    def coefficients(self, z: np.ndarray) -> np.ndarray:
        return np.asarray(z, dtype=float).reshape(self.p.dof, self.r) @ self.null.T

    def states(self, x_all: np.ndarray):
        q = self.basis[0] @ x_all.T + self.p.center
        return q, self.basis[1] @ x_all.T, self.basis[2] @ x_all.T

    def objective(self, z: np.ndarray) -> float:
        key = np.asarray(z).tobytes()
        if self._cache_f is not None and self._cache_f[0] == key:
            return self._cache_f[1]
        q, qd, qdd = self.states(self.coefficients(z))
        w3 = np.asarray(self.regressor(q, qd, qdd), dtype=float)
        self.evaluations += 1
        f, _ = objective_and_gradient(stack(w3), self.p.criterion, self.p.raw_weight)
        f = f if math.isfinite(f) else 1e6
        self._cache_f = (key, f, w3)
        return f

    def gradient(self, z: np.ndarray) -> np.ndarray:
        self.objective(z)  # fills the cache with W at z
        w3 = self._cache_f[2]
        q, qd, qdd = self.states(self.coefficients(z))
        _, g = objective_and_gradient(stack(w3), self.p.criterion, self.p.raw_weight)
        g3 = g.reshape(w3.shape)
        grad_x = np.zeros((self.p.dof, 2 * self.p.harmonics))
        for kind, j, dw in channel_derivatives(self.regressor, q, qd, qdd, w3):
            weights = np.einsum("nrc,nrc->n", g3, dw)
            grad_x[j] += self.basis[kind].T @ weights
        self.evaluations += 3 * self.p.dof
        return (grad_x @ self.null).reshape(-1)

    def _constraints(self, z: np.ndarray):
        key = np.asarray(z).tobytes()
        if self._cache_g is None or self._cache_g[0] != key:
            g, jx = self.constraints.evaluate(self.coefficients(z))
            h2 = 2 * self.p.harmonics
            jz = np.hstack([jx[:, j * h2 : (j + 1) * h2] @ self.null for j in range(self.p.dof)])
            self._cache_g = (key, g, jz)
        return self._cache_g

    def constraint_values(self, z: np.ndarray) -> np.ndarray:
        return self._constraints(z)[1]

    def constraint_jacobian(self, z: np.ndarray) -> np.ndarray:
        return self._constraints(z)[2]

    def largest_feasible_scale(self, z: np.ndarray, upper: float = 1.0, steps: int = 40) -> float:
        """Largest alpha in [0, upper] (bisection) with g(alpha z) >= 0; 0 if only the centre pose is feasible."""
        if np.min(self.constraint_values(upper * z), initial=0.0) >= 0.0:
            return upper
        lo, hi = 0.0, upper
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            if np.min(self.constraint_values(mid * z), initial=0.0) >= 0.0:
                lo = mid
            else:
                hi = mid
        return lo


def _random_start(rng: np.random.Generator, ev: _Evaluator) -> np.ndarray:
    p = ev.p
    ls = np.arange(1, p.harmonics + 1, dtype=float)
    x = rng.standard_normal((p.dof, 2 * p.harmonics)) / np.concatenate([ls, ls])
    z = x @ ev.null  # orthogonal projection onto the admissible subspace, in its coordinates
    # grow until infeasible, then bisect: constraints are (almost) homogeneous in the amplitude
    scale = 1.0
    while np.min(ev.constraint_values(scale * z), initial=0.0) >= 0.0 and scale < 1e6:
        scale *= 4.0
    alpha = ev.largest_feasible_scale(z, scale)
    return 0.8 * alpha * z


def design_excitation(problem: DesignProblem, base_regressor: BaseRegressor) -> DesignResult:
    """Run the multi-start optimisation and verify the winner in continuous time (hard limits)."""
    t_start = time.perf_counter()
    ev = _Evaluator(problem, base_regressor)
    if np.min(ev.constraint_values(np.zeros(problem.dof * ev.r)), initial=0.0) < 0.0:
        raise ValueError("the centre pose itself violates a limit (check center, margin, Cartesian and torque limits)")
    rng = np.random.default_rng(problem.seed)
    records: list[StartRecord] = []
    best: tuple[float, np.ndarray, int] | None = None
    best_value = [math.inf]  # for the progress line (the callback must not close over ``best``)
    last_print = [0.0]
    with progress.bar(problem.starts, "design: starts", "starts") as bar:
        for s in range(problem.starts):
            t0 = time.perf_counter()
            res, z, f, shrink, n_eval0 = _one_start(problem, ev, rng, s, bar, best_value, last_print)
            records.append(
                StartRecord(
                    s,
                    f,
                    int(res.nit),
                    ev.evaluations - n_eval0,
                    bool(res.success),
                    str(res.message),
                    shrink,
                    time.perf_counter() - t0,
                )
            )
            _log.info(
                f"design: start {s + 1}/{problem.starts} done: {problem.criterion} "
                f"{_display(f, problem.criterion):.4g} ({res.nit} iterations, {time.perf_counter() - t0:.1f} s)"
            )
            if best is None or f < best[0]:
                best = (f, z.copy(), s)
                best_value[0] = f
            bar.note(f"best {problem.criterion} {_display(best_value[0], problem.criterion):.4g}")
            bar.update()

    assert best is not None
    x = ev.coefficients(best[1])
    h = problem.harmonics
    names = problem.joint_names or tuple(f"q{j + 1}" for j in range(problem.dof))
    traj = FourierTrajectory(problem.period, problem.center, x[:, :h], x[:, h:], problem.rest_order, tuple(names))
    traj = traj.project_rest()
    criteria = evaluate_criteria(traj, base_regressor, problem.grid_points)
    check = check_trajectory(traj, problem.limits, problem.cartesian, problem.model, problem.torque_fn)
    return DesignResult(traj, criteria, check, tuple(records), best[2], time.perf_counter() - t_start, problem)


def _one_start(problem: DesignProblem, ev: _Evaluator, rng, s: int, bar, best_value: list, last_print: list):
    """Start ``s``: SLSQP from a random feasible point, the start kept if SLSQP made it worse, shrunk into the
    limits if it left them. A line about every second while it runs (DEBUG when a bar shows it).
    (scipy result, coefficients, objective, shrink factor, evaluation count before it)."""
    z0 = _random_start(rng, ev)
    iteration = [0]

    def callback(zk):
        iteration[0] += 1
        now = time.perf_counter()
        level = logging.DEBUG if bar.enabled else logging.INFO
        if now - last_print[0] > 1.0 and (bar.enabled or _log.isEnabledFor(level)):
            last_print[0] = now
            current = f"{problem.criterion} {_display(ev.objective(zk), problem.criterion):.4g}"
            best_txt = "" if s == 0 else f", best {_display(best_value[0], problem.criterion):.4g}"
            bar.note(f"start {s + 1}: iteration {iteration[0]}, {current}{best_txt}")
            _log.log(
                level,
                f"design: start {s + 1}/{problem.starts}, iteration {iteration[0]}, {current}{best_txt}",
            )

    n_eval0 = ev.evaluations
    res = scipy.optimize.minimize(
        ev.objective,
        z0.reshape(-1),
        jac=ev.gradient,
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": ev.constraint_values, "jac": ev.constraint_jacobian}],
        options={"maxiter": problem.max_iterations, "ftol": 1e-7},
        callback=callback,
    )
    z = np.asarray(res.x, dtype=float)
    f = ev.objective(z)
    if not math.isfinite(f) or f > ev.objective(z0.reshape(-1)):
        z, f, shrink = z0.reshape(-1), ev.objective(z0.reshape(-1)), 1.0
    else:
        shrink = ev.largest_feasible_scale(z)
        if shrink < 1.0:
            z = shrink * z
            f = ev.objective(z)
    return res, z, f, shrink, n_eval0


def _display(objective: float, criterion: str) -> float:
    """Objective -> the number users know (cond, or logdet)."""
    if criterion.startswith("cond"):
        return math.exp(objective) if objective < 700 else math.inf  # cond_both: the weighted product
    return -objective
