"""Errors-in-variables least squares with a known regressor-noise covariance (the cheap alternative to IDIM-IV).

Model: ``tau = W0 beta + e`` and the regressor is observed as ``W = W0 + D``, D the noise the processed
accelerations carry into the inertial columns (docs/estimation.md, "Errors in the regressor"). Then
``E[W^T W] = W0^T W0 + S`` with ``S = E[D^T D]``, and least squares converges to ``(W0^T W0 + S)^-1 W0^T W0 beta``:
attenuated. When S is known -- here from the signal stage's noise of the processed accelerations -- the
corrected (adjusted) least-squares estimate removes it from the normal matrix::

    beta = (W_w^T W_w - S_w)^-1 W_w^T tau_w,      S_w = sum_j w_j^2 S_j                     (Fuller 1987, sec. 2.2)

with rows weighted per joint (``w_j = 1/sigma_j``) and ``S_j = E[D_j^T D_j]`` summed over joint j's used rows.
It is consistent as the number of rows grows, needs no closed-loop simulation and no controller, but it is only
as good as S: the accelerations' noise level must be right. Its covariance is the sandwich
``A^-1 (sum_j w_j^4 sigma_j^2 W_j^T W_j) A^-1``, ``A = W_w^T W_w - S_w``, with sigma_j from the residual
(which holds the torque noise and the regressor noise times beta).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.results import EstimationResult


def corrected_least_squares(
    W: np.ndarray,
    tau: np.ndarray,
    noise_gram: np.ndarray,
    names: Sequence[str] | None = None,
    *,
    weights: Sequence[float] | np.ndarray | None = None,
    method: str = "eiv",
) -> EstimationResult:
    """The corrected least-squares estimate (module docstring). ``noise_gram`` (dof, nb, nb): per joint row j,
    ``S_j = E[D_j^T D_j]`` summed over its used rows. ``weights`` per joint; default 1/sigma_j from the residual of
    an unweighted corrected solve (two steps)."""
    W, tau, names = _lsq.check_problem(W, tau, names)
    dof, nb = W.shape[1], W.shape[2]
    S = np.asarray(noise_gram, dtype=float)
    if S.shape != (dof, nb, nb):
        raise RobidInputError(f"eiv: noise_gram has shape {S.shape}, expected {(dof, nb, nb)}")
    used = _lsq.used_rows(W, tau)
    notes = [f"{method}: corrected least squares, beta = (W^T W - S)^-1 W^T tau, S the regressor noise from the "
             "processed accelerations' noise"]
    if weights is None:
        first = _solve(W, tau, S, np.ones(dof))[0]
        weights = 1.0 / np.maximum(_lsq.residual_sigma(tau - W @ first, used, nb), 1e-12)
        notes.append("weights 1/sigma_j from the residual of the unweighted corrected solve (two steps)")
    weights = np.asarray(weights, dtype=float)
    beta, a_inverse, ratio = _solve(W, tau, S, weights)
    residual = tau - W @ beta
    sigma = _lsq.residual_sigma(residual, used, nb)
    meat = sum(weights[j] ** 4 * sigma[j] ** 2 * (W[:, j].T @ W[:, j]) for j in range(dof))
    cov = a_inverse @ meat @ a_inverse.T
    notes.append(f"the noise term is {100 * ratio:.2g} % of the normal matrix (trace ratio)")
    converged = True
    eigen = np.linalg.eigvalsh(0.5 * (a_inverse + a_inverse.T)) if nb else np.zeros(0)
    if np.any(eigen <= 0):
        converged = False
        notes.append("the corrected normal matrix is not positive definite: the regressor noise is as large as "
                     "the motion in some direction; this estimate is not reliable (lower the band or use didim)")
    A = (W * weights[None, :, None]).reshape(-1, nb)
    cond, cond_scaled = _lsq.condition_numbers(A)
    return EstimationResult.build(
        method=method, names=names, values=beta, covariance=0.5 * (cov + cov.T), residual=residual, sigma=sigma,
        weights=weights, condition_number=cond, condition_number_scaled=cond_scaled, notes=notes,
        converged=converged, iterations=2, rows_used=int(used.sum()),
    )


def _solve(W, tau, S, weights):
    """(beta, A^-1, trace ratio of S_w to W_w^T W_w) of the weighted corrected normal equations."""
    w = np.asarray(weights, dtype=float)
    A = np.einsum("j,njp,njq->pq", w**2, W, W)
    S_w = np.einsum("j,jpq->pq", w**2, S)
    b = np.einsum("j,njp,nj->p", w**2, W, tau)
    scale = np.sqrt(np.maximum(np.diag(A), 1e-300))
    corrected = (A - S_w) / np.outer(scale, scale)
    inverse = np.linalg.pinv(corrected, rcond=1e-12) / np.outer(scale, scale)
    ratio = float(np.trace(S_w / np.outer(scale, scale)) / max(np.trace(A / np.outer(scale, scale)), 1e-300))
    return inverse @ b, inverse, ratio
