"""Noise estimates: from the scatter between periods, or from what a filter removes.

Conventions: a period of M samples has the DFT coefficients X[h] = (1/M) sum_m x[m] exp(-2 pi j h m / M),
h = 0..M/2 (``numpy.fft.rfft(x) / M``). For white noise of variance s^2 per sample, E|X[h]|^2 = s^2/M, and a
signal rebuilt from a set H of harmonics carries the time-averaged noise variance
sum_{h in H} w_h E|dX[h]|^2 with w_h = 1 for h = 0 (and M/2), 2 otherwise (Parseval).

The last two functions assemble the :class:`NoiseEstimate` record of a path from these primitives: spectral
paths (periodic, single period) and the zero-phase low-pass of the non-periodic path (docs/signals.md section 8).
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.ndimage import median_filter

from robid.signals.records import NoiseEstimate


def logged_step(x: np.ndarray) -> np.ndarray:
    """The step (C,) between neighbouring values of each column of ``x`` (N, C) as logged: the smallest positive
    difference of its distinct values, above 1e-12 of its largest magnitude (float rounding); 0 for a column
    with fewer than two distinct values. A log written with 4 decimals (UR controller logs) has the step 1e-4."""
    x = np.asarray(x, dtype=float)
    out = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        steps = np.diff(np.unique(x[:, j]))
        steps = steps[steps > 1e-12 * max(float(np.max(np.abs(x[:, j]))), 1e-300)]
        out[j] = float(steps.min()) if steps.size else 0.0
    return out


def quantisation_variance(step) -> np.ndarray:
    """step^2 / 12 (C,): the variance of rounding to ``step``, uniform over one step (Widrow & Kollar 2008,
    ch. 4). On a motion that repeats exactly, the rounding error repeats too: it survives period averaging and
    the scatter between periods does not see it, so the periodic paths add it to their noise explicitly."""
    return np.square(np.asarray(step, dtype=float)) / 12.0


def period_scatter(periods: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Noise from K >= 2 repeated periods ``periods`` (K, M, C).

    Returns the per-sample noise variance of one raw sample (C,) -- the mean over the period of the
    unbiased variance across periods -- and the variance of the *averaged* DFT coefficient at every harmonic
    (M//2 + 1, C): var_k(X_k[h]) / K, with var_k the unbiased complex variance sum |X_k - mean|^2 / (K - 1).
    """
    k, m, _ = periods.shape
    if k < 2:
        raise ValueError("period scatter needs at least two periods")
    per_sample = np.mean(np.var(periods, axis=0, ddof=1), axis=0)
    spectra = np.fft.rfft(periods, axis=1) / m
    mean = spectra.mean(axis=0)
    per_harmonic = np.sum(np.abs(spectra - mean) ** 2, axis=0) / (k - 1) / k
    return per_sample, per_harmonic


def harmonic_weights(m: int, n_bins: int) -> np.ndarray:
    """w_h of the one-sided spectrum: 1 for DC and (even M) the Nyquist bin, 2 otherwise."""
    w = np.full(n_bins, 2.0)
    w[0] = 1.0
    if m % 2 == 0:
        w[-1] = 1.0
    return w


def processed_variance(per_harmonic: np.ndarray, mask: np.ndarray, omega: float, order: int, m: int) -> np.ndarray:
    """Noise variance (C,) of the order-th derivative rebuilt with the weights ``mask`` (0/1 for a hard band;
    (M//2 + 1,) or one column per channel).

    var = sum_h w_h W_h^2 (h omega)^(2 order) var(X[h]), ``per_harmonic`` (M//2 + 1, C) being the variance of
    the coefficient that is used (averaged over periods where applicable).
    """
    h = np.arange(per_harmonic.shape[0])
    weight = np.asarray(mask, dtype=float)
    weight = weight[:, None] if weight.ndim == 1 else weight
    gain = (harmonic_weights(m, per_harmonic.shape[0]) * (h * omega) ** (2 * order))[:, None] * weight**2
    return np.sum(gain * per_harmonic, axis=0)


#: The pooled noise floor rests on at least this many scatter degrees of freedom (17 harmonics from K >= 3
#: periods; 33 from K = 2, where each harmonic's scatter has only 2).
POOLED_DOF = 64


