"""Consistency check of a base estimate: does *some* physically consistent standard set reproduce it?

With only base parameters (``beta = G theta``) the question is whether a standard set ``theta`` that passes the
checks of :mod:`robid.estimation.physical_consistency` has ``G theta = beta``. :func:`check_base_consistency`
solves that semidefinite feasibility problem (the nearest consistent set, Wensing, Kim & Slotine, RA-L 2017)
and reports which base parameters would have to move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation._sdp import lmi_constraints, solve, whitened
from robid.estimation.physical_consistency import parameter_layout


@dataclass(frozen=True)
class BaseConsistencyReport:
    """Is there a physically consistent standard set ``theta`` with ``G theta = beta``?

    ``consistent``: the nearest consistent set reproduces every base value within ``rel_tol`` (relative to
    ``max(|beta_i|, floor)``). ``mismatch = G theta* - beta`` for the nearest set ``theta*`` (minimum of the
    scaled 2-norm), ``moved`` the base parameters that had to move beyond tolerance, largest first.
    With a covariance, ``mahalanobis`` = ``sqrt(mismatch^T Cov^-1 mismatch)`` of the nearest set and
    ``statistically_compatible`` says whether it is within the 95 % chi-square quantile (nb degrees of freedom).
    """

    consistent: bool | None  # None when the solver failed
    solved: bool
    status: str
    relative_mismatch: np.ndarray
    mismatch: np.ndarray
    moved: tuple[tuple[str, float, float], ...]  # (name, value, nearest consistent value)
    nearest_standard: np.ndarray
    mahalanobis: float | None
    statistically_compatible: bool | None
    notes: tuple[str, ...] = ()


def check_base_consistency(
    base_values: Sequence[float] | np.ndarray,
    grouping: np.ndarray,
    parameter_names: Sequence[str],
    *,
    base_names: Sequence[str] | None = None,
    covariance: np.ndarray | None = None,
    rel_tol: float = 1e-4,
    floor: float = 1e-6,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> BaseConsistencyReport:
    """Check whether base values can come from any physically consistent standard set.

    Solves ``min_theta sum_i ((G theta - beta)_i / s_i)^2`` with ``s_i = max(|beta_i|, floor * max|beta|)`` (or,
    with ``covariance``, the Mahalanobis distance ``(G theta - beta)^T Cov^-1 (G theta - beta)``) under the LMIs
    and sign constraints of :func:`consistent_estimate`. A zero optimum means consistent; the verdict uses the
    relative mismatch ``(G theta* - beta)_i / s_i`` of the optimum in either case. Necessary
    conditions such as "D(q) positive definite for all q" are implied by this test (a consistent standard set
    has a PD mass matrix) but are much weaker.
    """
    import cvxpy as cp

    beta = np.asarray(base_values, dtype=float)
    G = np.asarray(grouping, dtype=float)
    names = tuple(parameter_names)
    nb = beta.shape[0]
    if G.shape != (nb, len(names)):
        raise RobidInputError(f"check_base_consistency: grouping {G.shape} does not match ({nb}, {len(names)})")
    bnames = tuple(base_names) if base_names is not None else tuple(f"beta{i}" for i in range(nb))
    s = np.maximum(np.abs(beta), floor * max(float(np.max(np.abs(beta))), 1e-300))
    layout = parameter_layout(names)
    theta = cp.Variable(len(names))
    cons = lmi_constraints(theta, layout, mass_bounds, com_boxes, 0.0)
    cov = None if covariance is None else np.asarray(covariance, dtype=float)
    if cov is not None and cov.shape != (nb, nb):
        raise RobidInputError(f"check_base_consistency: covariance {cov.shape}, expected ({nb}, {nb})")
    out = solve(_distance(cp, theta, G, beta, s, cov), cons, theta, solver, fallback_solver)
    notes = list(out.notes)
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters get no LMI: " + ", ".join(layout.incomplete_links))
    return _report(out, G, beta, s, bnames, cov, rel_tol, floor, tuple(notes), len(names))


def _distance(cp, theta, G: np.ndarray, beta: np.ndarray, s: np.ndarray, cov: np.ndarray | None):
    """The squared distance of G theta from beta: Mahalanobis with the covariance, else relative to ``s``."""
    if cov is not None:
        R, z = whitened(cov, G, beta)
        return cp.sum_squares(R @ theta - z)
    return cp.sum_squares(cp.multiply(1.0 / s, G @ theta - beta))


def _report(out, G, beta, s, bnames, cov, rel_tol: float, floor: float, notes: tuple[str, ...],
            n_standard: int) -> BaseConsistencyReport:
    """The verdict of the solved feasibility problem ``out`` (no verdict when it was not solved); ``notes`` are the
    solve's, followed in the report by the verdict's own."""
    nb = beta.shape[0]
    if not out.solved:
        nan = np.full(nb, np.nan)
        return BaseConsistencyReport(
            None, False, out.status, nan, nan, (), np.full(n_standard, np.nan), None, None,
            (*notes, "feasibility problem not solved: no verdict"),
        )
    mismatch = G @ out.value - beta
    rel = mismatch / s
    order = np.argsort(-np.abs(rel))
    moved = tuple((bnames[i], float(beta[i]), float(beta[i] + mismatch[i])) for i in order if abs(rel[i]) > rel_tol)
    maha = compatible = None
    if cov is not None:
        from scipy.stats import chi2

        maha = float(np.sqrt(max(mismatch @ np.linalg.solve(cov, mismatch), 0.0)))
        compatible = bool(maha**2 <= chi2.ppf(0.95, nb))
    tolerance = f"tolerance: relative mismatch {rel_tol:g} of max(|beta_i|, {floor:g} max|beta|)"
    return BaseConsistencyReport(
        consistent=not moved,
        solved=True,
        status=out.status,
        relative_mismatch=rel,
        mismatch=mismatch,
        moved=moved,
        nearest_standard=out.value,
        mahalanobis=maha,
        statistically_compatible=compatible,
        notes=(*notes, tolerance),
    )
