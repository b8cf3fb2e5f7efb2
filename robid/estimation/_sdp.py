"""The semidefinite programme behind every physically consistent estimate (Wensing, Kim & Slotine, RA-L 2017).

For a least-squares term already reduced to ``||R theta - z||^2`` it solves

    min_theta  ||R theta - z||^2 + lambda ||diag(r) (theta - theta_nom)||^2
    s.t.       J_k(theta) >= margin (PSD, every link k); Ia, fv, fc, k, d >= 0;
               m_lo <= m_k <= m_hi;  m_k c_lo <= h_k <= m_k c_hi   (optional bounds)

with ``J_k`` the pseudo-inertia of link k (:mod:`robid.estimation.physical_consistency`), and re-checks the
solution. Which data or base estimate ``R`` and ``z`` come from is the caller's business
(:mod:`robid.estimation.consistent`, :mod:`robid.estimation.base_consistency`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.physical_consistency import (
    ConsistencyReport,
    ParameterLayout,
    check_physical_consistency,
    parameter_layout,
)


@dataclass(frozen=True, eq=False)
class SdpSettings:
    """Prior, optional bounds and solvers of a consistent estimate (arguments of ``consistent_estimate``)."""

    nominal: Sequence[float] | np.ndarray | None = None
    regularization: float = 0.0
    regularization_weights: Sequence[float] | np.ndarray | None = None
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None
    margin: float = 0.0
    solver: str = "CLARABEL"
    fallback_solver: str | None = "SCS"


def lmi_constraints(theta, layout: ParameterLayout, mass_bounds, com_boxes, margin) -> list:
    """cvxpy constraints: pseudo-inertia of every complete link PSD (shifted by ``margin``), the optional mass
    bounds and COM boxes (``m c_lo <= h <= m c_hi``, linear in theta), non-negative per-joint parameters."""
    import cvxpy as cp

    cons = []
    link_names = {link for link, _ in layout.links}
    for key in list(mass_bounds or {}) + list(com_boxes or {}):
        if key not in link_names:
            raise RobidInputError(f"bounds: unknown link {key!r} (links: {sorted(link_names)})")
    for link, idx in layout.links:
        m, hx, hy, hz, xx, xy, xz, yy, yz, zz = (theta[i] for i in idx)
        J = cp.Variable((4, 4), PSD=True, name=f"J_{link}")
        cons += [
            J[0, 0] + margin == 0.5 * (-xx + yy + zz),
            J[1, 1] + margin == 0.5 * (xx - yy + zz),
            J[2, 2] + margin == 0.5 * (xx + yy - zz),
            J[0, 1] == -xy,
            J[0, 2] == -xz,
            J[1, 2] == -yz,
            J[0, 3] == hx,
            J[1, 3] == hy,
            J[2, 3] == hz,
            J[3, 3] + margin == m,
        ]
        if mass_bounds and link in mass_bounds:
            lo, hi = mass_bounds[link]
            if lo is not None:
                cons.append(m >= float(lo))
            if hi is not None:
                cons.append(m <= float(hi))
        if com_boxes and link in com_boxes:
            lo, hi = (np.asarray(b, dtype=float) for b in com_boxes[link])
            for h, a, b in zip((hx, hy, hz), lo, hi, strict=True):
                cons += [h >= a * m, h <= b * m]
    for i, _prefix, _joint in layout.nonnegative:
        cons.append(theta[i] >= 0)
    return cons


@dataclass(frozen=True)
class SolveOutcome:
    solved: bool
    status: str
    solver: str
    value: np.ndarray | None
    objective: float
    notes: tuple[str, ...]


def solve(objective, cons, theta, solver: str, fallback: str | None) -> SolveOutcome:
    """Solve; a certified infeasible/unbounded verdict is final, a solver error or an inaccurate optimum moves
    on to the fallback solver (and the notes say so)."""
    import warnings

    import cvxpy as cp

    problem = cp.Problem(cp.Minimize(objective), cons)
    notes: list[str] = []
    tried = [solver] + ([fallback] if fallback and fallback != solver else [])
    inaccurate: SolveOutcome | None = None
    status, used = "not solved", solver
    for s in tried:
        used = s
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                problem.solve(solver=s)
                status = str(problem.status)
            except cp.error.SolverError as exc:
                status = f"solver error: {exc}"
        if status == cp.OPTIMAL:
            if s != tried[0]:
                notes.append(f"solved with the fallback solver {s}")
            return SolveOutcome(
                True, status, s, np.asarray(theta.value, dtype=float), float(problem.value), tuple(notes)
            )
        notes.append(f"solver {s}: {status}")
        if status in (cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE):
            return SolveOutcome(False, status, s, None, float("nan"), tuple(notes))
        if status == cp.OPTIMAL_INACCURATE and inaccurate is None:
            inaccurate = SolveOutcome(True, status, s, np.asarray(theta.value, dtype=float), float(problem.value), ())
    if inaccurate is not None:
        notes.append(f"using the inaccurate optimum of {inaccurate.solver}; constraints are re-checked")
        return SolveOutcome(
            True, inaccurate.status, inaccurate.solver, inaccurate.value, inaccurate.objective, tuple(notes)
        )
    return SolveOutcome(False, status, used, None, float("nan"), tuple(notes))


def whitened(covariance: np.ndarray, grouping: np.ndarray, base_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(R, z)`` with ``||R theta - z||^2 = (G theta - beta)^T Cov^-1 (G theta - beta)``: ``R = L^-1 G``,
    ``z = L^-1 beta`` for the Cholesky factor ``Cov = L L^T`` (raises ``LinAlgError`` when Cov is not PD).
    A base parameter with infinite variance (a column the data never excite: a joint that never moved) carries
    no information: it is left out of the fit term, so only the constraints and the regulariser set it."""
    cov = np.asarray(covariance, dtype=float)
    keep = np.isfinite(np.diag(cov))
    cov = cov[np.ix_(keep, keep)]
    if not np.all(np.isfinite(cov)):
        raise np.linalg.LinAlgError("covariance has non-finite entries between finite variances")
    L = np.linalg.cholesky(0.5 * (cov + cov.T))
    return np.linalg.solve(L, np.asarray(grouping)[keep]), np.linalg.solve(L, np.asarray(base_values)[keep])


