"""Linear estimators of (base) parameters from a stacked regressor: OLS, two-step WLS, robust IRLS.

All take ``W`` of shape ``(N, dof, nb)`` and ``tau`` of shape ``(N, dof)`` (``tau[n] = W[n] @ beta + e[n]``),
stack them sample by sample and weight every row by a per-joint weight. The noise model is independent
errors with one standard deviation ``sigma_j`` per joint. The reported covariance is computed so that it stays
honest when the weights are not exactly ``1/sigma_j`` (sandwich form, see :func:`_lsq.sandwich_covariance`).
Equations and thresholds: docs/estimation.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from robid.defaults import IRLS, OLS, WLS
from robid.errors import RobidInputError
from robid.estimation import _lsq, correlated
from robid.estimation.compressed import CompressedProblem, compress
from robid.estimation.correlated import RowCorrelation
from robid.estimation.results import EstimationResult

__all__ = ["EstimationResult", "estimate", "irls", "ols", "wls"]

_SIGMA_FLOOR = 1e-12


def _solve_and_report(
    problem: CompressedProblem,
    full_residual: Callable[[np.ndarray], np.ndarray],
    names: tuple[str, ...],
    joint_weights: np.ndarray,
    method: str,
    notes: Sequence[str],
    iterations: int,
    sigma_for_covariance: np.ndarray | None = None,
    noise_model: correlated.NoiseModel | None = None,
) -> tuple[EstimationResult, _lsq.WeightedSolve]:
    """The weighted solve on the compressed ``problem`` (:mod:`robid.estimation.compressed`) and its result;
    ``full_residual(beta)`` is the (N, dof) residual of the full problem that the result keeps; the result's notes
    are ``notes`` followed by the solve's own."""
    nb = problem.W.shape[2]
    own: list[str] = []
    sol, sigma, white, cov = _solve(problem, joint_weights, sigma_for_covariance, noise_model)
    residual = full_residual(sol.beta)
    converged = True
    if sol.zero_columns:
        own.append(
            "columns never excited (all zero): "
            + ", ".join(names[i] for i in sol.zero_columns)
            + "; their values are set to 0 and are not identified"
        )
    excited = nb - len(sol.zero_columns)
    if sol.rank < excited:
        converged = False
        own.append(
            f"regressor is numerically rank deficient (rank {sol.rank} of {excited} excited columns, scaled condition "
            f"number {sol.condition_number_scaled:.3g}): least-norm solution; standard deviations are not meaningful"
        )
    for i in sol.zero_columns:
        cov[i, :] = 0.0
        cov[:, i] = 0.0
        cov[i, i] = np.inf
    result = EstimationResult.build(
        method=method,
        names=names,
        values=sol.beta,
        covariance=cov,
        residual=residual,
        sigma=sigma,
        weights=joint_weights,
        condition_number=sol.condition_number,
        condition_number_scaled=sol.condition_number_scaled,
        notes=(*notes, *own),
        converged=converged,
        iterations=iterations,
        rows_used=int(problem.rows.sum()),
        white_sigma=white,
    )
    return result, sol


def _solve(
    problem: CompressedProblem,
    joint_weights: np.ndarray,
    sigma_for_covariance: np.ndarray | None,
    noise_model: correlated.NoiseModel | None,
) -> tuple[_lsq.WeightedSolve, np.ndarray, np.ndarray | None, np.ndarray]:
    """(solve, sigma per joint, white sigma or None, covariance) of the weighted problem: every statistic needs
    the rows of a joint only through their Gram matrices, which the compressed problem keeps."""
    n, dof, nb = problem.W.shape
    A = problem.W.reshape(n * dof, nb)
    row_w = _lsq.rows_of_joint(joint_weights, n)
    sol = _lsq.weighted_solve(A, problem.tau.reshape(n * dof), row_w, total_rows=problem.total_rows)
    residual = problem.residual(sol.beta)
    if noise_model is not None:
        sigma, white, cov = _correlated_statistics(sol, residual, joint_weights, problem.rows, noise_model,
                                                   sigma_for_covariance)
        return sol, sigma, white, cov
    sigma = _lsq.per_joint_sigma_unbiased(sol.q, residual, joint_weights, problem.rows)
    sig_cov = sigma if sigma_for_covariance is None else sigma_for_covariance
    return sol, sigma, None, _lsq.sandwich_covariance(sol, A, row_w, _lsq.rows_of_joint(sig_cov, n))


