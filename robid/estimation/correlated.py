"""Least squares on rows whose noise is correlated by a known linear filter (the low-pass of the non-periodic
path): unbiased per-joint noise levels from the residual and the exact covariance of the estimate.

Noise model (docs/estimation.md, "Correlated rows"). The rows of data set b are e_b = F_b w, w white on the
recorded samples with variance sigma_j^2 for joint j (one level per joint, the same in every data set), F_b a
known linear map (zero-phase low-pass, edge trimming, decimation; rows a data selection left out carry nothing).
Independent rows are F_b = I. With the weighted, column-scaled regressor A_w D^-1 = Q R (one weight w_j per joint)
and Q_k the rows of joint k, define G_k = Q_k^T Q_k and T_k = (F^T Q_k)^T (F^T Q_k) (F^T applied block by block;
T_k = w_k^2 M^T U_k M with U_k of the unweighted regressor and M = D^-1 R^-1, so the filter runs once per problem).
Then, with v_k = w_k^2 sigma_k^2,

    Cov(beta_s) = R^-1 (sum_k v_k T_k) R^-T                                                       (1)
    E ||w_j r_j||^2 = sum_k C_jk v_k,   C_jk = delta_jk (g N_j - 2 tr T_j) + tr(G_j T_k)                (2)

(``g N_j`` = sum over the used rows of joint j of (F F^T)_nn, the filter's noise power gain per row). (2) solved
for v gives sigma_j unbiased whatever the weights; (1) is the sandwich with the filtered noise's covariance
sigma^2 F F^T in the meat (a HAC covariance whose autocorrelation is known, not estimated). For F = I both reduce
to the independent-row formulas of :mod:`robid.estimation._lsq`.

Why it matters: when the regressor lies in the filter's pass band, F^T Q ~ Q and (1) is sigma^2 (A^T A)^-1 --
the raw noise level, not the filtered one (sigma^2 g, g = mean |H|^2 ~ 2 fc / fs). Treating the filtered rows as
independent understates every standard deviation by about sqrt(g).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq


@dataclass(frozen=True, eq=False)
class RowBlock:
    """``samples`` consecutive samples of the stacked problem (one data set) and how white noise reaches them:
    ``transpose(x)`` applies F^T to x (samples, k) and returns an array (m, k) of any length m (only inner
    products of its columns are used); None means independent rows (F = I). ``power_gain`` is (F F^T)_nn, the
    variance of a row per unit variance of the white noise (1 for independent rows)."""

    samples: int
    transpose: Callable[[np.ndarray], np.ndarray] | None = None
    power_gain: float = 1.0
    #: ``gram(x)`` = (F^T x)^T (F^T x) (k, k) computed without F^T (e.g. from the band of F F^T on decimated rows);
    #: None: from ``transpose``
    gram: Callable[[np.ndarray], np.ndarray] | None = None

    @property
    def independent(self) -> bool:
        return self.transpose is None


@dataclass(frozen=True, eq=False)
class RowCorrelation:
    """The blocks of the stacked problem in stacking order (their samples add up to the problem's N)."""

    blocks: tuple[RowBlock, ...]

    @property
    def independent(self) -> bool:
        return all(b.independent for b in self.blocks)

    def check(self, n: int) -> None:
        total = sum(b.samples for b in self.blocks)
        if total != n:
            raise RobidInputError(f"row correlation: its blocks cover {total} samples, the problem has {n}")

    def describe(self) -> str:
        gains = ", ".join(f"{b.power_gain:.3g}" for b in self.blocks if not b.independent)
        return (
            "rows correlated by the low-pass (noise power gain per row " + gains + "): covariance with the "
            "filtered noise's known autocorrelation, noise levels from the residual with the same model"
        )


@dataclass(frozen=True, eq=False)
class NoiseModel:
    """The weight-independent parts of equations (1)-(2) for one problem: ``filtered`` U_k = (F^T W_k)^T (F^T W_k)
    per joint (dof, nb, nb), W_k the rows of joint k of the unweighted regressor, and ``trace`` g N_j (dof,). With
    the weights and the QR of a solve, T_k = w_k^2 M^T U_k M, M = D^-1 R^-1 (Q_k = w_k W_k M): the filter runs
    once per problem, not once per re-weighting."""

    filtered: np.ndarray
    trace: np.ndarray

    def products(self, scale: np.ndarray, r_inverse: np.ndarray, weights: np.ndarray, zero: tuple[int, ...]):
        """T_k (dof, p, p) for a solve with column scales ``scale``, R^-1 ``r_inverse``, joint ``weights`` and
        columns ``zero`` left out (never excited)."""
        m = r_inverse / scale[:, None]
        m[list(zero), :] = 0.0
        return weights[:, None, None] ** 2 * np.einsum("ap,kab,bq->kpq", m, self.filtered, m, optimize=True)


def prepare(correlation: RowCorrelation, W: np.ndarray, used: np.ndarray) -> NoiseModel:
    """The :class:`NoiseModel` of the stacked problem W (N, dof, nb) with the rows ``used`` (N, dof)."""
    n, dof, nb = W.shape
    correlation.check(n)
    out = np.zeros((dof, nb, nb))
    start = 0
    for block in correlation.blocks:
        part = W[start : start + block.samples]
        start += block.samples
        for j in range(dof):  # joint by joint: F^T's output is longer than the block
            if block.gram is not None:
                out[j] += block.gram(part[:, j, :])
                continue
            z = part[:, j, :] if block.independent else np.asarray(block.transpose(part[:, j, :]), dtype=float)
            out[j] += z.T @ z
    return NoiseModel(filtered=out, trace=noise_trace(correlation, used))


def noise_trace(correlation: RowCorrelation, used: np.ndarray) -> np.ndarray:
    """g N_j: sum over the used rows of each joint of (F F^T)_nn, (dof,); ``used`` (N, dof) bool."""
    out = np.zeros(used.shape[1])
    start = 0
    for block in correlation.blocks:
        out += block.power_gain * used[start : start + block.samples].sum(axis=0)
        start += block.samples
    return out


def joint_variances(
    q: np.ndarray, residual: np.ndarray, joint_weights: np.ndarray, products: np.ndarray, trace: np.ndarray
) -> np.ndarray:
    """Per-joint white-noise variance sigma_j^2 from the residual (N, dof) of the weighted fit, equation (2);
    a joint whose solve gives a non-positive variance falls back to ||r_j||^2 / (g N_j - tr T_j)."""
    n, dof = residual.shape
    p = q.shape[1]
    qj = q.reshape(n, dof, p)
    G = np.matmul(qj.transpose(1, 2, 0), qj.transpose(1, 0, 2))
    C = np.einsum("jpq,kqp->jk", G, products)
    t = np.einsum("jpp->j", products)
    C[np.diag_indices(dof)] += trace - 2.0 * t
    ew2 = np.sum((residual * joint_weights) ** 2, axis=0)
    v = _lsq._solve_active(C, ew2, np.asarray(trace, dtype=float) > 0)  # a joint without rows has no noise level
    simple = np.sum(residual**2, axis=0) / np.maximum(trace - t, 1e-12)
    return np.where(v > 0, v / joint_weights**2, simple)


def covariance_scaled(r_inverse: np.ndarray, products: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Equation (1) in column-scaled coordinates: R^-1 (sum_k v_k T_k) R^-T."""
    meat = np.einsum("k,kpq->pq", v, products)
    return r_inverse @ meat @ r_inverse.T
