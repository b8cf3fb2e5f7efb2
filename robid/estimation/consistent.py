"""Physically consistent standard parameters, from data or from an unconstrained base estimate.

Both forms reduce their fit term to ``||R theta - z||^2`` and hand it to the semidefinite programme of
:mod:`robid.estimation._sdp` (Wensing, Kim & Slotine, RA-L 2017): :func:`consistent_estimate` from the weighted
regressor (a base regressor is mapped to the standard columns by the grouping, ``W_std = W_b G``),
:func:`consistent_from_base` from a base estimate and its covariance. The checks themselves live in
:mod:`robid.estimation.physical_consistency` (a standard set) and :mod:`robid.estimation.base_consistency`
(a base set); they are re-exported here, where they were importable from before the split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation._sdp import ConsistentFit, SdpSettings, fit_consistent, whitened
from robid.estimation.base_consistency import BaseConsistencyReport, check_base_consistency
from robid.estimation.physical_consistency import (
    NONNEGATIVE,
    ConsistencyReport,
    JointVerdict,
    LinkVerdict,
    ParameterLayout,
    check_link,
    check_physical_consistency,
    parameter_layout,
    pseudo_inertia,
)

__all__ = [
    "NONNEGATIVE",
    "BaseConsistencyReport",
    "ConsistencyReport",
    "ConsistentResult",
    "JointVerdict",
    "LinkVerdict",
    "ParameterLayout",
    "check_base_consistency",
    "check_link",
    "check_physical_consistency",
    "consistent_estimate",
    "consistent_from_base",
    "parameter_layout",
    "pseudo_inertia",
]


@dataclass(frozen=True)
class ConsistentResult:
    """Physically consistent estimate of the full standard set.

    ``solved`` is False when the solver failed; then ``values`` and ``base_values`` are NaN and ``notes`` say
    why; no other estimate is put in their place.
    """

    method: str
    solved: bool
    status: str
    solver: str
    parameter_names: tuple[str, ...]
    values: np.ndarray
    base_names: tuple[str, ...] | None
    base_values: np.ndarray | None
    objective: float
    fit_term: float
    regularization_term: float
    residual: np.ndarray | None  # (N, dof) for the data form
    consistency: ConsistencyReport | None
    notes: tuple[str, ...] = field(default_factory=tuple)


def consistent_estimate(
    W: np.ndarray,
    tau: np.ndarray,
    parameter_names: Sequence[str],
    *,
    grouping: np.ndarray | None = None,
    base_names: Sequence[str] | None = None,
    noise_std: Sequence[float] | np.ndarray | None = None,
    nominal: Sequence[float] | np.ndarray | None = None,
    regularization: float = 0.0,
    regularization_weights: Sequence[float] | np.ndarray | None = None,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    margin: float = 0.0,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> ConsistentResult:
    """Physically consistent standard parameters from data (semidefinite programme, Wensing et al. 2017).

    ``W`` is either the standard regressor ``(N, dof, P)`` or the base regressor ``(N, dof, nb)`` together with
    ``grouping`` (nb x P) so that ``W_std = W @ grouping``. Solves

        min_theta  sum_j w_j^2 ||W_std,j theta - tau_j||^2 + lambda ||diag(r) (theta - theta_nom)||^2
        s.t.       J_k(theta) >= margin (PSD, every link k); Ia, fv, fc, k, d >= 0;
                   m_lo <= m_k <= m_hi;  m_k c_lo <= h_k <= m_k c_hi   (optional bounds)

    with ``w_j = 1/noise_std_j`` (default: ``1/sigma_j`` of a two-step WLS of the unconstrained problem). The
    data term is reduced by a QR factorisation to a P x P problem. Without regularisation the standard set is
    not unique (only its base combination is); give ``nominal`` and a small ``regularization`` to pick the one
    closest to CAD values. Returns the standard set and, when ``grouping`` is given, the implied base values.
    """
    W, tau, _ = _lsq.check_problem(W, tau, None)
    names = tuple(parameter_names)
    G, Wstd = _standard_regressor(W, grouping, len(names))
    noise, noise_note = _joint_noise(W, tau, noise_std)
    R, z, const = _reduced_data_term(Wstd, tau, noise)
    settings = SdpSettings(
        nominal, regularization, regularization_weights, mass_bounds, com_boxes, margin, solver, fallback_solver
    )
    fit = fit_consistent(R, z, names, settings)
    base_values = G @ fit.values if G is not None else None
    residual = tau - Wstd @ fit.values if fit.solved else None
    notes = (noise_note, *fit.notes)
    return _result("consistent-sdp (data)", names, base_names, fit, notes, base_values, residual, const)


def _standard_regressor(W: np.ndarray, grouping, n_names: int) -> tuple[np.ndarray | None, np.ndarray]:
    """``(G, W_std)``: the standard regressor ``W_b G`` of a base regressor, or ``W`` itself without grouping."""
    if grouping is None:
        if W.shape[2] != n_names:
            raise RobidInputError(f"regressor has {W.shape[2]} columns for {n_names} parameter names")
        return None, W
    G = np.asarray(grouping, dtype=float)
    if G.shape != (W.shape[2], n_names):
        raise RobidInputError(f"grouping: shape {G.shape}, expected ({W.shape[2]}, {n_names})")
    return G, W @ G


def _joint_noise(W: np.ndarray, tau: np.ndarray, noise_std) -> tuple[np.ndarray, str]:
    """Per-joint noise levels ``sigma_j`` for the weights ``w_j = 1/sigma_j`` (given, or from a two-step WLS),
    and the note that says which."""
    if noise_std is not None:
        return np.asarray(noise_std, dtype=float), "per-joint weights 1/noise_std (given)"
    from robid.estimation.estimators import wls

    return wls(W, tau).sigma, "per-joint weights 1/sigma_j from a two-step WLS of the unconstrained problem"


def _reduced_data_term(Wstd: np.ndarray, tau: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``(R, z, c)`` with ``||A_w theta - y_w||^2 = ||R theta - z||^2 + c`` (thin QR of the weighted regressor)."""
    n, dof, P = Wstd.shape
    w = _lsq.rows_of_joint(1.0 / noise, n)
    Aw = Wstd.reshape(n * dof, P) * w[:, None]
    yw = tau.reshape(n * dof) * w
    q, R = np.linalg.qr(Aw, mode="reduced")
    z = q.T @ yw
    return R, z, float(yw @ yw - z @ z)


