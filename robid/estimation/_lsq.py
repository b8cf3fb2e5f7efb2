"""Internal numerics shared by the estimators: stacking, a column-scaled QR solve, leverages, sandwich covariance.

Stacking convention (docs/estimation.md): the regressor ``W`` is ``(N, dof, nb)`` and the torque ``tau`` is
``(N, dof)``; the stacked system has ``N * dof`` rows ordered sample by sample, ``row = n * dof + j``, so the
joint of a row is ``row % dof``. Every joint gets its own weight (one noise level per joint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError


def check_problem(
    W: np.ndarray, tau: np.ndarray, names: list[str] | tuple[str, ...] | None
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Check shapes and values; return float arrays and the parameter names."""
    W = np.asarray(W, dtype=float)
    tau = np.asarray(tau, dtype=float)
    if W.ndim != 3:
        raise RobidInputError(f"regressor: expected shape (N, dof, nb), got {W.shape}")
    if tau.ndim != 2 or tau.shape != W.shape[:2]:
        raise RobidInputError(f"torque: expected shape {W.shape[:2]} (N, dof) to match the regressor, got {tau.shape}")
    n, dof, nb = W.shape
    if n * dof <= nb:
        raise RobidInputError(f"regressor: {n * dof} equations for {nb} parameters; need more samples than parameters")
    for label, arr in (("regressor", W), ("torque", tau)):
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = np.argwhere(bad)[0]
            raise RobidInputError(
                f"{label}: non-finite value at index {tuple(int(i) for i in idx)} ({int(bad.sum())} in all)"
            )
    if names is None:
        names = tuple(f"p{i}" for i in range(nb))
    names = tuple(str(s) for s in names)
    if len(names) != nb:
        raise RobidInputError(f"parameter names: {len(names)} names for {nb} regressor columns")
    return W, tau, names


@dataclass(frozen=True)
class WeightedSolve:
    """Solution of min ||diag(w) (A beta - y)||^2 with the factors needed for statistics."""

    beta: np.ndarray  # (p,)
    scale: np.ndarray  # (p,) column norms of the weighted regressor (1 where a column is zero)
    q: np.ndarray  # (M, p) thin Q of the column-scaled weighted regressor
    r: np.ndarray  # (p, p) R of the column-scaled weighted regressor
    singular_values_scaled: np.ndarray  # singular values of the column-scaled weighted regressor
    condition_number: float  # 2-norm condition number of the weighted regressor as given
    condition_number_scaled: float  # same with unit-norm columns
    rank: int
    zero_columns: tuple[int, ...]


#: a column whose norm is below this fraction of the largest column's is treated as never excited (all zero)
ZERO_COLUMN = 1e-12


def weighted_solve(A: np.ndarray, y: np.ndarray, row_weights: np.ndarray, total_rows: int | None = None
                   ) -> WeightedSolve:
    """Weighted least squares by QR of the column-scaled weighted regressor.

    Solves ``min_beta || diag(w) (A beta - y) ||_2`` as ``A_w D^-1 = Q R``, ``beta = D^-1 R^-1 Q^T y_w`` with
    ``D = diag(column norms of A_w)``; the scaling keeps the triangular solve accurate when columns differ by
    orders of magnitude (e.g. reflected rotor inertias against first moments). A numerically rank-deficient
    problem is solved in the least-norm sense through the SVD of R; ``rank`` says so (columns never excited,
    ``zero_columns``, count against it and get the value 0). ``total_rows``: the rows of the problem ``A``
    stands for when it is a compressed one (robid.estimation.compressed; default ``A``'s own), for the rank
    tolerance.
    """
    Aw = A * row_weights[:, None]
    yw = y * row_weights
    scale = np.linalg.norm(Aw, axis=0)
    # a column at the level of rounding errors (a joint held still: its velocity is 1e-16, not 0) is a column
    # never excited; unit scaling would blow it up into a full column and its estimate into nonsense
    is_zero = scale <= ZERO_COLUMN * max(float(scale.max(initial=0.0)), 1e-300)
    zero = tuple(int(i) for i in np.flatnonzero(is_zero))
    Aw = np.where(is_zero[None, :], 0.0, Aw)
    scale = np.where(is_zero, 1.0, scale)
    As = Aw / scale
    q, r = np.linalg.qr(As, mode="reduced")
    s_scaled = np.linalg.svd(r, compute_uv=False)
    s_raw = np.linalg.svd(r * scale[None, :], compute_uv=False)
    tol = s_scaled[0] * max(As.shape[0] if total_rows is None else total_rows, As.shape[1]) * np.finfo(float).eps
    rank = int(np.sum(s_scaled > tol))
    qty = q.T @ yw
    if rank == r.shape[0]:
        beta_s = np.linalg.solve(r, qty)
    else:
        beta_s = np.linalg.lstsq(r, qty, rcond=tol / s_scaled[0])[0]
    beta_s[is_zero] = 0.0  # the least-norm value of a column that is not there
    cond_raw = float(s_raw[0] / s_raw[-1]) if s_raw[-1] > 0 else float("inf")
    cond_scaled = float(s_scaled[0] / s_scaled[-1]) if s_scaled[-1] > 0 else float("inf")
    return WeightedSolve(
        beta=beta_s / scale,
        scale=scale,
        q=q,
        r=r,
        singular_values_scaled=s_scaled,
        condition_number=cond_raw,
        condition_number_scaled=cond_scaled,
        rank=rank,
        zero_columns=zero,
    )


