"""Nonlinear refinement of a compensator's geometry by variable projection, with a separability check
(docs/compensator.md, section 5).

Arrays only: the caller passes the stacked regressor ``W`` (N, dof, nb), the torque ``tau`` (N, dof), the
parameter names and a function that evaluates the linear compensator parameter's regressor column for a given
geometry (robid.identification.compensator_analysis builds it for a gas cylinder from robid.model.compensator).

A gas cylinder's column ``A (v0 / (v0 - A (l - l0)))^n dl/dq`` (:func:`robid.estimation.compensator.gas.
gas_cylinder_column`) is linear in the pressure p0 but not in the exponent n or the lengths/volumes. Around the
linear solution the free geometry parameters phi are refined by variable projection: for a given phi the linear
parameters (p0 and all others) are the weighted least-squares solution ``beta(phi)``, and
``scipy.optimize.least_squares`` minimises ``|| diag(w) (W(phi) beta(phi) - tau) ||^2`` over phi (bounded).
Geometries that the caller's ``feasible`` predicate rejects (a gas volume that is not positive at some recorded
length) get a finite penalty residual, so the optimiser turns back without evaluating the column there.

Whether the data separate phi from p0 and the rest is checked at the optimum from the full Jacobian
``J = [A(phi), beta_c dA_c/dphi]`` of the weighted residual: its numerical rank and scaled condition number,
and the standard deviations ``Cov = (J^T J)^-1 J^T diag(s_j^2 kappa_j) J (J^T J)^-1``, ``s_j^2`` the residual
variance of joint j and ``kappa_j`` its inflation for serial correlation (:func:`serial_inflation`). Each free
parameter is "separable" when J has full rank, its condition number is below ``condition_threshold``, the
relative standard deviation is below ``relative_std_threshold`` and the optimum is neither on a bound nor on
the edge of the physical region (where the Jacobian is taken one-sided); otherwise "not separable". The refined
geometry is adopted only when every free parameter is separable; else the linear solution with the start
geometry is kept, and the notes say so -- never silently. Note the structural redundancy of the gas law:
``p(l) = p0 v0^n / (V - A l)^n`` with ``V = v0 + A l0``, so p0, l0 and v0 enter only through ``p0 v0^n`` and
``V``: l0 and v0 can never both be freed (rank deficient, reported not separable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.defaults import WLS
from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.compensator._numbers import finite_or_none as _num
from robid.estimation.estimators import estimate
from robid.estimation.results import EstimationResult
from robid.estimation.statistics import correlation_matrix

Geometry = Mapping[str, float]


@dataclass(frozen=True)
class NonlinearParameter:
    name: str
    start: float
    value: float
    std: float
    bounds: tuple[float, float]
    at_bound: bool
    separable: bool
    reason: str  # why not separable ("" when separable)

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "start": _num(self.start),
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "bounds": [_num(self.bounds[0]), _num(self.bounds[1])],
            "at_bound": self.at_bound,
            "class": "separable" if self.separable else "not separable",
            "reason": self.reason,
        }


@dataclass(frozen=True, eq=False)
class NonlinearRefinement:
    """Outcome of :func:`refine_nonlinear_compensator`."""

    compensator: str
    parameters: tuple[NonlinearParameter, ...]
    classification: str  # "separable" | "not separable"
    adopted: bool
    names: tuple[str, ...]
    linear: EstimationResult  # linear estimate with the start geometry
    values: np.ndarray  # adopted linear parameters (refined when adopted, else linear.values)
    refined_values: np.ndarray  # linear parameters at the optimum of phi, whatever the class
    geometry: dict[str, float]  # adopted geometry (refined when adopted, else start)
    optimum: dict[str, float]  # phi at the optimum, whatever the class
    cost_start: float  # weighted residual sum of squares at the start geometry
    cost_refined: float
    jacobian_rank: int
    jacobian_columns: int
    jacobian_condition: float  # of the column-scaled Jacobian
    correlations: dict[str, tuple[str, float]]  # strongest correlation of each free parameter with another
    notes: tuple[str, ...]

    def parameter(self, name: str) -> NonlinearParameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {
            "compensator": self.compensator,
            "class": self.classification,
            "adopted": self.adopted,
            "parameters": [p.to_dict() for p in self.parameters],
            "geometry": {k: _num(v) for k, v in self.geometry.items()},
            "optimum": {k: _num(v) for k, v in self.optimum.items()},
            "linear_value": _num(self.linear.values[self.names.index(self.compensator)]),
            "refined_value": _num(self.refined_values[self.names.index(self.compensator)]),
            "cost_start": _num(self.cost_start),
            "cost_refined": _num(self.cost_refined),
            "jacobian_rank": self.jacobian_rank,
            "jacobian_columns": self.jacobian_columns,
            "jacobian_condition": _num(self.jacobian_condition),
            "correlations": {k: {"with": n, "correlation": _num(r)} for k, (n, r) in self.correlations.items()},
            "notes": list(self.notes),
        }


def refine_nonlinear_compensator(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str],
    compensator: str,
    column: Callable[[Geometry], np.ndarray],
    start: Geometry,
    free: Sequence[str],
    *,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    joint_weights: np.ndarray | None = None,
    relative_std_threshold: float = 10.0,
    condition_threshold: float = 1e6,
    serial_correlation: bool = True,
    max_nfev: int = 200,
    feasible: Callable[[Geometry], bool] | None = None,
) -> NonlinearRefinement:
    """Refine geometry/exponent parameters of a compensator whose column is nonlinear in them (module docstring).

    ``column(geometry)`` returns the (N, dof) regressor column of the linear parameter ``compensator`` (e.g.
    ``comp_p0_A2``) for a full geometry dict (``start`` with the free entries replaced), filtered exactly like
    ``W``. ``W`` holds that column at the start geometry (only its other columns are used). ``joint_weights``
    (1/sigma_j) default to those of a WLS fit at the start geometry. ``bounds`` ({name: (lo, hi)}) default to
    +-50 % around the start value. ``feasible(geometry)`` says whether a geometry inside the bounds is physical
    (e.g. :func:`robid.estimation.compensator.gas.gas_volume_positive`); the objective is a finite penalty where it
    is not. Without it, every geometry inside the bounds must give a column. ``serial_correlation``: inflate each
    joint's residual variance by :func:`serial_inflation` (needed for low-passed, non-periodic data, whose samples
    are not independent; about 1 for white residuals).
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    free, start = _checked_request(names, compensator, free, start)
    c = names.index(compensator)
    W0, linear = _linear_start(W, tau, names, c, column, start)
    weights = linear.weights if joint_weights is None else np.asarray(joint_weights, dtype=float)
    x_scale = np.array([abs(start[f]) if start[f] != 0 else 1.0 for f in free])
    lo, hi = _box(free, start, x_scale, bounds)
    problem = _Projection(W0, tau, weights, c, column, start, free, x_scale, feasible)
    x0 = np.array([start[f] for f in free]) / x_scale
    sol, cost_start, beta, r, cost = _least_squares(problem, x0, lo / x_scale, hi / x_scale, max_nfev)
    fit = _separability(problem, sol.x, beta, r, serial_correlation)
    phi = sol.x * x_scale
    params, corr = _classify(free, start, phi, (lo, hi), fit, list(names) + list(free), W.shape[2],
                             relative_std_threshold, condition_threshold)
    separable = all(pp.separable for pp in params)
    notes = [
        f"nonlinear refinement of {', '.join(free)} for {compensator}: variable projection (scipy least_squares, "
        f"{sol.nfev} evaluations, status {sol.status}); weighted residual sum of squares {cost_start:.6g} at the "
        f"start geometry, {cost:.6g} at the optimum",
        *_verdict_notes(params, start, fit.kappa if serial_correlation else None),
    ]
    values, geom = (beta, problem.geometry(sol.x)) if separable else (np.array(linear.values), dict(start))
    return NonlinearRefinement(
        compensator=compensator, parameters=tuple(params),
        classification="separable" if separable else "not separable", adopted=separable, names=tuple(names),
        linear=linear, values=np.asarray(values, dtype=float), refined_values=np.asarray(beta, dtype=float),
        geometry=geom, optimum={f: float(v) for f, v in zip(free, phi, strict=True)}, cost_start=cost_start,
        cost_refined=cost, jacobian_rank=fit.rank, jacobian_columns=fit.columns, jacobian_condition=fit.condition,
        correlations=corr, notes=tuple(notes),
    )


