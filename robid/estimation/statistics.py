"""Statistics of an estimate: correlation matrix, strongly correlated pairs, regressor conditioning.

Equations: docs/estimation.md section "Uncertainty".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def correlation_matrix(covariance: np.ndarray) -> np.ndarray:
    """``rho_ij = C_ij / sqrt(C_ii C_jj)``; rows/columns of parameters with zero or infinite variance are NaN
    off the diagonal (1 on it)."""
    cov = np.asarray(covariance, dtype=float)
    d = np.sqrt(np.diag(cov))
    ok = np.isfinite(d) & (d > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = cov / np.outer(d, d)
    rho[~ok, :] = np.nan
    rho[:, ~ok] = np.nan
    np.fill_diagonal(rho, 1.0)
    return np.clip(rho, -1.0, 1.0)


@dataclass(frozen=True)
class CorrelatedPair:
    first: str
    second: str
    correlation: float


def correlated_pairs(
    covariance: np.ndarray, names: Sequence[str], threshold: float = 0.95
) -> tuple[CorrelatedPair, ...]:
    """All pairs with ``|rho| > threshold``, strongest first."""
    rho = correlation_matrix(covariance)
    i, j = np.triu_indices(len(names), k=1)
    sel = np.abs(np.nan_to_num(rho[i, j])) > threshold
    pairs = [CorrelatedPair(names[a], names[b], float(rho[a, b])) for a, b in zip(i[sel], j[sel], strict=True)]
    return tuple(sorted(pairs, key=lambda p: -abs(p.correlation)))


def weighted_regressor(W: np.ndarray, joint_weights: np.ndarray) -> np.ndarray:
    """Stacked ``(N*dof, nb)`` regressor with the rows of joint j multiplied by ``joint_weights[j]``."""
    W = np.asarray(W, dtype=float)
    n, dof, nb = W.shape
    return (W * np.asarray(joint_weights, dtype=float)[None, :, None]).reshape(n * dof, nb)


def condition_numbers(A: np.ndarray) -> tuple[float, float]:
    """(2-norm condition number of A, the same with unit-norm columns)."""
    s = np.linalg.svd(A, compute_uv=False)
    norms = np.linalg.norm(A, axis=0)
    norms = np.where(norms == 0, 1.0, norms)
    ss = np.linalg.svd(A / norms, compute_uv=False)
    raw = float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
    scaled = float(ss[0] / ss[-1]) if ss[-1] > 0 else float("inf")
    return raw, scaled


def isolated_relative_std_percent(W: np.ndarray, joint_weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Relative std a parameter would have if its column were orthogonal to all others, in percent.

    In the noise-scaled regressor (rows of joint j times ``w_j = 1/sigma_j``) a column ``a_i`` alone gives
    ``std_i = 1/||a_i||``; the actual std is never smaller (``[(A^T A)^-1]_ii >= 1/(a_i^T a_i)``). A large value
    means the data barely excite that column (its contribution ``|beta_i| ||a_i||`` is near the noise), as
    opposed to a parameter that is excited but confounded with others.
    """
    A = weighted_regressor(W, joint_weights)
    norms = np.linalg.norm(A, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 100.0 / (norms * np.abs(np.asarray(values, dtype=float)))
    return np.where(np.isfinite(out), out, np.inf)