def used_rows(W: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """(N, dof) bool: the (sample, joint) rows that carry an equation.

    A row whose regressor and torque are both all zero is a row the data selection left out (robid.identification
    zeroes them, so that every joint keeps the (N, dof) layout): it adds nothing to the estimate, and it must not
    count as a degree of freedom either, or every residual variance would be divided by too many rows."""
    return np.any(np.asarray(W) != 0, axis=2) | (np.asarray(tau) != 0)


def joint_leverage(q: np.ndarray, dof: int) -> np.ndarray:
    """Sum of the hat-matrix diagonal over the rows of each joint, ``h_j`` (sums to the rank).

    ``E ||r_j||^2 = sigma_j^2 (N - h_j)`` when the weights are proportional to ``1/sigma_j``; ``N - h_j`` is the
    per-joint residual degree of freedom used for ``sigma_j`` (it reduces to Gautier's ``N_j - nb`` for one
    joint and splits the ``nb`` lost degrees of freedom among the joints that determine the parameters).
    """
    h = np.einsum("ij,ij->i", q, q)
    return h.reshape(-1, dof).sum(axis=0)


def per_joint_sigma(residual: np.ndarray, leverage: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``sigma_j = sqrt(||r_j||^2 / (N_j - h_j))`` from the (N, dof) unweighted residual; ``N_j`` = ``rows`` of
    joint j that carry an equation (:func:`used_rows`; default: all N)."""
    n = residual.shape[0] if rows is None else np.asarray(rows, dtype=float)
    dof_j = np.maximum(n - leverage, 1.0)
    return np.sqrt(np.sum(residual**2, axis=0) / dof_j)


def per_joint_sigma_unbiased(
    q: np.ndarray, residual: np.ndarray, joint_weights: np.ndarray, rows: np.ndarray | None = None
) -> np.ndarray:
    """Unbiased per-joint noise std from the residual of a weighted fit, whatever the weights.

    With ``e_w = (I - H) eps_w`` (``H = Q Q^T`` of the weighted regressor, ``eps_w`` independent with variance
    ``v_k = w_k^2 sigma_k^2`` on the rows of joint k):
    ``E ||e_w,j||^2 = sum_k C_jk v_k``, ``C_jk = delta_jk (N_j - 2 h_j) + tr(G_j G_k)``, ``G_j = Q_j^T Q_j``
    (``Q_j``: rows of joint j, ``h_j = tr G_j``, ``N_j`` its ``rows`` that carry an equation, default N: a row left
    out carries no noise). Solving this dof x dof system removes the bias of
    ``||r_j||^2/(N - h_j)`` when the weights are not ``1/sigma`` (e.g. OLS with one noisy joint leaking into the
    residual of a quiet one). Where the solve gives a non-positive variance (possible: the estimator is
    unbiased, not positive) that joint falls back to :func:`per_joint_sigma`.
    """
    n, dof = residual.shape
    p = q.shape[1]
    qj = q.reshape(n, dof, p)
    G = np.matmul(qj.transpose(1, 2, 0), qj.transpose(1, 0, 2))  # (dof, p, p), BLAS rather than einsum
    h = np.einsum("jpp->j", G)
    C = np.einsum("jpq,kqp->jk", G, G)
    n_j = n if rows is None else np.asarray(rows, dtype=float)
    C[np.diag_indices(dof)] += n_j - 2.0 * h
    ew2 = np.sum((residual * joint_weights) ** 2, axis=0)
    v = _solve_active(C, ew2, np.broadcast_to(n_j, (dof,)) > 0)
    simple = per_joint_sigma(residual, h, rows)
    exact = np.sqrt(np.clip(v, 0.0, None)) / joint_weights
    return np.where(v > 0, exact, simple)


def _solve_active(C: np.ndarray, ew2: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Solve ``C v = ew2`` over the joints that carry rows; a joint without any (e.g. one that never moved, every
    row left out by the speed threshold) has an all-zero row in C and no noise to estimate: variance 0 there,
    instead of a singular system that would send every joint to the fallback. -1 where the solve fails."""
    v = np.zeros(ew2.shape[0])
    idx = np.flatnonzero(active)
    try:
        v[idx] = np.linalg.solve(C[np.ix_(idx, idx)], ew2[idx])
    except np.linalg.LinAlgError:
        v[idx] = -1.0
    return v


def inverse_r(r: np.ndarray) -> np.ndarray:
    """R^-1 (pseudo-inverse if singular)."""
    try:
        return np.linalg.solve(r, np.eye(r.shape[0]))
    except np.linalg.LinAlgError:
        return np.linalg.pinv(r)


def sandwich_covariance(
    solve: WeightedSolve, A: np.ndarray, row_weights: np.ndarray, row_sigma: np.ndarray
) -> np.ndarray:
    """Covariance of the weighted LS estimate for independent rows with standard deviation ``row_sigma``.

    ``beta = B A^T Omega y`` with ``B = (A^T Omega A)^-1``, ``Omega = diag(w^2)``, so
    ``Cov = B (sum_rows w^4 sigma^2 a a^T) B``. When ``w = 1/sigma`` this is ``(A_w^T A_w)^-1``; otherwise it is
    still the true covariance (heteroscedastic-consistent), which keeps OLS standard deviations honest when the
    joints have different noise levels. Computed in column-scaled coordinates.
    """
    rinv = inverse_r(solve.r)
    bread = rinv @ rinv.T  # (A_s^T A_s)^-1
    As = A * row_weights[:, None] / solve.scale
    c = As * (row_weights * row_sigma)[:, None]
    meat = c.T @ c
    cov_s = bread @ meat @ bread
    cov = cov_s / np.outer(solve.scale, solve.scale)
    return 0.5 * (cov + cov.T)


def rows_of_joint(values_per_joint: np.ndarray, n: int) -> np.ndarray:
    """Broadcast a (dof,) per-joint quantity to the N*dof stacked rows."""
    return np.tile(np.asarray(values_per_joint, dtype=float), n)


def residual_sigma(residual: np.ndarray, used: np.ndarray, nb: int) -> np.ndarray:
    """Per-joint residual standard deviation with the parameters' degrees of freedom shared by row counts."""
    counts = used.sum(axis=0).astype(float)
    share = nb * counts / max(counts.sum(), 1.0)
    ss = np.sum((residual * used) ** 2, axis=0)
    return np.sqrt(ss / np.maximum(counts - share, 1.0))


def condition_numbers(A: np.ndarray) -> tuple[float, float]:
    """2-norm condition number of A, and of A with unit-norm columns (zero columns left out)."""
    s = np.linalg.svd(A, compute_uv=False)
    norms = np.linalg.norm(A, axis=0)
    s_scaled = np.linalg.svd(A[:, norms > 0] / norms[norms > 0], compute_uv=False)
    return (float(s[0] / s[-1]) if s[-1] > 0 else np.inf,
            float(s_scaled[0] / s_scaled[-1]) if s_scaled.size and s_scaled[-1] > 0 else np.inf)
