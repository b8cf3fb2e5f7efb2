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

Rows correlated within a period (``periods``): when a block of rows is one averaged period of a periodic run,
its noise is stationary over the period but need not be white -- the link rows of the elastic layout (target
zero) carry the encoders' noise times the spring, the inertia and the damping, differentiated in the position
band (a few hundred of the period's harmonics), so neighbouring samples share it and the white meat above
understates the standard deviations (1.4-2.4 times on the demo run, docs/elastic.md section 3). The meat is then
the sandwich with the residual's circulant autocovariance, C = F^H diag(lambda) F / M (F the DFT of the M
samples, lambda_h the noise spectrum, E|E_h|^2 = M lambda_h for the residual's DFT E):

    meat = sum_j w_j^4 (1/M) sum_h lambda_jh Re(conj(FW_j)_h^T (FW_j)_h)
    lambda_jh = mean_{|h'-h| <= L} |E_jh'|^2 / (M f_j)

the frequency-domain HAC estimate of Brillinger (1981, sec. 5.4: the periodogram smoothed over 2L + 1 = 17
neighbouring frequencies, Daniell's kernel), f_j the fraction of row j's samples used (the data selection
zeroes the others). For white noise lambda = sigma^2 and it is the white meat (Parseval). lambda_jh is taken
no lower than sigma_j^2, the row's mean level that the white meat uses: where the residual is weaker than its
mean (the drive rows' low harmonics, when the controller's response to the encoder noise puts torque jitter at
high frequencies), what lies there is not only noise -- model errors of the band and of the Coulomb steps are
periodic and land at the motion's harmonics -- and the white meat, not the spectrum, is what covered them (on
the 2R of tests/test_elastic_identification.py the spectrum alone gives 0.5-0.85 times the WLS std and |z| rms
1.8). The covariance is thus the larger of the two, in every direction: conservative.

The residual's periodogram has a blind spot of its own: where the regressor lives -- the motion's harmonics,
which are also where ``|FW_h|`` weighs the meat -- the fitted parameters absorb part of the noise, so the smoothed
periodogram there is depleted (the leverage of each harmonic). On the demo's elastic run the stiffness and damping
std came out 1.2-1.8 times too small against a simulation of the measured noise through the estimator. Given
``model_meat``, the meat the noise model predicts (robid.identification.regressor_noise_meat: the encoders'
measured noise spectra through the estimating equation, and the torque noise) is combined with the residuals' by
:func:`dominating`: the larger in every direction, so what the model misses (model errors) and what the residuals
miss (their depletion) are both covered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.ndimage import uniform_filter1d

from robid.defaults import EIV
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
    method: str = EIV,
    periods: Sequence[int] | None = None,
    model_meat: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray | None] | None = None,
) -> EstimationResult:
    """The corrected least-squares estimate (module docstring). ``noise_gram`` (rows, nb, nb): per row j,
    ``S_j = E[D_j^T D_j]`` summed over its used rows. ``weights`` per row; default 1/sigma_j from the residual of
    an unweighted corrected solve (two steps). ``periods``: the numbers of samples of consecutive blocks of W that
    are each one period of a periodic run (they add up to N): their covariance counts the noise's correlation
    within the period (module docstring); None: independent rows. ``model_meat(W, beta, weights)``: the meat the
    noise model predicts (robid.identification.regressor_noise_meat) or None; the covariance then takes the larger
    of it and the residuals' meat in every direction (module docstring)."""
    W, tau, names = _lsq.check_problem(W, tau, names)
    dof, nb = W.shape[1], W.shape[2]
    S = np.asarray(noise_gram, dtype=float)
    if S.shape != (dof, nb, nb):
        raise RobidInputError(f"eiv: noise_gram has shape {S.shape}, expected {(dof, nb, nb)}")
    used = _lsq.used_rows(W, tau)
    notes = [f"{method}: corrected least squares, beta = (W^T W - S)^-1 W^T tau, S the regressor noise from the "
             "processed signals' noise"]
    if weights is None:
        first = _solve(W, tau, S, np.ones(dof))[0]
        weights = 1.0 / np.maximum(_lsq.residual_sigma(tau - W @ first, used, nb), 1e-12)
        notes.append("weights 1/sigma_j from the residual of the unweighted corrected solve (two steps)")
    weights = np.asarray(weights, dtype=float)
    beta, a_inverse, ratio = _solve(W, tau, S, weights)
    residual = tau - W @ beta
    sigma = _lsq.residual_sigma(residual, used, nb)
    meat, meat_notes = _meat(W, residual, used, weights, periods, sigma)
    notes.extend(meat_notes)
    modelled = None if model_meat is None else model_meat(W, beta, weights)
    if modelled is not None:
        meat = dominating(meat, modelled)
        notes.append("covariance: the larger, in every direction, of the residuals' and the noise model's (the "
                     "encoders' and torques' measured noise through the estimating equation)")
    cov = a_inverse @ meat @ a_inverse.T
    notes.append(f"the noise term is {100 * ratio:.2g} % of the normal matrix (trace ratio)")
    notes.extend(_noisy_columns(W, S, weights, names))
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


