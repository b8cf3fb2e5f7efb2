"""The automatic cut-off of the non-periodic low-pass: the one that minimises the predicted mean-square error of
the accelerations (docs/signals.md section 7).

Model. The recorded position is x = s + n, n noise of spectrum N(f). The path computes the acceleration as
a_hat = D^2 H x: H(f) = 1 / (1 + (tan(pi f/fs) / tan(pi fc/fs))^(2m)) is the zero-phase response of the
forward-backward Butterworth of order m (bilinear design: exact), D(f) = j d(f) the 5-point central difference,
d(f) = (8 sin(w h) - sin(2 w h)) / (6 h). Against the true a = -w^2 s, w = 2 pi f, the error has at each
frequency the mean power

    E|e(f)|^2 = (d^2 H - w^2)^2 S(f)  +  d^4 H^2 N(f)                                              (1)

-- motion lost to the filter (and to the differentiator's own error) against noise let through and amplified by
d^4 ~ w^4. Averaged over frequency it is the mean square error per sample (Parseval):

    R(fc) = mean_f [ (d^2 H - w^2)^2 S_hat + d^4 H^2 N_hat ]                                        (2)

The cut-off minimises the sum over the moving channels of R_j(fc) / A_j, A_j = mean_f w^4 S_hat_j the estimated
mean square of channel j's acceleration: every moving joint's relative acceleration error counts alike.

Spectrum P = S + N: a multitaper estimate (Thomson 1982: 4 Slepian tapers of time-bandwidth 6 over the whole
record, each leaking less than 1e-9 of its power outside +-6/T Hz, half the lowest cut-off searched) of the second
difference y[k] = x[k+1] - 2 x[k] + x[k-1], divided by its gain (2 sin(pi f/fs))^4. Differencing first flattens
the steep position spectrum, so that the leakage of a large slow motion stays far below the noise -- which a
Hann-window Welch spectrum of x itself does not achieve (its leakage, read as signal, gave 15-100 Hz).

Noise N_hat. A motion's acceleration spectrum w^4 S falls off above its band; the noise's w^4 N rises (white
quantisation: as f^4; positions resampled from jittered stamps or interpolated from a slower controller cycle
are coloured, but their spectrum falls no faster than f^-2, so w^4 N rises at least as f^2). N_hat is therefore
the largest spectrum under the smoothed P (median over bands of a sixth of an octave, blind to isolated lines)
whose w^4 N_hat / f^2 does not decrease, up to the peak of the noise hump: the highest w^4 P above the valley
between motion and noise (searched above the frequency below which all but 1e-6 of the position variance lies).
Above that peak the spectrum may fall (the stop band of an interpolating or anti-aliasing filter) and N_hat is
the smoothed P itself. Signal S_hat = P - N_hat in the bins that stand above N_hat by the 99.9 % quantile of
chi^2_nu / nu, in bands whose median stands 3 times above it, else 0 (a plain unbiased P - N everywhere would
let the noise's own fluctuation, weighted by w^4, decide the choice).

Measured (tests/test_signals_cutoff.py, docs/signals.md section 7): rms acceleration error within 1.0-1.1 of the
best cut-off chosen in hindsight on simulated records at 100 Hz - 1 kHz.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import fft as sp_fft
from scipy import signal, stats

from robid.signals import filtering
from robid.signals.motion_spectrum import (  # noqa: F401 (the constants belong to the cut-off's model too)
    BAND_EXCESS,
    BAND_RATIO,
    LINE_CHAIN,
    LINE_RECORDS,
    MIN_BINS,
    NW,
    SIGNIFICANCE,
    TAIL_SLOPE,
    band_index,
    signal_spectrum,
    with_tail,
)

TAPERS = 4
#: a channel moves when its signal variance exceeds its noise variance by this factor (30 dB)
MOVING = 1e3
#: candidate cut-offs per decade
PER_DECADE = 40
#: the position spectrum below the noise peak's band holds all but this share of the variance
MOTION_SHARE = 1e-6
#: the noise's acceleration spectrum rises at least as f^NOISE_SLOPE (its spectrum falls no faster than f^-2)
NOISE_SLOPE = 2.0
#: records up to this many samples are transformed at their own length, longer ones zero-padded to a fast length
#: (:func:`fft_length`)
FAST_PAD = 100_000


@dataclass(frozen=True)
class CutoffChoice:
    """The cut-off and why: ``noise_std`` (per channel, the white-equivalent position noise per sample: the white
    level that leaves the same noise on the processed accelerations as the estimated noise spectrum),
    ``acceleration_rms`` (estimated rms of each channel's true acceleration; 0 when the channel does not move),
    ``predicted_error_rms`` (predicted rms error of each channel's processed acceleration
    at the cut-off), ``moving`` (channels that entered the choice), ``bounds`` (the searched interval, Hz),
    ``at_bound`` ("lower", "upper" or "") and ``given`` (the user's cut-off, only evaluated)."""

    cutoff: float
    noise_std: tuple[float, ...]
    acceleration_rms: tuple[float, ...]
    predicted_error_rms: tuple[float, ...]
    moving: tuple[int, ...]
    bounds: tuple[float, float]
    at_bound: str
    given: bool = False
    #: per channel, the candidate of least predicted error of that channel alone (the given cut-off with ``given``)
    own_cutoffs: tuple[float, ...] = ()
    #: per channel, the predicted rms qdd error at its own cut-off
    own_error_rms: tuple[float, ...] = ()

    def describe(self) -> str:
        """The reason, for ``ProcessedSignals.method``."""
        ratio = [
            e / a if a > 0 else np.nan for e, a in zip(self.predicted_error_rms, self.acceleration_rms, strict=True)
        ]
        text = (
            "given"
            if self.given
            else "from the data: the cut-off that minimises the predicted error of the accelerations (motion lost "
            "against noise amplified, from a multitaper spectrum of the positions)"
        )
        text += (
            "; position noise "
            + _fmt(self.noise_std)
            + " rad per sample (white-equivalent); predicted rms error of qdd "
            + _fmt(self.predicted_error_rms)
            + " = "
            + ", ".join("-" if not np.isfinite(r) else f"{100 * r:.2g} %" for r in ratio)
            + " of the rms qdd"
        )
        if self.at_bound:
            text += f"; at the {self.at_bound} end of the searched range {self.bounds[0]:.3g}-{self.bounds[1]:.3g} Hz"
        return text


def _fmt(values: tuple[float, ...]) -> str:
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


def zero_phase_response(f: np.ndarray, cutoff: float, rate: float, order: int) -> np.ndarray:
    """H(f) of the forward-backward digital Butterworth of ``order`` at ``cutoff``: |H_1|^2 with
    |H_1(f)|^2 = 1 / (1 + (tan(pi f/fs) / tan(pi fc/fs))^(2 order)) (bilinear transform with prewarping)."""
    return _response(_warped(f, rate), cutoff, rate, order)


def _warped(f: np.ndarray, rate: float) -> np.ndarray:
    """tan(pi f / fs), the prewarped frequency of :func:`zero_phase_response` (once per spectrum, not per
    candidate cut-off)."""
    return np.tan(np.pi * np.minimum(f, 0.5 * rate * (1 - 1e-12)) / rate)


def _response(warped: np.ndarray, cutoff: float, rate: float, order: int) -> np.ndarray:
    ratio = warped / np.tan(np.pi * cutoff / rate)
    return 1.0 / (1.0 + ratio ** (2 * order))


def fft_length(n: int) -> int:
    """The transform length for ``n`` tapered samples: ``n`` itself up to ``FAST_PAD``, else the next length that
    scipy.fft.next_fast_len calls fast (factors 2, 3, 5 only; at most a few per mille longer for a long record).
    A record length with a large prime factor (599 998 = 2 * 7 * 17 * 2521) costs pocketfft ten times a fast
    one; the tapered record zero-padded to the fast length gives the same multitaper estimate, sampled on a
    grid of bins a few per mille finer (the taper and the data do not change: zeros after the record add nothing
    to a bin's sum, its variance per bin stays the record's)."""
    return int(n) if n <= FAST_PAD else int(sp_fft.next_fast_len(int(n)))


def position_spectrum(x: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(f, P, nu): the multitaper spectrum of the columns of ``x`` (N, C) as variance per bin (white noise of
    variance s^2 gives P = s^2 at every f), estimated from the second difference and divided by its gain; P at
    f = 0 is set to 0 (the mean is not motion). ``nu`` is the chi-square degrees of freedom of one value. A long
    record's tapered samples are zero-padded to a fast transform length (:func:`fft_length`)."""
    y = np.diff(np.asarray(x, dtype=float), n=2, axis=0)
    y = y - y.mean(axis=0)
    length = y.shape[0]
    size = fft_length(length)
    power = np.zeros((size // 2 + 1, y.shape[1]))
    for taper in signal.windows.dpss(length, NW, TAPERS):  # unit energy each
        power += np.abs(np.fft.rfft(taper[:, None] * y, n=size, axis=0)) ** 2
    f = np.fft.rfftfreq(size, d=1.0 / rate)
    gain = (2.0 * np.sin(np.pi * f / rate)) ** 4
    p = np.zeros_like(power)
    p[1:] = power[1:] / TAPERS / gain[1:, None]
    return f, p, 2 * TAPERS


def band_medians(f: np.ndarray, p: np.ndarray, nu: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, level, band index of every bin): P smoothed over bands a sixth of an octave wide (at least
    ``MIN_BINS`` bins), as the median in the band divided by the median of chi^2_nu / nu -- unbiased for a flat
    spectrum, and blind to a few lines."""
    edges = [f[1]]
    while edges[-1] < f[-1]:
        edges.append(max(edges[-1] * BAND_RATIO, edges[-1] + MIN_BINS * (f[1] - f[0])))
    index = np.clip(np.searchsorted(edges, f, side="right") - 1, 0, len(edges) - 2)
    index[0] = -1
    bands = np.unique(index[1:])
    correction = stats.chi2.median(nu) / nu
    level = np.array([np.median(p[index == b], axis=0) for b in bands]) / correction
    centre = np.array([np.sqrt(f[index == b].min() * f[index == b].max()) for b in bands])
    return centre, level, np.searchsorted(bands, index)


def noise_spectrum(f: np.ndarray, p: np.ndarray, nu: int) -> tuple[np.ndarray, np.ndarray]:
    """(N_hat, excess) per bin and channel (module docstring): below the noise peak, the running minimum from
    the top of w^4 P / f^2 over the bands, times f^2 / w^4 -- or, where the noise's own slope can be read
    (:func:`_noise_slope_fit`), the power law fitted to it, never above P; above the peak, the smoothed P.
    ``excess`` is each band's smoothed w^4 P over that envelope."""
    centre, level, band = band_medians(f, p, nu)
    accel = (2.0 * np.pi * centre[:, None]) ** 4 * level
    envelope = accel.copy()
    start = _motion_band(f, p, centre)
    for c in range(p.shape[1]):
        top = _noise_peak(accel[:, c], start[c])
        tilt = centre[: top + 1] ** NOISE_SLOPE
        envelope[: top + 1, c] = np.minimum.accumulate((accel[: top + 1, c] / tilt)[::-1])[::-1] * tilt
        fitted = _noise_slope_fit(centre, accel[:, c], start[c], top)
        if fitted is not None:  # below the fit's bands; within them the envelope stands (a hump is not motion)
            model, below = fitted
            envelope[:below, c] = np.minimum(accel[:below, c], model[:below])
    idx = np.clip(band, 0, centre.size - 1)
    noise = envelope[idx] / np.maximum((2.0 * np.pi * f[:, None]) ** 4, 1e-300)
    noise[0] = 0.0  # the mean: neither motion nor noise
    return noise, (accel / np.maximum(envelope, 1e-300))[idx]


#: the noise's slope is read from at least this many bands, from twice the valley's frequency to the peak
SLOPE_BANDS = 4


def _noise_slope_fit(
    centre: np.ndarray, accel: np.ndarray, start: int, top: int
) -> tuple[np.ndarray, int] | None:
    """The noise's acceleration spectrum c f^a on the bands up to ``top`` (the noise peak), with a read from
    the bands between twice the valley's frequency and the peak, where the noise stands alone: a least-squares
    slope in log-log, kept within [NOISE_SLOPE, 4] (white noise: 4), the level the median of log(w^4 P) - a
    log f there (robust to a line); and the first band of the fit, below which it replaces the f^2 envelope.
    None when fewer than ``SLOPE_BANDS`` bands lie there or the slope is not above NOISE_SLOPE.

    Why: below the valley the f^2 envelope carries the valley's level down as if the noise were as coloured as
    it may be; white noise lies (f_valley / f)^2 lower there. On minimum-jerk moves that excess noise and the
    motion tail it hid put the cut-off at 0.65-0.85 of the hindsight-best (errors 1.2-1.9 times the best);
    with the fitted slope the choice is within 1.0-1.4 (issue 31, benchmarks/bench_signal_families.py). Within
    the fit's bands the envelope stays: a hump of the noise above the power law (the UR10e logs at 25-35 Hz)
    would otherwise read as motion."""
    if top <= start:
        return None
    valley = start + int(np.argmin(accel[start : top + 1]))
    use = np.flatnonzero(centre[: top + 1] >= 2.0 * centre[valley])
    if use.size < SLOPE_BANDS:
        return None
    x, y = np.log(centre[use]), np.log(np.maximum(accel[use], 1e-300))
    slope = float(np.polyfit(x, y, 1)[0])
    if slope <= NOISE_SLOPE:
        return None
    slope = min(slope, 4.0)
    level = float(np.median(y - slope * x))
    return np.exp(level + slope * np.log(centre[: top + 1])), int(use[0])


def _noise_peak(accel: np.ndarray, start: int) -> int:
    """The band where the noise's acceleration spectrum peaks: the largest w^4 P above its lowest value from band
    ``start`` on (the valley between the motion and the noise)."""
    spread = accel.copy()  # a gap between two lines one band wide is not the valley
    spread[1:] = np.maximum(spread[1:], accel[:-1])
    spread[:-1] = np.maximum(spread[:-1], accel[1:])
    valley = start + int(np.argmin(spread[start:]))
    return valley + int(np.argmax(accel[valley:]))


def _motion_band(f: np.ndarray, p: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Per channel, the first band above :func:`motion_edge`."""
    return np.minimum(np.searchsorted(centre, motion_edge(f, p)), centre.size - 1)


def motion_edge(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Per channel, the frequency below which the position spectrum holds all but ``MOTION_SHARE`` of its
    variance."""
    cumulative = np.cumsum(p, axis=0) / np.maximum(np.sum(p, axis=0), 1e-300)
    found = [np.searchsorted(cumulative[:, c], 1.0 - MOTION_SHARE) for c in range(p.shape[1])]
    return f[np.minimum(found, f.size - 1)]


@dataclass(frozen=True, eq=False)
class PositionSpectra:
    """The estimates the cut-off rests on, per bin ``f`` (Hz) and channel: the multitaper spectrum's motion part
    ``s_hat`` and noise ``noise`` (module docstring), at ``rate``."""

    f: np.ndarray
    s_hat: np.ndarray
    noise: np.ndarray
    rate: float

    @staticmethod
    def of(x: np.ndarray, rate: float, lines: bool = False) -> PositionSpectra:
        """The estimates of the positions ``x`` at ``rate``; ``lines``: isolated strong lines joined to the
        motion count as motion (:func:`signal_spectrum`) -- on a record known to repeat, whose motion is a line
        spectrum."""
        f, p, nu = position_spectrum(x, rate)
        noise, excess = noise_spectrum(f, p, nu)
        s_hat = signal_spectrum(p, noise, excess, nu, f if lines else None)
        return PositionSpectra(f, with_tail(f, s_hat), noise, float(rate))

    def error(self, cutoff: float, order: int, differentiator: str = "5-point") -> np.ndarray:
        """Predicted rms qdd error (C,) of a zero-phase Butterworth of ``order`` at ``cutoff`` followed by two
        differentiations -- ``5-point`` (robid's non-periodic path), ``central`` (numpy.gradient, the plain
        recipe: gain sin(w h) / h) or ``exact`` (spectral, j w) -- equation (2) with that differentiator."""
        w = 2.0 * np.pi * self.f
        if differentiator == "5-point":
            d = filtering.derivative_gain(self.f, self.rate)
        elif differentiator == "central":
            d = np.sin(w / self.rate) * self.rate
        else:
            d = w
        risk = _risks(_warped(self.f, self.rate) ** (2 * order), d**2, w, self.s_hat, self.noise,
                      np.array([float(cutoff)]), self.rate, order)
        return np.sqrt(risk[0])

    def noise_std(self, cutoff: float, order: int, derivative: int) -> np.ndarray:
        """Std (C,) of the noise left on the ``derivative``-th central difference (numpy.gradient, gain
        sin(w h) / h each) of the positions low-passed by the zero-phase Butterworth of ``order`` at ``cutoff``:
        sqrt(mean_f H^2 d^(2 n) N_hat) (Parseval)."""
        d = np.sin(2.0 * np.pi * self.f / self.rate) * self.rate
        gain = (zero_phase_response(self.f, cutoff, self.rate, order) * d**derivative) ** 2
        return np.sqrt(gain @ self.noise / self.f.size)


def choose_cutoff(
    x: np.ndarray,
    rate: float,
    order: int,
    span: float,
    given: float | None = None,
    spectra: PositionSpectra | None = None,
) -> CutoffChoice:
    """The cut-off (Hz) for positions ``x`` (N, C) sampled at ``rate`` that minimises the predicted acceleration
    error (module docstring), searched on a log grid between 12/span (edges trimmed at 3/fc then take at most
    half of a record of ``span`` seconds; at least 40 samples remain) and 0.4 fs; with ``given``, that cut-off
    and its predicted error. ``spectra``: the estimates of ``x`` when the caller already has them."""
    spectra = spectra if spectra is not None else PositionSpectra.of(x, rate)
    f, s_hat, noise = spectra.f, spectra.s_hat, spectra.noise
    w = 2.0 * np.pi * f
    d2 = filtering.derivative_gain(f, rate) ** 2
    accel = np.mean(w[:, None] ** 4 * s_hat, axis=0)
    floor = np.median(noise[f >= 0.25 * rate], axis=0)
    moving = (np.mean(s_hat, axis=0) > MOVING * np.maximum(floor, 1e-300)) & (accel > 0)
    # edges trimmed at 3/fc take at most half the record and leave at least 40 samples
    hi = 0.4 * rate
    lo = min(max(12.0 / span, 3.0 * rate / max(0.5 * (x.shape[0] - 40), 1.0)), hi)
    if given is not None:
        grid = np.array([float(given)])
    else:
        grid = np.geomspace(lo, hi, max(int(PER_DECADE * np.log10(hi / lo)), 1) + 1)
    risks = _risks(_warped(f, rate) ** (2 * order), d2, w, s_hat, noise, grid, rate, order)  # (G, C)
    scale = np.where(moving, accel, np.inf) if moving.any() else np.ones_like(accel)
    k = int(np.argmin(np.sum(risks / scale[None, :], axis=1)))
    # each channel's own: the least predicted error where it moves; a channel at rest (signal under 30 dB above
    # its noise) has no motion to keep, whatever its spectrum shows (rounding flips of a hold logged with 4
    # decimals read as motion took a resting joint's own cut-off to 99 Hz): the lowest candidate
    own = np.where(moving, np.argmin(risks, axis=0), 0)
    bound = "" if given is not None or lo >= hi else ("lower" if k == 0 else ("upper" if k == grid.size - 1 else ""))
    return CutoffChoice(
        cutoff=float(grid[k]),
        noise_std=tuple(float(v) for v in np.sqrt(_white_equivalent(f, d2, noise, grid[k], rate, order))),
        acceleration_rms=tuple(float(v) for v in np.sqrt(np.where(moving, accel, 0.0))),
        predicted_error_rms=tuple(float(v) for v in np.sqrt(risks[k])),
        moving=tuple(int(j) for j in np.flatnonzero(moving)),
        bounds=(float(lo), float(hi)),
        at_bound=bound,
        given=given is not None,
        own_cutoffs=tuple(float(grid[i]) for i in own),
        own_error_rms=tuple(float(np.sqrt(risks[i, c])) for c, i in enumerate(own)),
    )


def _white_equivalent(
    f: np.ndarray, d2: np.ndarray, noise: np.ndarray, cutoff: float, rate: float, order: int
) -> np.ndarray:
    """The white noise level that leaves the same noise on the processed accelerations as N_hat does:
    sum_f d^4 H^2 N_hat / sum_f d^4 H^2 (per channel)."""
    weight = (d2 * zero_phase_response(f, cutoff, rate, order)) ** 2
    return weight @ noise / max(float(weight.sum()), 1e-300)


#: bins per block of :func:`_risks` (a block of every candidate's responses: 8 MB for 200 candidates)
RISK_BLOCK = 4096


def _risks(
    lifted: np.ndarray,
    d2: np.ndarray,
    w: np.ndarray,
    s_hat: np.ndarray,
    noise: np.ndarray,
    grid: np.ndarray,
    rate: float,
    order: int,
) -> np.ndarray:
    """R(fc) of equation (2) for every candidate of ``grid`` and channel, (G, C) (``lifted``: tan(pi f /
    fs)^(2 order) of the bins, :func:`_warped`: H = 1 / (1 + lifted / tan(pi fc / fs)^(2 order)) costs one product
    per bin and candidate, not a power). The means over frequency are matrix products of every candidate's d^2 H
    with the channels' spectra, a block of bins at a time; the motion term only over the bins where some
    channel's S_hat is not zero (the others add exact zeros)."""
    inverse = np.tan(np.pi * np.asarray(grid, dtype=float) / rate) ** (-2 * order)  # (G,)
    total = np.zeros((inverse.size, noise.shape[1]))
    for lo in range(0, lifted.size, RISK_BLOCK):
        part = slice(lo, lo + RISK_BLOCK)
        passed = d2[part] / (1.0 + lifted[part] * inverse[:, None])  # (G, bins): d^2 H
        total += np.square(passed) @ noise[part]
    moving = np.flatnonzero(np.any(s_hat, axis=1))
    for lo in range(0, moving.size, RISK_BLOCK):
        bins = moving[lo : lo + RISK_BLOCK]
        passed = d2[bins] / (1.0 + lifted[bins] * inverse[:, None])
        total += np.square(passed - w[bins] ** 2) @ s_hat[bins]
    return total / lifted.size