def _correlated_statistics(
    sol: _lsq.WeightedSolve,
    residual: np.ndarray,
    joint_weights: np.ndarray,
    rows: np.ndarray,
    model: correlated.NoiseModel,
    sigma_given: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma per row, white sigma, covariance) for rows correlated by a known filter
    (:mod:`robid.estimation.correlated`): the white-noise level of every joint from the residual, equation (2), or
    from ``sigma_given`` (per row), and the covariance of equation (1). ``rows`` (dof,): the rows of each joint
    that carry an equation; ``residual``: full or compressed (only its per-joint sums of squares are used)."""
    r_inverse = _lsq.inverse_r(sol.r)
    products = model.products(sol.scale, r_inverse, joint_weights, sol.zero_columns)
    gain = model.trace / np.maximum(rows, 1)  # mean (F F^T)_nn over each joint's rows
    if sigma_given is None:
        white = np.sqrt(correlated.joint_variances(sol.q, residual, joint_weights, products, model.trace))
    else:
        white = np.asarray(sigma_given, dtype=float) / np.sqrt(np.maximum(gain, 1e-300))
    cov_s = correlated.covariance_scaled(r_inverse, products, (joint_weights * white) ** 2)
    cov = cov_s / np.outer(sol.scale, sol.scale)
    return white * np.sqrt(gain), white, 0.5 * (cov + cov.T)


def _noise_model(W: np.ndarray, tau: np.ndarray, correlation: RowCorrelation | None) -> correlated.NoiseModel | None:
    if correlation is None or correlation.independent:
        return None
    return correlated.prepare(correlation, W, _lsq.used_rows(W, tau))


def ols(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str] | None = None,
    *,
    correlation: RowCorrelation | None = None,
) -> EstimationResult:
    """Ordinary least squares ``beta = argmin ||A beta - y||^2`` over all joints together.

    The covariance is *not* the textbook ``s^2 (A^T A)^-1`` with one pooled ``s``: with joints of different
    noise levels that misstates every standard deviation. It is the sandwich
    ``(A^T A)^-1 (sum_j sigma_j^2 A_j^T A_j) (A^T A)^-1`` with ``sigma_j^2 = ||r_j||^2 / (N - h_j)`` from the
    OLS residual of joint j (``h_j``: the joint's share of the leverages). With ``correlation`` (rows filtered by
    a known low-pass) the meat holds the filtered noise's covariance instead (:mod:`robid.estimation.correlated`).
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    return ols_compressed(compress(W, tau), _full_residual(W, tau), names, _noise_model(W, tau, correlation),
                          correlation)


def ols_compressed(
    problem: CompressedProblem,
    full_residual: Callable[[np.ndarray], np.ndarray],
    names: Sequence[str],
    noise_model: correlated.NoiseModel | None = None,
    correlation: RowCorrelation | None = None,
) -> EstimationResult:
    """:func:`ols` on the compressed problem (:mod:`robid.estimation.compressed`) of a regressor that need not be
    held: ``full_residual(beta)`` gives the (N, dof) residual, ``noise_model`` the correlated rows' model
    (:func:`robid.estimation.correlated.prepare`, None for independent rows) of ``correlation``."""
    names = tuple(str(s) for s in names)
    notes = ["OLS: unweighted; covariance = heteroscedastic sandwich with per-joint residual variances"]
    notes += _correlation_notes(correlation)
    result, _ = _solve_and_report(problem, full_residual, names, np.ones(problem.W.shape[1]), "ols", notes, 1,
                                  noise_model=noise_model)
    return result


