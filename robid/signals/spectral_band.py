"""The automatic band of the periodic path: which weight each harmonic gets, chosen per joint to minimise the
predicted error of the accelerations on the samples identification uses (docs/signals.md section 6, "The
automatic band").

A spectral path rebuilds x^(n) = sum_b W_b X[b] (j omega_b)^n e^{j omega_b t} from the DFT X of a record of K
periods of T (K = 1: the averaged period; K >= 2: every sample of the K periods, where bin b sits at the
fractional harmonic b / K, omega_b = 2 pi b / (K T)). The candidates for W, per joint:

* the hard band: W = 1 on the harmonics where the averaged positions stand ``snr`` times above their
  period-scatter noise, 0 elsewhere (:func:`robid.signals.bands.snr_band`) -- exact for motion that is
  band-limited, as a commanded Fourier trajectory followed closely. It is the union over the joints;
* the joint's own hard band: the harmonics of the hard band where this joint's coefficient has ``snr`` times
  the power of its noise (:func:`own_hard_bands`). A joint that moves at a few harmonics would otherwise take
  the noise of every harmonic another joint needs: on a test pair (tests/test_signals_spectral_band.py) the
  acceleration error of a joint at harmonics 1, 3, 5 went from 1e-2 (shared band) to 6e-5 - 2e-4 rad/s^2;
* the zero-phase Butterworth response W(h) = 1 / (1 + (h / h_c)^(2 m)), m = ``ORDER``, h_c on a log grid up to
  half the Nyquist frequency. A closed loop with friction does not follow a band-limited command: where a joint
  reverses, friction changes sign and the acceleration steps, and a step holds every harmonic (as 1/h in the
  acceleration). A hard band truncates that series and rings (Gibbs) over the whole period, onto the samples
  identification uses; a smooth response keeps the error within a few 1/(2 pi f_c) of the step -- inside the
  near-zero-velocity rows that identification leaves out anyway. (Gaps in the hard band, harmonics just
  below the SNR threshold between ones above it, make it worse still: a comb filter on continuous content.)

Per joint j the chosen candidate has the least predicted mean-square error of the accelerations on the samples
U_j that identification uses (|qd| >= min_speed on a pilot derivative from the hard band; every sample without a
minimum speed):

    R_j(W) = mean_{i in U_j} ( D^2 [(W - 1) X~_j] )_i^2  +  sum_b w_b omega_b^4 W_b^2 N_jb                  (1)

The first term is what the band loses of the motion on U_j, the second the noise it lets through. N_jb is the
variance of coefficient b (averaged period: period scatter, pooled, :func:`robid.signals.noise.pooled_noise_floor`;
K periods: the quiet bins between harmonics, :mod:`robid.signals.periodic_samples`), w_b = 2 (1 at DC and
Nyquist), D^2 the spectral second derivative. X~ is the motion: on the bins S_j that hold motion, X scaled to
the power max(|X[b]|^2 - N_jb, 0) with its phase kept (the positive part of the unbiased power), 0 elsewhere.
S_j: bins at most half the Nyquist frequency (where the candidates end) whose |X[b]|^2 is ``snr`` times N_jb
at a harmonic of the hard band (the nearest to b / K), or above N_jb by the 99.9 % quantile of chi^2_2 / 2
where the neighbourhood -- the running median over 17 harmonics -- stands 3 times above the noise. As for the
non-periodic cut-off (:mod:`robid.signals.cutoff`), an isolated exceedance is not motion: weighted by omega^4,
one false positive near Nyquist would decide the choice.

Stability. A first version subtracted the expected noise from the lost power instead (Stein's unbiased risk
estimate, Stein 1981) and clipped the result at 0. Unbiased, but the sum over many motion bins near the noise,
weighted by omega^4, is so noisy that on some records it went negative and a cut-off far inside the motion looked
best. On the virtual TX200 with two periods (tests/test_estimation_two_periods.py) one record in ten then took a
cut-off of 2.8 Hz on some joint instead of 7-11 Hz. Its estimates moved by several standard deviations, and the
scatter of the estimates over 40 noise realisations reached 2.7 times the reported standard deviation. With the
positive part every record chose 6.7-11.3 Hz (or the hard band), and the scatter is 0.8-1.2 times the reported
standard deviation. The candidate cut-offs are the fixed harmonic numbers 2^(i/4), a quarter of an octave apart:
every record of the same period chooses among the same values.

Measured (benchmarks/RESULTS.md, issue 11): on the virtual UR10e (stick-slip at reversals, PD control,
realistic noise), the rms acceleration error on the identification rows fell from 0.012-0.026 rad/s^2 (hard
band) to 0.007-0.012 on 3 averaged periods at 200 Hz.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.ndimage import median_filter

from robid.signals import noise
from robid.signals.path_result import format_ranges

#: order m of the Butterworth response W(h) = 1 / (1 + (h / h_c)^(2 m)) (that of a second-order low-pass run
#: forwards and backwards: smooth enough to keep the error of an acceleration step local)
ORDER = 2
#: candidate cut-off harmonics per octave, at the fixed harmonic numbers 2^(i / PER_OCTAVE) (module docstring,
#: "Stability")
PER_OCTAVE = 4
#: a bin holds motion when |X|^2 exceeds the noise by the 99.9 % quantile of chi^2_2 / 2 ...
SIGNIFICANCE = 0.999
#: ... at a harmonic whose running median (over ``STRETCH`` harmonics) stands ``STRETCH_EXCESS`` above it
STRETCH = 17
STRETCH_EXCESS = 3.0


@dataclass(frozen=True, eq=False)
class SpectralBand:
    """The weights of a spectral path over the harmonics 0..M/2 of one period, per channel: where
    ``cutoffs[c]`` is None a hard band -- the shared ``mask`` (0/1), or the channel's own ``own[:, c]`` (a
    subset of it, when given) -- else the Butterworth response of order ``order`` at the cut-off harmonic
    ``cutoffs[c]``; raised to 1 on the harmonics ``extra`` (a torque band's own significant harmonics, a
    design's excited ones). ``how`` says how it was chosen."""

    mask: np.ndarray
    how: str
    cutoffs: tuple[float | None, ...] = (None,)
    order: int = ORDER
    extra: np.ndarray | None = None
    own: np.ndarray | None = None

    @staticmethod
    def hard(mask: np.ndarray, how: str) -> SpectralBand:
        return SpectralBand(np.asarray(mask, dtype=bool), how)

    @property
    def smooth(self) -> bool:
        """Whether any channel has a smooth response."""
        return any(c is not None for c in self.cutoffs)

    @property
    def shared(self) -> bool:
        """Whether every channel has the shared hard band."""
        return not self.smooth and self.own is None

    def with_extra(self, extra: np.ndarray, how: str) -> SpectralBand:
        """This band with W = 1 also on the harmonics ``extra`` (bool per harmonic)."""
        extra = np.asarray(extra, dtype=bool)
        if self.shared:
            return SpectralBand.hard(self.mask | extra, how)
        both = extra if self.extra is None else (self.extra | extra)
        return SpectralBand(self.mask, how, self.cutoffs, self.order, both, self.own)

    def common(self, how: str) -> SpectralBand:
        """One band for all channels that passes what each channel's band passes: the largest cut-off, raised
        to 1 on the shared hard band where a channel has a hard band (a torque band shared by every joint)."""
        smooth = [c for c in self.cutoffs if c is not None]
        if not smooth:
            return SpectralBand.hard(self.mask if self.extra is None else self.mask | self.extra, how)
        extra = self.mask if len(smooth) < len(self.cutoffs) else np.zeros_like(self.mask)
        if self.extra is not None:
            extra = extra | self.extra
        return SpectralBand(self.mask, how, (max(smooth),), self.order, extra if extra.any() else None)

    def at(self, h: np.ndarray) -> np.ndarray:
        """W (len(h), channels) at the (possibly fractional) harmonic numbers ``h`` (0 <= h <= M/2): each
        channel's response, or its hard band at the nearest harmonic; 0 at the Nyquist harmonic M/2 of an even
        M (its derivative is ambiguous) for a smooth response, as the hard band never holds it."""
        h = np.asarray(h, dtype=float)
        top = self.mask.size - 1
        nearest = np.clip(np.floor(h + 0.5).astype(int), 0, top)
        lift = None if self.extra is None else self.extra[nearest].astype(float)
        columns = []
        for i, c in enumerate(self.cutoffs):
            if c is None:
                w = (self.mask if self.own is None else self.own[:, i])[nearest].astype(float)
            else:
                w = np.where(h > top - 0.5, 0.0, butterworth(h, c, self.order))
            columns.append(w if lift is None else np.maximum(w, lift))
        return np.stack(columns, axis=1)

    def weights(self) -> np.ndarray:
        """W (M/2 + 1, channels) at the harmonics of one period."""
        return self.at(np.arange(self.mask.size))

    def kept(self) -> tuple[int, ...]:
        """Harmonics h >= 1 with W >= 1/2 on some channel (the hard band; up to the cut-off of a smooth one)."""
        return tuple(int(x) for x in np.flatnonzero(np.any(self.weights()[1:] >= 0.5, axis=1)) + 1)

    def describe(self, period: float) -> str:
        """The band in words: the hard band's harmonics and each channel's cut-off (Hz) where it is smooth, or
        its own harmonics where it has its own hard band."""
        kept = tuple(int(x) for x in np.flatnonzero(self.mask[1:]) + 1)
        text = (
            f"DC and {len(kept)} harmonics: {format_ranges(kept)}"
            + (f" (highest {max(kept) / period:.4g} Hz)" if kept else "")
            + f" ({self.how})"
        )
        if self.shared:
            return text
        per_joint = []
        for i, c in enumerate(self.cutoffs):
            if c is not None:
                per_joint.append(f"{c / period:.3g} Hz")
            elif self.own is None or np.array_equal(self.own[:, i], self.mask):
                per_joint.append("hard")
            else:
                per_joint.append(
                    "own harmonics " + format_ranges(tuple(int(x) for x in np.flatnonzero(self.own[1:, i]) + 1))
                )
        return f"{self.how}: per joint [{'; '.join(per_joint)}] (hard: the harmonics {format_ranges(kept)})"


def cutoff_grid(lo: float, top: float) -> np.ndarray:
    """The candidate cut-off harmonics 2^(i / PER_OCTAVE) within [lo, top] (at least ``top``)."""
    first, last = np.ceil(PER_OCTAVE * np.log2(lo)), np.floor(PER_OCTAVE * np.log2(top))
    grid = 2.0 ** (np.arange(first, last + 1) / PER_OCTAVE)
    return grid if grid.size else np.array([top])


def butterworth(h: np.ndarray, cutoff: float, order: int = ORDER) -> np.ndarray:
    """W(h) = 1 / (1 + (h / h_c)^(2 order)): the zero-phase response |H(f)|^2 of a forward-backward analogue
    Butterworth low-pass of ``order`` at the cut-off harmonic h_c (f = h / T)."""
    return 1.0 / (1.0 + (np.asarray(h, dtype=float) / cutoff) ** (2 * order))


def motion_bins(
    power: np.ndarray, floor: np.ndarray, k: int, top: float, hard: np.ndarray, snr: float
) -> np.ndarray:
    """S (bins, C): the bins of a K-period record that hold motion (module docstring); bin b sits at harmonic
    b / K, ``top`` is the highest harmonic considered, ``hard`` (harmonics 0..M/2) the hard band, whose
    harmonics hold motion wherever their bins have ``snr`` times the power of the noise (a sparse line
    spectrum, as a Fourier design's, has no neighbourhood above the noise; with the 99.9 % test instead, one
    noise bin at a high harmonic, in one record of a few dozen, was counted as motion that every band
    without it loses). A neighbourhood standing above the noise holds motion only where it is joined to such a
    harmonic of the channel (:func:`_joined_to_motion`): a robot's motion spectrum runs on from its band until
    it meets the noise; a stretch of noise far above it that happens to stand out of its floor is not motion
    (issue 31: at 120-220 Hz of a 0.75 Hz motion, in most two-period records)."""
    ratio = power / np.maximum(floor, 1e-300)
    harmonic_ratio = ratio[::k]  # bins b = K h
    stretch = median_filter(harmonic_ratio, size=(min(STRETCH, harmonic_ratio.shape[0]), 1), mode="nearest")
    stretch = stretch / (stats.chi2.median(2) / 2.0)
    b = np.arange(power.shape[0])
    nearest = np.minimum(np.floor(b / k + 0.5).astype(int), stretch.shape[0] - 1)
    mask = np.asarray(hard, dtype=bool)
    anchors = np.zeros(harmonic_ratio.shape, dtype=bool)
    anchors[: mask.size] = mask[: harmonic_ratio.shape[0], None] & (harmonic_ratio[: mask.size] > snr)
    anchors[0] = False
    stretched = _joined_to_motion(stretch > STRETCH_EXCESS, anchors)
    in_band = mask[np.minimum(nearest, mask.size - 1)]
    kappa = stats.chi2.ppf(SIGNIFICANCE, 2) / 2.0
    significant = ratio > kappa
    at_harmonic = (b % k == 0)[:, None]
    stretch_ok = stretched[nearest] & (at_harmonic | significant)
    s = (stretch_ok | (in_band[:, None] & (ratio > snr))) & (b / k <= top)[:, None]
    s[0] = False
    return s


def _joined_to_motion(raised: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """The runs of consecutive harmonics in ``raised`` (H, C) that hold, or lie within half a ``STRETCH`` of, a
    harmonic in ``anchors`` (H, C): the neighbourhoods joined to the channel's own significant harmonics."""
    out = np.zeros_like(raised)
    reach = STRETCH // 2
    for c in range(raised.shape[1]):
        near = np.convolve(anchors[:, c].astype(float), np.ones(2 * reach + 1), mode="same") > 0
        edges = np.diff(np.concatenate([[0], raised[:, c].astype(np.int8), [0]]))
        for lo, hi in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            if near[lo:hi].any():
                out[lo:hi, c] = True
    return out


@dataclass(frozen=True)
class BandRisk:
    """Equation (1): ``risk`` (candidates, C) for the candidates ``[hard, own hard, Butterworth at grid[0],
    ...]`` and the index of each channel's choice."""

    grid: np.ndarray
    risk: np.ndarray
    chosen: np.ndarray

    def error(self) -> np.ndarray:
        """Predicted rms acceleration error of each channel's choice."""
        return np.sqrt(self.risk[self.chosen, np.arange(self.risk.shape[1])])


def choose_band(
    x: np.ndarray,
    floor: np.ndarray,
    period: float,
    k: int,
    hard: SpectralBand,
    min_speed: float | None,
    snr: float = 20.0,
) -> tuple[SpectralBand, BandRisk]:
    """Per channel, the band of least predicted acceleration error (module docstring) among ``hard``, the
    channel's own harmonics in it (power ``snr`` times the noise, :func:`own_hard_bands`) and the Butterworth
    responses, on the samples faster than ``min_speed`` by the hard band's velocity (every sample without
    one). ``x`` (N, C) is a record of ``k`` periods of ``period`` (N = K M; K = 1: the averaged period),
    ``floor`` the variance of its DFT coefficients (N//2 + 1, C)."""
    n = x.shape[0]
    bins = n // 2 + 1
    b = np.arange(bins)
    harmonic = b / k
    omega = 2.0 * np.pi * b / (k * period)
    top = max(2.0, (n // k) / 4.0)  # half the Nyquist frequency, as the hard band
    spectrum = np.fft.rfft(x, axis=0) / n
    hard_weights = hard.at(harmonic)[:, [0] * x.shape[1]]
    if min_speed:
        pilot = np.fft.irfft(spectrum * 1j * omega[:, None] * hard_weights * n, n=n, axis=0)
        used = np.abs(pilot) >= min_speed
    else:
        used = np.ones(x.shape, dtype=bool)
    power = np.abs(spectrum) ** 2
    motion = motion_bins(power, floor, k, top, hard.mask, snr)
    shrink = np.sqrt(np.clip(1.0 - floor / np.maximum(power, 1e-300), 0.0, None))
    x_motion = np.where(motion, spectrum * shrink, 0.0)
    own = own_hard_bands(power, floor, k, hard.mask, snr)
    own_weights = SpectralBand(hard.mask, "", (None,) * x.shape[1], own=own).at(harmonic)
    gain = noise.harmonic_weights(n, bins)[:, None] * omega[:, None] ** 4
    count = np.maximum(used.sum(axis=0), 1)
    lo = max(1.0, float(max(hard.kept(), default=1)) / 20.0)
    grid = cutoff_grid(lo, top)

    def risk(w: np.ndarray) -> np.ndarray:
        lost = np.fft.irfft(x_motion * (w - 1.0) * -(omega[:, None] ** 2) * n, n=n, axis=0)
        bias = (np.where(used, lost, 0.0) ** 2).sum(axis=0) / count
        return bias + (gain * w**2 * floor).sum(axis=0)

    risks = [risk(hard_weights), risk(own_weights)]
    risks += [risk(np.repeat(butterworth(harmonic, hc)[:, None], x.shape[1], axis=1)) for hc in grid]
    table = np.array(risks)
    chosen = np.argmin(table, axis=0)
    if np.all(chosen == 0):
        return hard, BandRisk(grid, table, chosen)
    cutoffs = tuple(None if i <= 1 else float(grid[i - 2]) for i in chosen)
    own = np.where(chosen == 1, own, hard.mask[:, None])
    rows = f"|qd| >= {min_speed:g} by the hard band's velocity" if min_speed else "every sample"
    how = (
        f"per joint the hard band, the joint's own significant harmonics in it, or a zero-phase Butterworth "
        f"response of order {ORDER}, whichever predicts the least acceleration error on the rows identification "
        f"uses ({rows})"
    )
    band = SpectralBand(hard.mask, how, cutoffs, ORDER, own=own if np.any(chosen == 1) else None)
    return band, BandRisk(grid, table, chosen)


def own_hard_bands(power: np.ndarray, floor: np.ndarray, k: int, mask: np.ndarray, snr: float) -> np.ndarray:
    """Each channel's own hard band (M/2 + 1, C): DC and the harmonics of the shared hard band ``mask`` where
    the channel's coefficient (bin K h of a K-period record) has ``snr`` times the power of its noise -- the
    test of the shared band (:func:`robid.signals.bands.snr_band`), per joint; a 99.9 % test let a noise
    harmonic through in one record of a few dozen, and at h = 31 its noise alone was 20 times the error of the
    right band. The shared band is the union over the joints: a joint that moves at a few harmonics would
    otherwise take the noise of every harmonic another joint needs."""
    at_harmonics = (power / np.maximum(floor, 1e-300))[::k][: mask.size]
    own = mask[:, None] & (at_harmonics > snr)
    own[0] = mask[0]
    return own


def choice_account(band: SpectralBand, risk: BandRisk, period: float) -> str:
    """The line of the account that says what was chosen per joint, and the predicted errors."""
    error = ", ".join(f"{v:.3g}" for v in risk.error())
    hard = ", ".join(f"{v:.3g}" for v in np.sqrt(risk.risk[0]))
    return (
        f"band of least predicted acceleration error: {band.describe(period)}; predicted rms error of qdd "
        f"[{error}] rad/s^2 (hard band [{hard}])"
    )
