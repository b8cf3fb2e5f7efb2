"""Instrumental-variable estimate of linear parameters (the estimation step of IDIM-IV).

Model: ``tau = W beta + e`` where the observation matrix ``W`` is built from filtered, differentiated measured
positions, so it carries their noise and is correlated with ``e`` (errors in variables). Least squares is then
biased. Given instruments ``Z`` of the same shape -- correlated with the noise-free ``W`` but not with the noise
(in IDIM-IV, the regressor of the simulated closed loop, Janot, Vandanjon & Gautier, IEEE TCST 22(1), 2014,
section III) -- the IV estimate solves the normal equations with ``Z`` in place of ``W`` on the left::

    beta_IV = (Z_w^T W_w)^-1 Z_w^T y_w                                                     (Janot 2014, eq. 13)

with rows weighted per joint by ``w_j = 1 / sigma_j`` (the per-joint weighting of Gautier's WLS; ``sigma_j``
from the IV residual of the previous weighting, two steps). Its covariance for independent errors of standard
deviation ``sigma_j`` per joint is::

    Cov = G^-1 (sum_j w_j^2 sigma_j^2 Z_j^T Z_j) G^-T,   G = Z_w^T W_w                       (Janot 2014, eq. 16)

which reduces to Janot's ``sigma^2 (Z^T W)^-1 Z^T Z (W^T Z)^-1`` for one weight. ``sigma_j^2 = ||r_j||^2 /
(n_j - nb n_j / n)`` from the IV residual ``r = tau - W beta_IV`` (the measured torque's residual, not the
instruments'). Columns are scaled to unit norm of ``Z_w`` before solving; a column that is zero in ``Z`` or ``W``
is not identified (value 0, infinite variance), as in the least-squares estimators.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.correlated import RowCorrelation
from robid.estimation.results import EstimationResult

#: Newey-West lags of a filtered block: this many times 1/g (g its noise power gain, about 2 fc / fs), at most
#: HAC_MAX_SHARE of its samples. Measured on the virtual 3R (benchmarks/bench_closed_loop_estimators.py setting,
#: 4 seeds): 3/g gives mean |z| 0.38 (conservative), 10/g 0.59, 30/g 0.78 (about the 0.80 of calibrated std)
HAC_LAGS_PER_GAIN = 30.0
HAC_MAX_SHARE = 0.1

#: relative singular-value threshold of the instrumented normal matrix below which a direction is rank deficient
RANK_TOLERANCE = 1e-10


def iv(
    W: np.ndarray,
    Z: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str] | None = None,
    *,
    weights: Sequence[float] | np.ndarray | None = None,
    method: str = "iv",
    correlation: RowCorrelation | None = None,
) -> EstimationResult:
    """The weighted instrumental-variable estimate of ``tau = W beta`` with instruments ``Z`` (module docstring).

    ``W``, ``Z`` (N, dof, nb), ``tau`` (N, dof); rows that are zero in ``W`` and ``tau`` are not used (the data
    selection). ``weights`` per joint; default: 1/sigma_j from the residual of an unweighted IV solve (two steps).
    ``correlation``: the rows are filtered by a known low-pass (non-periodic path); the meat of the covariance is
    then estimated from the residual's autocorrelation (:func:`_hac_meat`).
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    Z = np.asarray(Z, dtype=float)
    if Z.shape != W.shape:
        raise RobidInputError(f"iv: instruments have shape {Z.shape}, the regressor {W.shape}")
    used = _lsq.used_rows(W, tau)
    Z = Z * used[:, :, None]
    notes = [f"{method}: instrumental variables, beta = (Z^T W)^-1 Z^T tau with per-joint weights"]
    if weights is None:
        first = _solve(W, Z, tau, np.ones(W.shape[1]))
        weights = 1.0 / np.maximum(_lsq.residual_sigma(tau - W @ first[0], used, len(names)), 1e-12)
        notes.append("weights 1/sigma_j from the residual of the unweighted instrumental solve (two steps)")
    weights = np.asarray(weights, dtype=float)
    beta, g_inverse, scale, zero, rank = _solve(W, Z, tau, weights)
    residual = tau - W @ beta
    sigma = _lsq.residual_sigma(residual, used, len(names))
    n = W.shape[0]
    B = (Z * weights[None, :, None]) / scale  # (N, dof, nb): B_j = w_j Z_j, scaled columns
    if correlation is None or correlation.independent:
        meat = sum((weights[j] * sigma[j]) ** 2 * (B[:, j].T @ B[:, j]) for j in range(W.shape[1]))
    else:
        correlation.check(n)
        meat = _hac_meat(correlation, B, residual * weights * used)
        notes.append(correlation.describe() + "; the IV covariance takes the residual's own autocorrelation over "
                     "the filter's correlation length (Newey-West, Bartlett weights)")
    cov_s = g_inverse @ meat @ g_inverse.T
    cov = cov_s / np.outer(scale, scale)
    for i in zero:
        cov[i, :] = cov[:, i] = 0.0
        cov[i, i] = np.inf
    converged = True
    if zero:
        notes.append("columns never excited (all zero): " + ", ".join(names[i] for i in zero)
                     + "; their values are set to 0 and are not identified")
    if rank < W.shape[2] - len(zero):
        converged = False
        notes.append(f"instrumented normal matrix is rank deficient (rank {rank} of {W.shape[2] - len(zero)})")
    A = (W * weights[None, :, None]).reshape(n * W.shape[1], -1)
    cond, cond_scaled = _lsq.condition_numbers(A)
    return EstimationResult.build(
        method=method, names=names, values=beta, covariance=0.5 * (cov + cov.T), residual=residual, sigma=sigma,
        weights=weights, condition_number=cond, condition_number_scaled=cond_scaled, notes=notes,
        converged=converged, iterations=2, rows_used=int(used.sum()),
    )