def _least_squares(problem: _Projection, x0: np.ndarray, lo: np.ndarray, hi: np.ndarray, max_nfev: int):
    """(solution, weighted cost at ``x0``, linear coefficients and residual at the optimum, cost there): scipy's
    trust-region least squares on the projected residual, in the scaled coordinates, within (lo, hi)."""
    from scipy.optimize import least_squares

    cost_start = float(np.sum(problem.solve(x0)[1] ** 2))
    sol = least_squares(problem.residual, x0, bounds=(lo, hi), method="trf", x_scale=1.0,
                        diff_step=1e-6, max_nfev=max_nfev)
    beta, r = problem.solve(sol.x)
    return sol, cost_start, beta, r, float(np.sum(r**2))


def _linear_start(
    W: np.ndarray, tau: np.ndarray, names: list[str], c: int, column: Callable, start: dict[str, float]
) -> tuple[np.ndarray, EstimationResult]:
    """The regressor with the compensator column at the start geometry, and its WLS estimate (the linear solution)."""
    W0 = np.array(W)
    W0[:, :, c] = _checked_column(column, start, W.shape[:2])
    return W0, estimate(W0, tau, names, method=WLS)


def _checked_request(
    names: list[str], compensator: str, free: Sequence[str], start: Geometry
) -> tuple[tuple[str, ...], dict[str, float]]:
    if compensator not in names:
        raise RobidInputError(f"refine: {compensator!r} is not one of the parameters")
    free = tuple(str(f) for f in free)
    if not free:
        raise RobidInputError("refine: no free geometry parameter given")
    for f in free:
        if f not in start:
            raise RobidInputError(f"refine: free parameter {f!r} has no start value")
    return free, {k: float(v) for k, v in start.items()}