def _full_residual(W: np.ndarray, tau: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda beta: tau - W @ beta


def _correlation_notes(correlation: RowCorrelation | None) -> list[str]:
    return [] if correlation is None or correlation.independent else [correlation.describe()]


def wls(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str] | None = None,
    *,
    noise_std: Sequence[float] | np.ndarray | None = None,
    covariance_from: str = "residual",
    steps: int | None = None,
    max_steps: int = 20,
    weight_tol: float = 1e-3,
    correlation: RowCorrelation | None = None,
) -> EstimationResult:
    """Weighted least squares with one weight per joint, ``w_j = 1/sigma_j`` (Gautier & Khalil practice).

    * ``noise_std`` given (e.g. the signal stage's noise estimate from the scatter between periods): weights
      ``1/noise_std``, one solve.
    * otherwise iterated from OLS: ``sigma_j`` from the residuals of the previous step (unbiased per-joint
      estimate, :func:`_lsq.per_joint_sigma_unbiased`), weights ``1/sigma_j``, solve; repeated until the weights
      change by less than ``weight_tol`` (relative; at most ``max_steps`` solves), or exactly ``steps`` solves
      (``steps=2`` is the classic two-step WLS). Iterating matters when the noise levels differ a lot: the OLS
      residual of a quiet joint carries leakage from the noisy ones, so one re-weighting under-weights it.

    ``covariance_from="residual"`` (default) computes the covariance with per-joint variances re-estimated from
    the final residuals (sandwich form), so model error that the noise estimate does not contain still shows
    in the standard deviations; ``"given"`` uses ``noise_std`` as exact: ``Cov = (A_w^T A_w)^-1``.

    ``correlation``: the rows are filtered by a known low-pass (:mod:`robid.estimation.correlated`); every step's
    noise levels (the weights) and the covariance then come from the filtered noise's model; ``noise_std`` is
    then the std of one filtered row.
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    return wls_compressed(compress(W, tau), _full_residual(W, tau), names, _noise_model(W, tau, correlation),
                          correlation, noise_std=noise_std, covariance_from=covariance_from, steps=steps,
                          max_steps=max_steps, weight_tol=weight_tol)


def wls_compressed(
    problem: CompressedProblem,
    full_residual: Callable[[np.ndarray], np.ndarray],
    names: Sequence[str],
    noise_model: correlated.NoiseModel | None = None,
    correlation: RowCorrelation | None = None,
    *,
    noise_std: Sequence[float] | np.ndarray | None = None,
    covariance_from: str = "residual",
    steps: int | None = None,
    max_steps: int = 20,
    weight_tol: float = 1e-3,
) -> EstimationResult:
    """:func:`wls` on the compressed problem (:mod:`robid.estimation.compressed`) of a regressor that need not be
    held: ``full_residual(beta)`` gives the (N, dof) residual of the final estimate, ``noise_model`` the
    correlated rows' model (:func:`robid.estimation.correlated.prepare`, None for independent rows) of
    ``correlation``; the other arguments as :func:`wls`."""
    names = tuple(str(s) for s in names)
    dof = problem.W.shape[1]
    model = noise_model
    if covariance_from not in ("residual", "given"):
        raise RobidInputError(f"wls: covariance_from must be 'residual' or 'given', got {covariance_from!r}")
    if noise_std is not None:
        weights = 1.0 / _given_noise(noise_std, dof)
        notes = ["WLS: per-joint weights 1/noise_std from the given noise estimate"]
        iterations = 1
    else:
        if steps is not None and steps < 2:
            raise RobidInputError("wls: steps must be >= 2 when the weights come from the residuals")
        if covariance_from == "given":
            raise RobidInputError("wls: covariance_from='given' needs noise_std")
        weights, iterations, note = _residual_weights(problem, steps, max_steps, weight_tol, model)
        notes = [note]
    sigma_cov = None
    if covariance_from == "given":
        sigma_cov = 1.0 / weights
        notes.append("covariance uses the given noise_std as exact: (A_w^T A_w)^-1")
    notes += _correlation_notes(correlation)
    result, _ = _solve_and_report(problem, full_residual, names, weights, WLS, notes, iterations, sigma_cov, model)
    if noise_std is not None:
        result = _check_given_noise(result, weights)
    return result


def _given_noise(noise_std: Sequence[float] | np.ndarray, dof: int) -> np.ndarray:
    noise = np.asarray(noise_std, dtype=float).reshape(-1)
    if noise.shape != (dof,) or np.any(~np.isfinite(noise)) or np.any(noise <= 0):
        raise RobidInputError(f"wls: noise_std must be {dof} positive finite values, got {noise_std!r}")
    return noise


def _residual_weights(
    problem: CompressedProblem,
    steps: int | None,
    max_steps: int,
    weight_tol: float,
    model: correlated.NoiseModel | None = None,
) -> tuple[np.ndarray, int, str]:
    """Per-joint weights ``1/sigma_j`` iterated from OLS (docstring of :func:`wls`): (weights, solves, note).

    Rows whose target is zero on every sample (homogeneous equations, e.g. the link rows of the elastic layout:
    the spring carries the link, docs/elastic.md section 2) keep the sigma of the first (OLS) solve. Their
    residual is ``-Y beta``: re-estimated, it shrinks with beta, their weight grows, the next solve shrinks beta
    further, and the iteration runs to the trivial beta = 0 that fits them exactly. Held at the OLS level (the
    equation error of those rows where nothing favours them), the rows with measured targets always pull beta
    away from zero: at beta = 0 their residual is bounded by the targets, so their weight stays finite."""
    weights = np.ones(problem.W.shape[1])
    homogeneous = ~np.any(problem.tau != 0.0, axis=0)  # R_j's torque column is zero exactly when tau_j is
    limit = steps if steps is not None else max_steps
    iterations = 1
    settled = False
    held = None
    while iterations < limit:
        sig = np.array(_solve(problem, weights, None, model)[1], dtype=float)
        if held is None:
            held = sig[homogeneous].copy()
        sig[homogeneous] = held
        sig = np.maximum(sig, _SIGMA_FLOOR * max(float(sig.max()), 1.0))
        new_weights = 1.0 / sig
        ratio = (new_weights / weights) / np.max(new_weights / weights)  # only relative weights matter
        change = np.max(np.abs(ratio - 1.0))
        weights = new_weights
        iterations += 1
        if steps is None and change < weight_tol:
            settled = True
            break
    if steps is not None:
        note = f"WLS ({steps}-step): per-joint weights 1/sigma_j from the residuals of the previous step"
    else:
        note = f"WLS: per-joint weights 1/sigma_j re-estimated from the residuals, {iterations} solves" + (
            "" if settled else f" (weights still changing after {max_steps} solves)"
        )
    if np.any(homogeneous):
        note += (f"; rows with target zero ({', '.join(str(j) for j in np.flatnonzero(homogeneous))}) keep the "
                 "sigma of the OLS step")
    return weights, iterations, note


def _check_given_noise(result: EstimationResult, weights: np.ndarray) -> EstimationResult:
    """Add a note where a joint's residual sigma and its given noise level differ by more than a factor 2."""
    ratio = result.sigma * weights
    off = [f"joint {j}: residual sigma / given noise = {r:.2g}" for j, r in enumerate(ratio) if not 0.5 <= r <= 2]
    if not off:
        return result
    return _with_notes(
        result,
        [
            "residual and given noise level disagree by more than a factor 2 (model error or wrong noise "
            "estimate): " + "; ".join(off)
        ],
    )