def pooled_window(n_periods: int, window: int = 17) -> int:
    """Harmonics pooled by :func:`pooled_noise_floor`: ``window``, widened (odd) until the harmonics hold at least
    ``POOLED_DOF`` scatter degrees of freedom 2 (K - 1) each. With K = 2 and 17 harmonics the running median
    rests on 34 degrees of freedom and is off by a factor 2 often enough that a pure-noise harmonic passes an
    SNR test of 20 in about 2 % of the records (a spurious tone at (h omega)^2 in the accelerations)."""
    nu = 2 * max(n_periods - 1, 1)
    need = int(np.ceil(POOLED_DOF / nu))
    return max(window, need + (1 - need % 2))


def pooled_noise_floor(per_harmonic: np.ndarray, n_periods: int, window: int = 17) -> np.ndarray:
    """A smooth, robust noise level per harmonic: running median of the scatter variances over neighbouring
    harmonics -- at least ``window`` (widened for few periods, :func:`pooled_window`), and a quarter of an octave
    (h/8 either side of harmonic h) where that is wider (:func:`widening_median`) -- corrected for the median of
    a chi-square with 2(K-1) degrees of freedom (the scatter variance of a complex coefficient from K periods),
    so that strong harmonics do not inflate it.

    Why a widening window: the floor decides which harmonics hold motion, and above the motion every candidate
    band is judged by it weighted by (h omega)^4. A median over 33 harmonics of 2-dof scatters (K = 2) is off by
    a factor 3 somewhere among a few thousand harmonics in most records (its 0.1 % quantile is 0.33 of the true
    level), and a stretch of noise standing "3 times above the floor" there was read as motion at 120-220 Hz of
    a 0.75 Hz motion (issue 31). A quarter-octave median at harmonic 1000 rests on 250 harmonics (about +-10 %);
    encoder noise, white or shaped by resampling, changes little over a quarter of an octave."""
    nu = 2 * (n_periods - 1)
    correction = stats.chi2.median(nu) / nu
    return widening_median(per_harmonic, pooled_window(n_periods, window)) / correction


#: the widening median's half-width, as a fraction of the position (h/8: a quarter of an octave in all)
WIDENING = 1.0 / 8.0