def consistent_from_base(
    base_values: Sequence[float] | np.ndarray,
    covariance: np.ndarray,
    grouping: np.ndarray,
    parameter_names: Sequence[str],
    *,
    base_names: Sequence[str] | None = None,
    nominal: Sequence[float] | np.ndarray | None = None,
    regularization: float = 0.0,
    regularization_weights: Sequence[float] | np.ndarray | None = None,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    margin: float = 0.0,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> ConsistentResult:
    """Consistent standard set nearest to an unconstrained base estimate in the metric of its covariance.

    ``min (G theta - beta)^T Cov^-1 (G theta - beta) + lambda ||diag(r)(theta - theta_nom)||^2`` under the same
    constraints as :func:`consistent_estimate`. For a WLS estimate (``Cov = (A_w^T A_w)^-1``) the fit term equals
    the data term of :func:`consistent_estimate` up to a constant, at the cost of an nb x P problem.
    """
    beta = np.asarray(base_values, dtype=float)
    cov = np.asarray(covariance, dtype=float)
    G = np.asarray(grouping, dtype=float)
    names = tuple(parameter_names)
    nb = beta.shape[0]
    if cov.shape != (nb, nb) or G.shape != (nb, len(names)):
        raise RobidInputError(
            f"consistent_from_base: covariance {cov.shape} / grouping {G.shape} do not match {nb} base values"
        )
    try:
        R, z = whitened(cov, G, beta)
    except np.linalg.LinAlgError as exc:
        raise RobidInputError("consistent_from_base: covariance is not positive definite") from exc
    settings = SdpSettings(
        nominal, regularization, regularization_weights, mass_bounds, com_boxes, margin, solver, fallback_solver
    )
    fit = fit_consistent(R, z, names, settings)
    base_fit = G @ fit.values if fit.solved else np.full(nb, np.nan)
    notes = ("fit term: Mahalanobis distance to the unconstrained base estimate", *fit.notes)
    return _result("consistent-sdp (base)", names, base_names, fit, notes, base_fit, None, 0.0)


def _result(
    method: str,
    names: tuple[str, ...],
    base_names: Sequence[str] | None,
    fit: ConsistentFit,
    notes: tuple[str, ...],
    base_values: np.ndarray | None,
    residual: np.ndarray | None,
    constant: float,
) -> ConsistentResult:
    """The record of a fit; ``constant`` is the part of the fit term that the reduction to ``R, z`` dropped."""
    out = fit.outcome
    nan = float("nan")
    return ConsistentResult(
        method=method,
        solved=out.solved,
        status=out.status,
        solver=out.solver,
        parameter_names=names,
        values=fit.values,
        base_names=tuple(base_names) if base_names is not None else None,
        base_values=base_values,
        objective=out.objective + constant if out.solved else nan,
        fit_term=fit.fit_term + constant if out.solved else nan,
        regularization_term=fit.regularization_term,
        residual=residual,
        consistency=fit.consistency,
        notes=tuple(notes),
    )