def _with_notes(result: EstimationResult, extra: list[str]) -> EstimationResult:
    from dataclasses import replace

    return replace(result, notes=tuple(result.notes) + tuple(extra))


# --- robust M-estimation -------------------------------------------------------------------------------------

_TUNING = {"huber": 1.345, "bisquare": 4.685}  # 95 % efficiency at the Gaussian for both


def _psi(u: np.ndarray, loss: str, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """psi(u), psi'(u) and the IRLS weight psi(u)/u."""
    a = np.abs(u)
    if loss == "huber":
        inside = a <= c
        psi = np.where(inside, u, c * np.sign(u))
        dpsi = inside.astype(float)
        w = np.where(inside, 1.0, c / np.maximum(a, 1e-300))
    else:  # bisquare
        inside = a < c
        t = (u / c) ** 2
        psi = np.where(inside, u * (1 - t) ** 2, 0.0)
        dpsi = np.where(inside, (1 - t) * (1 - 5 * t), 0.0)
        w = np.where(inside, (1 - t) ** 2, 0.0)
    return psi, dpsi, w


def _mad_scale(r: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Per-joint robust scale ``MAD / 0.6745`` of the (N, dof) residual over the ``used`` rows (the zeros of rows
    the data selection left out would pull the median absolute deviation down)."""
    out = np.zeros(r.shape[1])
    for j in range(r.shape[1]):
        x = r[used[:, j], j] if used[:, j].any() else r[:, j]
        out[j] = np.median(np.abs(x - np.median(x))) / 0.6744897501960817
    return out


def irls(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str] | None = None,
    *,
    loss: str = "huber",
    tuning: float | None = None,
    max_iterations: int = 50,
    tol: float = 1e-8,
) -> EstimationResult:
    """Robust M-estimate by iteratively reweighted least squares, one robust scale per joint.

    Loss ``"huber"`` (default, ``c = 1.345``) or ``"bisquare"`` (Tukey, ``c = 4.685``); both give 95 % efficiency
    under Gaussian noise. Start: two-step WLS. Each iteration: ``s_j = MAD(r_j)/0.6745``, ``u = r/s_j``, row
    weights ``psi(u)/u / s_j^2``, weighted solve; stop when the scaled parameter change is below ``tol``.
    Covariance (Huber's sandwich in standardised units, ``X = A / s_j``):
    ``Cov = (X^T diag(psi'(u)) X)^-1 (X^T diag(psi(u)^2) X) (X^T diag(psi'(u)) X)^-1 * M/(M - nb)``.
    Bisquare can make the bread indefinite (redescending psi); it then falls back to per-joint mean ``psi'``
    (Huber's H1 form), and says so. ``sigma`` reports the robust scale ``s_j``.
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    if loss not in _TUNING:
        raise RobidInputError(f"irls: loss must be one of {sorted(_TUNING)}, got {loss!r}")
    c = float(tuning) if tuning is not None else _TUNING[loss]
    n, dof, nb = W.shape
    notes = [f"IRLS with {loss} loss (c = {c:g}), per-joint robust scale MAD/0.6745, started from 2-step WLS"]
    used = _lsq.used_rows(W, tau)
    beta, converged, it, step = _reweighted_solves(W, tau, wls(W, tau, names), loss, c, max_iterations, tol)
    if not converged:
        notes.append(f"IRLS did not converge in {max_iterations} iterations (last scaled step {step:.3g})")
    r = tau - W @ beta
    s = _robust_scale(r, used)
    psi, dpsi, w = _psi((r / s).reshape(-1), loss, c)
    srow = _lsq.rows_of_joint(s, n)
    A = W.reshape(n * dof, nb)
    cov, covariance_notes = _m_estimate_covariance(A / srow[:, None], psi, dpsi, dof, used)
    final = _lsq.weighted_solve(A, tau.reshape(n * dof), np.sqrt(w) / srow)
    flat = used.reshape(-1)
    n_down = int(np.sum((w < 0.999) & flat))
    notes += [*covariance_notes, f"{n_down} of {int(flat.sum())} rows down-weighted (weight < 0.999); "
              f"{int(np.sum((w == 0) & flat))} rejected"]
    if final.rank < nb:
        notes.append(f"weighted regressor rank deficient (rank {final.rank} of {nb})")
        converged = False
    return EstimationResult.build(
        method=f"irls-{loss}",
        names=names,
        values=beta,
        covariance=cov,
        residual=r,
        sigma=s,
        weights=1.0 / s,
        condition_number=final.condition_number,
        condition_number_scaled=final.condition_number_scaled,
        notes=notes,
        converged=converged,
        iterations=it,
        rows_used=int(used.sum()),
    )


def _robust_scale(r: np.ndarray, used: np.ndarray) -> np.ndarray:
    """:func:`_mad_scale` kept above a floor relative to the largest joint's scale (a joint without residual)."""
    s = _mad_scale(r, used)
    return np.maximum(s, _SIGMA_FLOOR * max(float(s.max()), 1.0))


def _reweighted_solves(
    W: np.ndarray, tau: np.ndarray, start: EstimationResult, loss: str, c: float, max_iterations: int, tol: float
) -> tuple[np.ndarray, bool, int, float]:
    """The IRLS iterations of :func:`irls` from ``start``: (beta, converged, iterations, last scaled step)."""
    n, dof, nb = W.shape
    A = W.reshape(n * dof, nb)
    y = tau.reshape(n * dof)
    beta = np.array(start.values)
    used = _lsq.used_rows(W, tau)
    scale_ref = np.maximum(np.abs(beta), 1e-12) + start.std
    it, step = 0, float("inf")
    for iteration in range(1, max_iterations + 1):
        it = iteration
        r = tau - W @ beta
        s = _robust_scale(r, used)
        _, _, w = _psi((r / s).reshape(-1), loss, c)
        sol = _lsq.weighted_solve(A, y, np.sqrt(w) / _lsq.rows_of_joint(s, n))
        step = np.max(np.abs(sol.beta - beta) / scale_ref)
        beta = sol.beta
        if step < tol:
            return beta, True, it, step
    return beta, False, it, step


def _m_estimate_covariance(
    X: np.ndarray, psi: np.ndarray, dpsi: np.ndarray, dof: int, used: np.ndarray
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Huber's sandwich ``B^-1 (X^T diag(psi^2) X) B^-1 * M/(M - nb)``, ``B = X^T diag(psi') X``, of the
    standardised regressor ``X``, on unit-norm columns (M: the rows that carry an equation, ``used`` (N, dof));
    an indefinite ``B`` (bisquare) falls back to the per-joint mean of psi' over those rows (Huber's H1 form)
    with a note; returns (covariance, notes)."""
    rows, nb = X.shape
    notes: tuple[str, ...] = ()
    n = rows // dof
    rows_used = int(used.sum())
    colscale = np.linalg.norm(X, axis=0)
    colscale = np.where(colscale == 0, 1.0, colscale)
    Xs = X / colscale
    bread = Xs.T @ (Xs * dpsi[:, None])
    try:
        np.linalg.cholesky(bread)
    except np.linalg.LinAlgError:
        mean_d = np.array([dpsi.reshape(n, dof)[used[:, j], j].mean() for j in range(dof)])
        bread = Xs.T @ (Xs * _lsq.rows_of_joint(mean_d, n)[:, None])
        notes = ("IRLS covariance: psi' bread indefinite, used per-joint mean psi' (Huber H1 form)",)
    meat = Xs.T @ (Xs * (psi**2)[:, None]) * rows_used / (rows_used - nb)
    binv = np.linalg.pinv(bread)
    cov = (binv @ meat @ binv) / np.outer(colscale, colscale)
    return 0.5 * (cov + cov.T), notes


def estimate(
    W: np.ndarray, tau: np.ndarray, names: Sequence[str] | None = None, *, method: str = WLS, **options
) -> EstimationResult:
    """Dispatch by name: ``ols``, ``wls``, ``irls`` (robid.defaults; options passed on)."""
    table = {OLS: ols, WLS: wls, IRLS: irls}
    if method not in table:
        raise RobidInputError(
            f"method: expected one of {sorted(table)} (or 'consistent', see consistent.py), got {method!r}"
        )
    return table[method](W, tau, names, **options)