def _regularizer(theta, P, nominal, regularization, regularization_weights):
    import cvxpy as cp

    if regularization <= 0:
        return None, None
    if nominal is None:
        raise RobidInputError("consistent estimate: regularization > 0 needs nominal values")
    nominal = np.asarray(nominal, dtype=float)
    if nominal.shape != (P,):
        raise RobidInputError(f"consistent estimate: nominal has shape {nominal.shape}, expected ({P},)")
    rw = np.ones(P) if regularization_weights is None else np.asarray(regularization_weights, dtype=float)
    return regularization * cp.sum_squares(cp.multiply(rw, theta - nominal)), (nominal, rw)


@dataclass(frozen=True, eq=False)
class ConsistentFit:
    """Outcome of :func:`fit_consistent`: ``values`` are NaN unless ``outcome.solved``."""

    outcome: SolveOutcome
    values: np.ndarray
    fit_term: float  # ||R theta - z||^2 at the solution
    regularization_term: float
    consistency: ConsistencyReport | None
    notes: tuple[str, ...] = ()  # what the fit says, in order

    @property
    def solved(self) -> bool:
        return self.outcome.solved


def fit_consistent(R: np.ndarray, z: np.ndarray, names: tuple[str, ...], settings: SdpSettings) -> ConsistentFit:
    """Solve the programme of the module docstring and re-check the solution; its notes are in the fit's ``notes``.

    A failed solve, or an inaccurate optimum that violates the constraints, gives NaN values: the unconstrained
    estimate is never put in their place.
    """
    import cvxpy as cp

    s = settings
    P = len(names)
    notes: list[str] = []
    layout = parameter_layout(names)
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters get no LMI: " + ", ".join(layout.incomplete_links))
    if not layout.links:
        notes.append("no complete link found in the parameter names: no LMI constraint applied")
    theta = cp.Variable(P, name="theta")
    fit = cp.sum_squares(R @ theta - z)
    reg, reg_data = _regularizer(theta, P, s.nominal, s.regularization, s.regularization_weights)
    objective = fit if reg is None else fit + reg
    cons = lmi_constraints(theta, layout, s.mass_bounds, s.com_boxes, s.margin)
    out = solve(objective, cons, theta, s.solver, s.fallback_solver)
    notes.extend(out.notes)
    nan = float("nan")
    if not out.solved:
        notes.append("no physically consistent estimate is reported (the unconstrained estimate is not substituted)")
        return ConsistentFit(out, np.full(P, np.nan), nan, nan, None, tuple(notes))
    value = out.value
    fit_v = float(np.sum((R @ value - z) ** 2))
    reg_v = 0.0
    if reg_data is not None:
        reg_v = float(s.regularization * np.sum((reg_data[1] * (value - reg_data[0])) ** 2))
    report = check_physical_consistency(value, names, rel_tol=1e-5)
    if not report.consistent:
        notes.append("solution violates the constraints beyond solver tolerance: " + "; ".join(report.reasons()))
        if out.status != "optimal":
            notes.append("inaccurate and inconsistent: no physically consistent estimate is reported")
            out = SolveOutcome(False, out.status, out.solver, None, nan, out.notes)
            return ConsistentFit(out, np.full(P, np.nan), nan, nan, report, tuple(notes))
    return ConsistentFit(out, value, fit_v, reg_v, report, tuple(notes))