def widening_median(values: np.ndarray, window: int, positions: np.ndarray | None = None) -> np.ndarray:
    """Running median (n, C) of ``values`` (n, C) over at least ``window`` neighbours (odd) and over the
    neighbours within a quarter of an octave of each position (``positions``, the harmonic or bin number of
    each row, increasing; default 0..n-1), whichever is wider. The wide medians are taken at 24 positions per
    octave and interpolated linearly between them (the level changes little over 1/24 octave)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    size = min(window, n)
    narrow = median_filter(values, size=(size, 1), mode="nearest")
    pos = np.arange(n, dtype=float) if positions is None else np.asarray(positions, dtype=float)
    start = (size // 2) / WIDENING  # from here on a quarter octave holds more than ``window`` values
    wide_rows = np.flatnonzero(pos >= start)
    if wide_rows.size == 0:
        return narrow
    # centres: 24 per octave over the wide part, as row indices (rows are sorted by position)
    logs = np.log2(pos[wide_rows])
    grid = 2.0 ** np.arange(logs[0], logs[-1] + 1.0 / 24.0, 1.0 / 24.0)
    centres = np.unique(np.concatenate([np.searchsorted(pos, grid).clip(0, n - 1), wide_rows[[0, -1]]]))
    meds = np.empty((centres.size, values.shape[1]))
    for i, c in enumerate(centres):
        lo = np.searchsorted(pos, pos[c] * (1.0 - WIDENING))
        hi = np.searchsorted(pos, pos[c] * (1.0 + WIDENING), side="right")
        meds[i] = np.median(values[lo:hi], axis=0)
    out = narrow.copy()
    for col in range(values.shape[1]):
        out[wide_rows, col] = np.interp(pos[wide_rows], pos[centres], meds[:, col])
    return out


def quiet_floor(power: np.ndarray, quiet: np.ndarray, window: int = 33) -> np.ndarray:
    """Noise level per bin (n_bins, C) from the bins ``quiet`` that carry no signal: running median of the
    power |X[b]|^2 over ``window`` quiet bins or a quarter of an octave of them, whichever is wider
    (:func:`widening_median`), divided by ln 2 (the median of a complex Gaussian coefficient's power, a
    chi-square with 2 degrees of freedom, over its mean), linearly interpolated onto every bin. Fewer than 3
    quiet bins: the median of all bins (DC left out), same correction."""
    b = np.arange(power.shape[0])
    quiet = np.asarray(quiet, dtype=bool)
    if np.count_nonzero(quiet) < 3:
        return np.broadcast_to(np.median(power[1:], axis=0) / np.log(2.0), power.shape).copy()
    values = power[quiet]
    floor = widening_median(values, window, b[quiet]) / np.log(2.0)
    return np.column_stack([np.interp(b, b[quiet], floor[:, c]) for c in range(power.shape[1])])


def residual_variance(x: np.ndarray, filtered: np.ndarray, dof_removed_fraction: float) -> np.ndarray:
    """White-noise variance (C,) from what a linear filter removed: mean((x - x_f)^2) / fraction, where
    ``fraction`` is the share of white-noise power the filter removes (e.g. (M - D)/M for D kept real
    degrees of freedom of an M-sample period, or mean (1 - |H|^2)^2 for a zero-phase low-pass)."""
    r = np.asarray(x) - np.asarray(filtered)
    return np.mean(r**2, axis=0) / np.maximum(dof_removed_fraction, 1e-12)


def robust_white_std(x: np.ndarray) -> np.ndarray:
    """Standard deviation (C,) of white noise on the columns of ``x`` (N, C), blind to the model's own
    high-frequency content: the median absolute value of the third difference, normalised to unit noise gain,
    d[k] = (x[k+2] - 3 x[k+1] + 3 x[k] - x[k-1]) / sqrt(20), divided by 0.6745 (Donoho & Johnstone 1994's
    estimate from the finest-scale coefficients). The difference removes a smooth signal (its content there is
    (w h)^3 of it); a step -- Coulomb friction sign(qd) at a velocity reversal -- touches three coefficients
    only, which the median ignores. A residual variance would count both as noise (2.3 times too much on some
    joints). Falls back to the rms of d where more than half of d is zero (a signal quantised more coarsely than
    its noise)."""
    d = np.diff(np.asarray(x, dtype=float), n=3, axis=0) / np.sqrt(20.0)
    mad = np.median(np.abs(d), axis=0) / 0.6744897501960817
    rms = np.sqrt(np.mean(d**2, axis=0))
    return np.where(mad > 0, mad, rms)


def white_spectrum(variance: np.ndarray, m: int, n_bins: int) -> np.ndarray:
    """Coefficient variances (n_bins, C) of white noise with per-sample ``variance`` (C,): E|X[h]|^2 = s^2/M."""
    return np.broadcast_to(variance / m, (n_bins, variance.size))


def spectral_estimate(
    var_q: np.ndarray,
    var_tau: np.ndarray,
    harm_q: np.ndarray,
    harm_tau: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray],
    omega: float,
    m: int,
    method: str,
    per_harmonic: bool = False,
) -> NoiseEstimate:
    """The noise record of a spectral path: raw per-sample standard deviations from ``var_q``/``var_tau``,
    processed ones by :func:`processed_variance` of the coefficient variances ``harm_q``/``harm_tau`` over the
    kept harmonics ``masks`` = (positions, torques) -- q, qd, qdd and tau; ``per_harmonic`` keeps the
    coefficient variances in the record."""
    mask_q, mask_tau = masks
    return NoiseEstimate(
        q_std=_floats(np.sqrt(var_q)),
        tau_std=_floats(np.sqrt(var_tau)),
        q_std_processed=_floats(np.sqrt(processed_variance(harm_q, mask_q, omega, 0, m))),
        qd_std_processed=_floats(np.sqrt(processed_variance(harm_q, mask_q, omega, 1, m))),
        qdd_std_processed=_floats(np.sqrt(processed_variance(harm_q, mask_q, omega, 2, m))),
        tau_std_processed=_floats(np.sqrt(processed_variance(harm_tau, mask_tau, omega, 0, m))),
        method=method,
        per_harmonic_q=harm_q if per_harmonic else None,
        per_harmonic_tau=harm_tau if per_harmonic else None,
    )


def filtered_estimate(var_q: np.ndarray, var_tau: np.ndarray, gains: list[float], method: str) -> NoiseEstimate:
    """The noise record of a filtering path: white noise of per-sample variance ``var_q``/``var_tau`` through
    the noise power gains ``gains[n]`` of the filter followed by n differentiations (n = 0, 1, 2)."""
    return NoiseEstimate(
        q_std=_floats(np.sqrt(var_q)),
        tau_std=_floats(np.sqrt(var_tau)),
        q_std_processed=_floats(np.sqrt(var_q * gains[0])),
        qd_std_processed=_floats(np.sqrt(var_q * gains[1])),
        qdd_std_processed=_floats(np.sqrt(var_q * gains[2])),
        tau_std_processed=_floats(np.sqrt(var_tau * gains[0])),
        method=method,
    )


def _floats(x: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(x).ravel())
