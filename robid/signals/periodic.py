"""Periodic processing: period detection, integer periods, averaging, DFT, spectral differentiation.

For a periodic excitation of period T sampled with M samples per period, K periods are cut from the
record and averaged, x_bar[m] = (1/K) sum_k x_k[m]; its DFT X[h] (numpy rfft / M) is kept at a set H of
harmonics (the excited ones, or a band up to a cut-off) and the derivatives follow exactly by
x^(n)(t_m) = sum_{h in H} X[h] (j h omega)^n exp(j h omega t_m) (two-sided), omega = 2 pi / T, n = 0..4
(Swevers, Ganseman, Tukel, De Schutter, Van Brussel, IEEE T-RA 1997, section IV; Pintelon & Schoukens,
System Identification: A Frequency Domain Approach, ch. 2). Torques are kept at the same harmonics.

A single period that does not close on itself (rest-to-rest motion from one pose to another) is made
periodic by subtracting the jump x(T) - x(0) times a smooth step s(t/T) whose first four derivatives vanish
at both ends (s(u) = 126u^5 - 420u^6 + 540u^7 - 315u^8 + 70u^9); the step's derivatives are added back
analytically, so the processed derivatives stay exact for the smooth part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import minimize_scalar


@dataclass(frozen=True)
class PeriodDetection:
    period: float
    mismatch: float  # normalised mismatch of x(t + T) against x(t): 0 = perfectly periodic, ~1 = unrelated


def _energy(x: np.ndarray) -> np.ndarray:
    """Channels centred; weights are their own variances (the moving joints dominate, quiet noise does not)."""
    return x - x.mean(axis=0)


def lag_mismatch(x: np.ndarray, max_lag: int) -> np.ndarray:
    """d(L) = sum_c sum_n (x[n+L] - x[n])^2 / ((N - L) * 2 * sum_c var_c) for L = 0..max_lag, via the FFT.

    d = 0 for a signal periodic with lag L, about 1 for unrelated samples.
    """
    z = _energy(x)
    n = z.shape[0]
    total_var = float(np.sum(np.var(z, axis=0)))
    if total_var <= 0:
        return np.ones(max_lag + 1)
    size = int(2 ** np.ceil(np.log2(2 * n)))
    spec = np.fft.rfft(z, n=size, axis=0)
    corr = np.fft.irfft(np.abs(spec) ** 2, n=size, axis=0)[: max_lag + 1].sum(axis=1)
    sq = np.sum(z**2, axis=1)
    cum = np.concatenate([[0.0], np.cumsum(sq)])
    lags = np.arange(max_lag + 1)
    head = cum[n - lags]  # sum_{n < N-L} z^2
    tail = cum[n] - cum[lags]  # sum_{n >= L} z^2
    d = (head + tail - 2.0 * corr) / ((n - lags) * 2.0 * total_var)
    return np.maximum(d, 0.0)


def detect_period(
    t: np.ndarray,
    x: np.ndarray,
    min_period: float | None = None,
    max_period: float | None = None,
    threshold: float = 0.01,
) -> PeriodDetection | None:
    """The fundamental period of ``x`` (N, C) on the uniform grid ``t``, or None if there is none.

    1. The lag mismatch d(L) of every lag up to (N + 1)/2 (two periods must fit, the second may end half a
       step past the last sample), by the FFT.
    2. Candidate lags: local minima of d beyond the lag where x first decorrelates (d > 0.5) that dip below
       half the median of d.
    3. The first candidate whose robust mismatch -- the *median* over samples of |x[n+L] - x[n]|^2, so that
       approach moves, lead-in and lead-out segments do not count -- is below ``threshold`` (a fraction of
       the signal variance) is the period, refined to sub-sample precision by a parabola through d and then
       by minimising the spline-interpolated mismatch over the part of the record that repeats.
    """
    n = x.shape[0]
    h = float(t[1] - t[0])
    # two periods may end up to half a step past the last sample: lags up to (N + 1) // 2 are candidates, and
    # the mismatch is computed one lag further so that the last candidate has a neighbour on both sides
    max_lag = (n + 1) // 2
    if max_period is not None:
        max_lag = min(max_lag, int(max_period / h) + 1)
    if max_lag < 8:
        return None
    d = lag_mismatch(x, min(max_lag + 1, n - 2))
    above = np.flatnonzero(d > 0.5)
    if above.size == 0:
        return None
    min_lag = max(int(above[0]), 2, int(np.ceil(min_period / h)) if min_period else 2)
    if max_lag <= min_lag + 2:
        return None
    seg = d[min_lag : max_lag + 2]
    level = 0.5 * float(np.median(seg))
    minima = np.flatnonzero((seg[1:-1] <= seg[:-2]) & (seg[1:-1] <= seg[2:]) & (seg[1:-1] < level)) + 1 + min_lag
    z = _energy(x)
    total = 2.0 * float(np.sum(np.var(z, axis=0)))
    lag = None
    for cand in minima[:200]:
        robust = float(np.median(np.sum((z[cand:] - z[:-cand]) ** 2, axis=1))) / total
        if robust < threshold:
            lag = int(cand)
            break
    if lag is None or lag + 1 >= d.size:
        return None
    a, b, c = d[lag - 1], d[lag], d[lag + 1]
    denom = a - 2 * b + c
    shift = 0.5 * (a - c) / denom if denom > 0 else 0.0
    guess = (lag + float(np.clip(shift, -0.5, 0.5))) * h
    lo, hi = periodic_region(t, x, guess)
    period, mismatch = refine_period(t, x, guess, h, (lo, hi))
    return PeriodDetection(period=period, mismatch=mismatch)


def refine_period(
    t: np.ndarray, x: np.ndarray, guess: float, h: float, region: tuple[float, float] | None = None
) -> tuple[float, float]:
    """Minimise the mismatch between x(t) and the spline-interpolated x(t + T) for T within ten steps of
    ``guess``, over the base times t with t and t + T inside ``region`` (default: the whole record) whose
    mismatch is at most 4 times the median one (what does not repeat is left out); the base times are fixed
    during a minimisation so that the cost is smooth in T (two rounds)."""
    z = _energy(x)
    spline = CubicSpline(t, z, axis=0)
    total = 2.0 * float(np.sum(np.var(z, axis=0)))
    lo, hi = region if region is not None else (t[0], t[-1])
    reach = 10.0 * h  # the lag-mismatch minimum is biased by what does not repeat: search +-10 steps
    upper = guess + reach
    base = t[(t >= lo) & (t + upper <= min(hi, t[-1]))]
    if base.size < 4:
        base = t[t + upper <= t[-1]]
    if base.size < 4:
        return guess, 1.0

    period = guess
    mismatch = 1.0
    slope = spline.derivative()
    for _ in range(2):
        # leave out the samples that do not repeat (transients, approach): their mismatch would bias T
        e = np.sum((spline(base + period) - spline(base)) ** 2, axis=1)
        fit = base[e <= max(4.0 * float(np.median(e)), 1e-30)]
        if fit.size < 4:
            fit = base

        def cost(p: float, fit=fit) -> float:
            diff = spline(fit + p) - spline(fit)
            return float(np.mean(np.sum(diff**2, axis=1)) / total)

        result = minimize_scalar(
            cost, bounds=(guess - reach, guess + reach), method="bounded", options={"xatol": 1e-10 * guess}
        )
        period, mismatch = float(result.x), float(result.fun)
        # Gauss-Newton steps on sum |x(t + T) - x(t)|^2: the cost is too flat near its minimum for a
        # bracketing search to reach full precision
        period = gauss_newton_scalar(
            period, lambda p, fit=fit: spline(fit + p) - spline(fit), lambda p, fit=fit: slope(fit + p), reach
        )
        mismatch = cost(period)
    return period, mismatch


def gauss_newton_scalar(
    x: float,
    residual: Callable[[float], np.ndarray],
    jacobian: Callable[[float], np.ndarray],
    reach: float,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    steps: int = 3,
) -> float:
    """Up to ``steps`` Gauss-Newton steps on sum |residual(x)|^2 over a scalar x (``jacobian`` = d residual / dx):
    x -= sum(r J) / sum(J J), kept within ``bounds``; stops at a zero Jacobian or at a step longer than
    ``reach`` (outside the basin the bracketing search found). For costs too flat near their minimum for a
    bracketing search to reach full precision."""
    for _ in range(steps):
        r, g = residual(x), jacobian(x)
        denom = float(np.sum(g * g))
        if denom <= 0:
            break
        step = -float(np.sum(r * g)) / denom
        if abs(step) > reach:
            break
        x = float(np.clip(x + step, *bounds))
    return x


def periodic_region(t: np.ndarray, x: np.ndarray, period: float, threshold: float = 0.02) -> tuple[float, float]:
    """Time span [a, b] of the record in which x repeats with ``period``: where the mismatch between x(t)
    and x(t + T), smoothed over T/20 and normalised by the total variance, stays below ``threshold``.
    Leaves out approach moves and lead-in/lead-out segments."""
    z = _energy(x)
    total = 2.0 * float(np.sum(np.var(z, axis=0)))
    valid = t + period <= t[-1] + 1e-12 * period
    base = t[valid]
    if base.size == 0 or total <= 0:
        return float(t[0]), float(t[-1])
    shifted = np.column_stack([np.interp(base + period, t, z[:, c]) for c in range(z.shape[1])])
    e = np.sum((shifted - z[valid]) ** 2, axis=1) / total
    window = max(1, int(round(period / 20.0 / (t[1] - t[0]))))
    smooth = np.convolve(e, np.ones(window) / window, mode="same")
    ok = smooth < threshold
    if not ok.any():
        return float(t[0]), float(t[-1])
    padded = np.concatenate([[False], ok, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    k = int(np.argmax(ends - starts))
    a, b = base[starts[k]], base[ends[k] - 1] + period
    return float(a), float(min(b, t[-1]))


#: Whole periods are taken from the samples as they are (period M h) when K periods of the given period drift
#: from K M steps by at most this many steps by their end (far below what the data can resolve).
SNAP_STEPS = 1e-3


@dataclass(frozen=True)
class PeriodCut:
    periods: dict[str, np.ndarray]  # name -> (K, M, C)
    t: np.ndarray  # (M,) times of one period, from the start of the first period
    samples_per_period: int
    resampled: bool
    period: float  # the period the cut follows: M h when the samples are taken as they are, else the given one


def cut_periods(
    t: np.ndarray, signals: dict[str, np.ndarray], start: float, period: float, n_periods: int
) -> PeriodCut:
    """K = ``n_periods`` periods from ``start``, M samples each (M = round(T/h)).

    When ``start`` falls on a sample and K periods of T differ from K M steps by at most ``SNAP_STEPS`` steps,
    the samples are taken as they are and the period is M h; otherwise the record is resampled by a cubic
    spline onto start + m T/M. The last period may end up to half a step past the record (a period rounded
    to samples): the spline extrapolates that far; further is an error.
    """
    h = float(t[1] - t[0])
    m = int(round(period / h))
    i0 = int(round((start - t[0]) / h))
    drift = n_periods * abs(period - m * h) / h
    exact = drift <= SNAP_STEPS and abs(t[0] + i0 * h - start) <= 1e-9 * h
    total = n_periods * m
    if exact and i0 + total <= t.size:
        cut = {k: v[i0 : i0 + total].reshape(n_periods, m, *v.shape[1:]) for k, v in signals.items()}
        return PeriodCut(periods=cut, t=t[i0] + np.arange(m) * h, samples_per_period=m, resampled=False, period=m * h)
    grid = start + np.arange(total) * (period / m)
    if grid[-1] > t[-1] + 0.5 * h * (1.0 + 1e-9) or grid[0] < t[0] - 1e-9 * h:
        raise ValueError("the periods do not fit in the record")
    cut = {}
    for k, v in signals.items():
        values = CubicSpline(t, v, axis=0)(grid)
        cut[k] = values.reshape(n_periods, m, *v.shape[1:])
    return PeriodCut(
        periods=cut, t=start + np.arange(m) * (period / m), samples_per_period=m, resampled=True, period=period
    )


def reject_outlier_periods(periods: np.ndarray, factor: float = 10.0) -> np.ndarray:
    """Indices of periods (K, M, C) to keep: a period whose squared deviation from the median period is more
    than ``factor`` times the median deviation is a transient (e.g. the first period after the approach)."""
    k = periods.shape[0]
    if k < 3:
        return np.arange(k)
    median = np.median(periods, axis=0)
    dev = np.mean((periods - median) ** 2, axis=(1, 2))
    ref = float(np.median(dev))
    keep = np.flatnonzero(dev <= factor * ref) if ref > 0 else np.arange(k)
    return keep if keep.size >= 2 else np.arange(k)


def select_harmonics_snr(mean_power: np.ndarray, noise_level: np.ndarray, threshold: float) -> np.ndarray:
    """Sparse set: harmonics h >= 1 (below Nyquist) where any channel has |X[h]|^2 > threshold * noise."""
    significant = np.any(mean_power > threshold * noise_level, axis=1)
    significant[0] = False
    return np.flatnonzero(significant[:-1])


def harmonic_mask(n_bins: int, harmonics: np.ndarray) -> np.ndarray:
    """Boolean (n_bins,) with DC and the given harmonics set (Nyquist never: its derivative is ambiguous)."""
    mask = np.zeros(n_bins, dtype=bool)
    mask[0] = True
    h = np.asarray(harmonics, dtype=int)
    mask[h[(h >= 1) & (h < n_bins - 1)]] = True
    return mask


def masked_filter(mask: np.ndarray, n: int, what: str):
    """The operator that keeps the DFT bins ``mask`` of any signal of ``n`` samples along axis 0 (``what`` names
    the grid in the error of a wrong length): the torque's filter, applied to regressor columns (parallel
    filtering)."""

    def apply_filter(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[0] != n:
            raise ValueError(f"apply_filter expects {n} samples ({what}), got {x.shape[0]}")
        return weighted_columns(x.reshape(n, -1), mask.astype(float), n).reshape(x.shape)

    return apply_filter


def weighted_columns(x: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """``irfft(rfft(x) * weights)`` along axis 0 of the (n, k) array ``x``, as a C-ordered (n, k) array. The
    transforms run on the transposed copy, one contiguous row per column, where pocketfft is faster (24 000 samples
    on an idle core: 3 columns 2.35 -> 1.29 ms, 60 columns 24.5 -> 22.8 ms, 348 columns 215 -> 189 ms; 12 columns
    alike), and each column's transform is the same computation, so the numbers are the same to the bit
    (tests/test_signals_filters.py)."""
    spectra = np.fft.rfft(np.ascontiguousarray(x.T), axis=1) * weights
    return np.ascontiguousarray(np.fft.irfft(spectra, n=n, axis=1).T)


def spectral_derivatives(x: np.ndarray, mask: np.ndarray, period: float, orders: int) -> list[np.ndarray]:
    """[x_f, x_f', ..., x_f^(orders)] of one period ``x`` (M, C) with harmonic h weighted by ``mask`` (M//2 + 1,)
    -- 0/1 for a hard band -- or (M//2 + 1, C), one column per channel."""
    m = x.shape[0]
    spectrum = np.fft.rfft(x, axis=0)
    h = np.arange(spectrum.shape[0])
    jw = 1j * h * (2.0 * np.pi / period)
    weights = np.asarray(mask, dtype=float)
    weights = weights[:, None] if weights.ndim == 1 else weights
    out = []
    for order in range(orders + 1):
        out.append(np.fft.irfft(spectrum * (jw**order)[:, None] * weights, n=m, axis=0))
    return out


def smoothstep(u: np.ndarray, order: int) -> np.ndarray:
    """s(u) = 126u^5 - 420u^6 + 540u^7 - 315u^8 + 70u^9 and its derivatives d^k s / du^k, k = 0..4;
    s(0) = 0, s(1) = 1, derivatives 1..4 zero at both ends."""
    coeffs = np.zeros(10)
    coeffs[5:] = [126.0, -420.0, 540.0, -315.0, 70.0]
    poly = np.polynomial.Polynomial(coeffs)
    return poly.deriv(order)(u) if order else poly(u)


def endpoint_step(x_start: np.ndarray, x_end: np.ndarray, m: int, period: float, orders: int) -> list[np.ndarray]:
    """The jump (x_end - x_start) times s(t/T) on t = m' T/M, m' = 0..M-1, and its time derivatives."""
    u = np.arange(m) / m
    jump = np.asarray(x_end) - np.asarray(x_start)
    return [np.outer(smoothstep(u, k) / period**k, jump) for k in range(orders + 1)]


def next_sample(x: np.ndarray, order: int) -> np.ndarray:
    """The value one step after the last sample of ``x`` (axis 0), extrapolated by the polynomial of ``order``
    through the last samples: 1, linear; 3, cubic, 4 x[-1] - 6 x[-2] + 4 x[-3] - x[-4] (error of order h^4 times
    the fourth derivative)."""
    x = np.asarray(x, dtype=float)
    if order == 1:
        return 2.0 * x[-1] - x[-2]
    if order == 3:
        return 4.0 * x[-1] - 6.0 * x[-2] + 4.0 * x[-3] - x[-4]
    raise ValueError(f"next_sample: order 1 or 3, got {order}")


def window_filter(weights: np.ndarray, n: int, span: float, what: str):
    """The spectral operator of a window of ``n`` samples that need not close on itself, for any signal along
    axis 0 (regressor columns): the jump between its first value and the value one step after it (linear
    extrapolation, :func:`next_sample`) is removed by :func:`endpoint_step`, the remainder weighted by
    ``weights`` (n//2 + 1,) in the DFT, the step added back. ``what`` names the window in the error of a wrong
    length."""
    w = np.asarray(weights, dtype=float)

    def apply_filter(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[0] != n:
            raise ValueError(f"apply_filter expects {n} samples ({what}), got {x.shape[0]}")
        flat = x.reshape(n, -1)
        step = endpoint_step(flat[0], next_sample(flat, 1), n, span, 0)[0]
        out = weighted_columns(flat - step, w, n) + step
        return out.reshape(x.shape)

    return apply_filter