def _meat(W, residual, used, weights, periods, sigma) -> tuple[np.ndarray, tuple[str, ...]]:
    """The residuals' meat and its note: independent rows (``periods`` None), else the residual's spectrum per
    period."""
    if periods is None:
        return sum(weights[j] ** 4 * sigma[j] ** 2 * (W[:, j].T @ W[:, j]) for j in range(W.shape[1])), ()
    note = ("covariance with the residual's spectrum per period (rows correlated within a period: "
            f"periodogram smoothed over {SMOOTHING} harmonics)")
    return _periodic_meat(W, residual, used, weights, periods, sigma), (note,)


#: share of a column's observed power above which its noise makes the estimate and its first-order std unreliable
#: (noise amplitude about half the signal's)
NOISY_COLUMN_SHARE = 0.2


def _noisy_columns(W: np.ndarray, S: np.ndarray, weights: np.ndarray, names: Sequence[str]) -> list[str]:
    """One note naming the columns whose regressor noise is more than NOISY_COLUMN_SHARE of their observed power
    (diag S_w / diag W_w^T W_w): there the corrected estimate is far from its first-order behaviour (heavy tails,
    measured on the 2R of tests/test_errors_in_variables_elastic.py at noise/signal 0.4-1.1)."""
    w2 = np.asarray(weights, dtype=float) ** 2
    power = np.einsum("j,njp,njp->p", w2, W, W)
    share = np.einsum("j,jpp->p", w2, S) / np.maximum(power, 1e-300)
    noisy = [f"{names[p]} {100 * share[p]:.0f} %" for p in np.flatnonzero(share > NOISY_COLUMN_SHARE)]
    if not noisy:
        return []
    return [f"the regressor noise is a large share of these columns' power ({', '.join(noisy)}): their estimates "
            "and std are not reliable at this noise level (a narrower position band, more periods or a faster "
            "excitation of those terms helps)"]


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


def dominating(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A symmetric matrix M >= first and M >= second (Loewner order), the smallest such along the joint
    eigenvectors: with first = L L^T (L its square root on the diagonal's scale) and L^-1 second L^-T = U diag(l)
    U^T, M = L U diag(max(l, 1)) U^T L^T. Directions that ``first`` does not reach keep ``second``'s size."""
    first, second = 0.5 * (first + first.T), 0.5 * (second + second.T)
    scale = np.sqrt(np.maximum(np.maximum(np.diag(first), np.diag(second)), 1e-300))
    a, b = first / np.outer(scale, scale), second / np.outer(scale, scale)
    values, vectors = np.linalg.eigh(a)
    root = vectors * np.sqrt(np.maximum(values, 1e-12 * max(values.max(initial=0.0), 1e-300)))
    inverse = np.linalg.pinv(root)
    lam, U = np.linalg.eigh(inverse @ b @ inverse.T)
    combined = root @ (U * np.maximum(lam, 1.0)) @ U.T @ root.T
    return combined * np.outer(scale, scale)


#: harmonics over which the residual's periodogram is averaged for the periodic meat (Daniell's kernel, 2L + 1)
SMOOTHING = 17


def _periodic_meat(W: np.ndarray, residual: np.ndarray, used: np.ndarray, weights: np.ndarray,
                   periods: Sequence[int], sigma: np.ndarray) -> np.ndarray:
    """sum_j w_j^4 W_j^T C_j W_j with C_j the circulant autocovariance of row j's residual in each period block,
    its spectrum the smoothed periodogram, never below the row's mean level sigma_j^2 (module docstring)."""
    n, rows, nb = W.shape
    if sum(periods) != n or any(m < 1 for m in periods):
        raise RobidInputError(f"eiv: periods {tuple(periods)} do not add up to the problem's {n} samples")
    meat = np.zeros((nb, nb))
    start = 0
    for m in periods:
        block = slice(start, start + m)
        start += m
        for j in range(rows):
            kept = float(used[block, j].mean())
            if kept == 0.0:
                continue
            spectrum = np.abs(np.fft.fft(residual[block, j] * used[block, j])) ** 2 / (m * kept)
            spectrum = np.maximum(uniform_filter1d(spectrum, min(SMOOTHING, m), mode="wrap"), sigma[j] ** 2)
            FW = np.fft.fft(W[block, j], axis=0)
            meat += weights[j] ** 4 * np.real((FW.conj().T * spectrum) @ FW) / m
    return meat