def _box(
    free: tuple[str, ...], start: dict[str, float], x_scale: np.ndarray, bounds: Mapping | None
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the free parameters (default: start +- 50 %); the start must lie inside."""
    lo, hi = [], []
    for k, f in enumerate(free):
        b = (bounds or {}).get(f, (start[f] - 0.5 * x_scale[k], start[f] + 0.5 * x_scale[k]))
        if not b[0] < start[f] < b[1]:
            raise RobidInputError(f"refine: start value of {f} ({start[f]:.6g}) is not inside its bounds {b}")
        lo.append(b[0])
        hi.append(b[1])
    return np.array(lo), np.array(hi)


class _Projection:
    """The weighted variable-projection problem in scaled coordinates ``x = phi / x_scale``."""

    def __init__(self, W0, tau, weights, c, column, start, free, x_scale, feasible):
        n, dof, nb = W0.shape
        self.shape, self.c, self.column = (n, dof), c, column
        self.start, self.free, self.x_scale, self.feasible = start, free, x_scale, feasible
        self.row_w = np.tile(weights, n)
        self.y = tau.reshape(-1) * self.row_w
        self.A_rest = (W0.reshape(n * dof, nb) * self.row_w[:, None]).copy()
        # outside the physical region: a large constant residual, finite so that the optimiser can step back
        self.penalty = np.full(self.y.shape, 1e6 * (np.linalg.norm(self.y) + 1.0) / np.sqrt(self.y.size))

    def geometry(self, x: np.ndarray) -> dict[str, float]:
        g = dict(self.start)
        g.update({f: float(v) for f, v in zip(self.free, x * self.x_scale, strict=True)})
        return g

    def design(self, x: np.ndarray) -> np.ndarray:
        A = self.A_rest.copy()
        A[:, self.c] = _checked_column(self.column, self.geometry(x), self.shape).reshape(-1) * self.row_w
        return A

    def solve(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = self.design(x)
        beta = _scaled_lstsq(A, self.y)
        return beta, A @ beta - self.y

    def residual(self, x: np.ndarray) -> np.ndarray:
        if self.feasible is not None and not self.feasible(self.geometry(x)):
            return self.penalty
        return self.solve(x)[1]

    def is_feasible(self, x: np.ndarray) -> bool:
        return self.feasible is None or bool(self.feasible(self.geometry(x)))

    def jacobian(self, x: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, tuple[bool, ...]]:
        """``J = [A(phi), beta_c dA_c/dphi]`` of the weighted residual in (beta, phi), the phi columns by central
        differences; one-sided where a step leaves the physical region (then that parameter is on its edge)."""
        A = self.design(x)
        Jphi = np.empty((A.shape[0], len(self.free)))
        edge = []
        for k in range(len(self.free)):
            h = 1e-6 * max(abs(x[k]), 1.0)
            xp, xm = x.copy(), x.copy()
            xp[k] += h
            xm[k] -= h
            up, down = self.is_feasible(xp), self.is_feasible(xm)
            edge.append(not (up and down))
            if up and down:
                xhi, xlo, step = xp, xm, 2 * h
            elif up:
                xhi, xlo, step = xp, x, h
            else:
                xhi, xlo, step = x, xm, h
            Jphi[:, k] = beta[self.c] * (self.design(xhi)[:, self.c] - self.design(xlo)[:, self.c]) / (
                step * self.x_scale[k]
            )
        return np.hstack([A, Jphi]), tuple(edge)


@dataclass(frozen=True)
class _Fit:
    rank: int
    columns: int
    condition: float  # of the column-scaled Jacobian
    std: np.ndarray  # of (beta, phi)
    correlation: np.ndarray
    kappa: np.ndarray  # serial-correlation inflation per joint (ones when not applied)
    edge: tuple[bool, ...]  # per free parameter: the optimum is on the edge of the physical region


def _separability(problem: _Projection, x: np.ndarray, beta: np.ndarray, r: np.ndarray, serial: bool) -> _Fit:
    """Rank and scaled condition number of J, and the sandwich covariance of (beta, phi) with per-joint residual
    variances inflated for serial correlation (module docstring)."""
    n, dof = problem.shape
    J, edge = problem.jacobian(x, beta)
    norms = np.linalg.norm(J, axis=0)
    norms = np.where(norms == 0, 1.0, norms)
    Js = J / norms
    sv = np.linalg.svd(Js, compute_uv=False)
    tol = sv[0] * max(Js.shape) * np.finfo(float).eps * 1e3
    rank = int(np.sum(sv > tol))
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    p = J.shape[1]
    rj = r.reshape(n, dof)
    kappa = serial_inflation(rj) if serial else np.ones(dof)
    s2 = np.sum(rj**2, axis=0) / max(n - p / dof, 1.0) * kappa
    bread = np.linalg.pinv(Js.T @ Js, rcond=1e-15)
    meat = Js.T @ (Js * np.tile(s2, n)[:, None])
    cov = (bread @ meat @ bread) / np.outer(norms, norms)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return _Fit(rank, p, cond, std, correlation_matrix(cov), kappa, edge)


def _classify(
    free: tuple[str, ...],
    start: dict[str, float],
    phi: np.ndarray,
    box: tuple[np.ndarray, np.ndarray],
    fit: _Fit,
    all_names: list[str],
    nb: int,
    relative_std_threshold: float,
    condition_threshold: float,
) -> tuple[list[NonlinearParameter], dict[str, tuple[str, float]]]:
    """Each free parameter separable or not, with the reasons, and its strongest correlation with another."""
    lo, hi = box
    rank, p, rho = fit.rank, fit.columns, fit.correlation
    params, corr = [], {}
    for k, f in enumerate(free):
        j = nb + k
        std = float(fit.std[j]) if rank == p else float("inf")
        rel = 100.0 * std / abs(phi[k]) if phi[k] != 0 else float("inf")
        span = hi[k] - lo[k]
        at_bound = bool(min(phi[k] - lo[k], hi[k] - phi[k]) < 1e-6 * span)
        others = [i for i in range(p) if i != j]
        best = max(others, key=lambda i: abs(np.nan_to_num(rho[j, i])))
        corr[f] = (all_names[best], float(rho[j, best]))
        reasons = []
        if rank < p:
            reasons.append(f"Jacobian rank {rank} of {p} (structurally not separable)")
        elif fit.condition > condition_threshold:
            reasons.append(f"scaled Jacobian condition number {fit.condition:.3g} > {condition_threshold:g}")
        if rank == p and rel >= relative_std_threshold:
            reasons.append(f"relative std {rel:.3g} % >= {relative_std_threshold:g} %")
        if at_bound:
            reasons.append(f"optimum on the bound [{lo[k]:.6g}, {hi[k]:.6g}]")
        if fit.edge[k]:
            reasons.append("optimum on the edge of the physical region")
        params.append(
            NonlinearParameter(
                name=f,
                start=float(start[f]),
                value=float(phi[k]),
                std=std,
                bounds=(float(lo[k]), float(hi[k])),
                at_bound=at_bound,
                separable=not reasons,
                reason="; ".join(reasons),
            )
        )
    return params, corr


def _verdict_notes(params: list[NonlinearParameter], start: dict[str, float], kappa: np.ndarray | None) -> list[str]:
    notes = []
    if kappa is not None:
        notes.append(
            "residual variance inflated for serial correlation by "
            + ", ".join(f"{k:.3g}" for k in kappa)
            + " (per joint)"
        )
    if all(q.separable for q in params):
        notes.append(
            "separable: " + ", ".join(f"{q.name} = {q.value:.6g} +- {q.std:.3g} ({q.relative_std_percent:.3g} %)"
                                      for q in params) + "; the refined geometry is adopted"
        )
    else:
        free = ", ".join(f"{q.name} = {start[q.name]:.6g}" for q in params)
        notes.append(
            "NOT SEPARABLE: "
            + "; ".join(f"{q.name}: {q.reason}" for q in params if not q.separable)
            + f". The linear solution with the start geometry ({free})"
            " is kept; the optimum is reported for information only"
        )
    return notes


def serial_inflation(residual: np.ndarray) -> np.ndarray:
    """Per-joint variance inflation for serially correlated residuals, ``kappa_j = 1 + 2 sum_k rho_j(k)``.

    ``rho_j(k)`` is the sample autocorrelation of joint j's residual (N, dof) at lag k, summed up to the first lag
    where it is no longer positive (at most N/4). The variance of a mean (and, to first order, of a least-squares
    estimate) of N correlated samples is kappa times that of N independent ones: a residual low-passed at f_c
    and sampled at f_s has kappa of the order f_s / (2 f_c). At least 1.
    """
    r = np.asarray(residual, dtype=float)
    r = r - r.mean(axis=0)
    n = r.shape[0]
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spec = np.fft.rfft(r, n=size, axis=0)
    acov = np.fft.irfft(np.abs(spec) ** 2, n=size, axis=0)[:n]
    out = np.ones(r.shape[1])
    for j in range(r.shape[1]):
        if acov[0, j] <= 0:
            continue
        rho = acov[1 : n // 4 + 1, j] / acov[0, j]
        stop = np.flatnonzero(rho <= 0)
        k = int(stop[0]) if stop.size else rho.size
        out[j] = max(1.0, 1.0 + 2.0 * float(rho[:k].sum()))
    return out


def _checked_column(column: Callable, geometry: Mapping[str, float], shape: tuple[int, int]) -> np.ndarray:
    col = np.asarray(column(geometry), dtype=float)
    if col.shape != shape:
        raise RobidInputError(f"refine: the column function returned shape {col.shape}, expected {shape}")
    if not np.all(np.isfinite(col)):
        raise RobidInputError("refine: the column function returned non-finite values")
    return col


def _scaled_lstsq(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(A, axis=0)
    norms = np.where(norms == 0, 1.0, norms)
    return np.linalg.lstsq(A / norms, y, rcond=None)[0] / norms