def _hac_meat(correlation: RowCorrelation, B: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Z^T Cov(r) Z estimated from the residual itself (Newey & West, Econometrica 55(3), 1987): per data set and
    joint, u_t = B_t r_t and sum over lags |l| <= L of (1 - |l| / (L + 1)) sum_t u_t u_(t-l)^T. The residual of
    IDIM-IV holds the torque noise through the low-pass and the noise of the measured accelerations, whose
    spectra differ, so no one filter model fits it. u is mostly at the frequencies of that noise, far above those
    of the instruments, and its long-run variance is small; a short window (Bartlett weights smooth the spectrum
    over fs / L) leaks that high-frequency power into it: L = HAC_LAGS_PER_GAIN / g samples, g the filter's noise
    power gain per row (about 2 fc / fs, so 1 / g is the correlation length of the filtered rows), at most
    HAC_MAX_SHARE of the block (the estimate's own variance grows as L / N)."""
    nb = B.shape[2]
    meat, start = np.zeros((nb, nb)), 0
    for block in correlation.blocks:
        lags = 0 if block.independent else min(int(np.ceil(HAC_LAGS_PER_GAIN / max(block.power_gain, 1e-3))),
                                               int(HAC_MAX_SHARE * block.samples))
        for j in range(B.shape[1]):
            u = B[start : start + block.samples, j] * r[start : start + block.samples, j, None]
            meat += u.T @ u
            for lag in range(1, min(lags, block.samples - 1) + 1):
                c = (1.0 - lag / (lags + 1.0)) * (u[lag:].T @ u[:-lag])
                meat += c + c.T
        start += block.samples
    return meat


def _solve(W, Z, tau, weights):
    """(beta, G^-1 in scaled columns, column scales, zero columns, rank) of the weighted IV normal equations."""
    n, dof, nb = W.shape
    w = np.asarray(weights, dtype=float)[None, :, None]
    A = (W * w).reshape(n * dof, nb)
    B = (Z * w).reshape(n * dof, nb)
    y = (tau * w[:, :, 0]).reshape(n * dof)
    scale = np.linalg.norm(B, axis=0)
    zero = [i for i in range(nb) if scale[i] == 0.0 or not np.any(A[:, i])]
    scale = np.where(scale > 0, scale, 1.0)
    G = (B / scale).T @ (A / scale)
    active = np.array([i not in zero for i in range(nb)])
    g_inverse = np.zeros((nb, nb))
    u, s, vt = np.linalg.svd(G[np.ix_(active, active)])
    keep = s > RANK_TOLERANCE * s[0] if s.size else s > 0
    g_inverse[np.ix_(active, active)] = (vt[keep].T / s[keep]) @ u[:, keep].T
    beta_s = g_inverse @ ((B / scale).T @ y)
    return beta_s / scale, g_inverse, scale, zero, int(keep.sum())
