"""The motion part of the position spectrum the cut-off rests on (docs/signals.md section 7, issue 31): which bins
of the multitaper spectrum hold motion -- standing out of the noise in a band, or as a strong line on a record that
repeats, joined to the motion's bulk -- and the tail a falling motion spectrum carries on under the noise. The
spectrum and the noise envelope themselves are :mod:`robid.signals.cutoff`'s.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: the tapers' time-bandwidth (robid.signals.cutoff.position_spectrum)
NW = 6.0
#: a bin holds signal when P exceeds the noise floor by the 99.9 % quantile of chi^2_nu / nu
SIGNIFICANCE = 0.999
#: smoothing bands: a sixth of an octave, and at least one taper bandwidth
BAND_RATIO = 2.0 ** (1.0 / 6.0)
MIN_BINS = int(2 * NW + 1)
#: a band holds motion when its median stands this many times above the noise envelope
BAND_EXCESS = 3.0


#: a line stands out of the noise on its own where noise alone would reach it once in this many records
LINE_RECORDS = 1000
#: such a line is motion when it lies within this factor of the highest motion below it (a chain from the motion)
LINE_CHAIN = 3.0


def signal_spectrum(
    p: np.ndarray, noise: np.ndarray, excess: np.ndarray, nu: int, f: np.ndarray | None = None
) -> np.ndarray:
    """S_hat = P - N where P stands above N by the 99.9 % quantile of chi^2_nu / nu (a bin that noise alone
    would reach once in a thousand) in a band whose median stands ``BAND_EXCESS`` times above the noise, or on
    its own by the quantile that noise alone reaches once in ``LINE_RECORDS`` records of this many bins where
    that line is joined to the motion (:func:`_chained`; with the bins' frequencies ``f`` only: on a record known
    to repeat); else 0.

    The second test (issue 31): the band medians are blind to isolated lines, and a periodic record of many
    periods is nothing else -- the harmonics of an excitation, one bin each among dozens of noise bins. Left out
    of S_hat, a cut-off inside the excitation's band looked free: 9 Hz for harmonics up to 8.3 Hz (50 periods,
    2 kHz), 150 times the error of the best cut-off, and the plain recipe's predicted error (robid.signals.guard)
    was as wrong. On other records lines are left to the band test: the UR10e logs carry lines at 10, 20, ...
    40 Hz (of the logging, not of a motion below 2 Hz), in a chain of their own, that took the cut-off to 36-40
    Hz and made the cross-validation of docs/validation.md worse on the rest-to-rest runs (11_28_22 q1 22 % ->
    47 %)."""
    kappa = stats.chi2.ppf(SIGNIFICANCE, nu) / nu
    banded = _chained_from_peak((p > kappa * noise) & (excess > BAND_EXCESS), f_of(p) if f is None else f, p)
    motion = banded
    if f is not None:
        strong = p > (stats.chi2.isf(1.0 / (LINE_RECORDS * p.shape[0]), nu) / nu) * noise
        motion = banded | _chained(f, banded, strong & ~banded)
    return np.where(motion, p - noise, 0.0)


def f_of(p: np.ndarray) -> np.ndarray:
    """Bin numbers standing in for frequencies (ratios of frequencies are ratios of bin numbers)."""
    return np.arange(p.shape[0], dtype=float)


def _chained_from_peak(motion: np.ndarray, f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The bins of ``motion`` (bins, C) joined to the motion's bulk: every one up to the bin of the most position
    power ``p`` among them, and above it those taken upwards, each within ``LINE_CHAIN`` times the highest
    frequency taken below it. A robot's motion spectrum runs on from its band until it meets the noise; a hump of
    the noise far above it that stands 3 times out of the noise envelope is not motion (the UR10e logs: a band at
    16.6 Hz above a motion below 2 Hz, run 19_09_27-15_11_06, set joint 2's cut-off at 16 Hz and its predicted
    qdd error at 60 times the other joints'). The chain starts at the most power, not at the lowest bin: the
    lowest bins of a long record are the leakage of its slowest line (0.04 Hz under a 0.14 Hz fundamental)."""
    out = np.zeros_like(motion)
    for c in range(motion.shape[1]):
        found = np.flatnonzero(motion[:, c])
        if found.size == 0:
            continue
        # the lowest band (2 NW + 1 bins) cannot anchor: there the gain (2 sin(pi f / fs))^4 the spectrum is
        # divided by is so small that the tapers' leakage of the slowest line stands out
        anchors = found[found >= MIN_BINS] if np.any(found >= MIN_BINS) else found
        peak = int(anchors[np.argmax(p[anchors, c])])
        out[found[found <= peak], c] = True
        top = f[peak]
        for i in found[found > peak]:
            if f[i] > LINE_CHAIN * top:
                break
            out[i, c] = True
            top = f[i]
    return out


def _chained(f: np.ndarray, banded: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The ``lines`` (bins, C) joined to the motion: taken upwards from the lowest one, each within
    ``LINE_CHAIN`` times the highest frequency of motion below it (the bins ``banded`` or lines already taken).
    An excitation's harmonics follow each other (h + 1 over h: at most 2; odd harmonics only: 3); a line far
    above the motion is not part of it."""
    out = np.zeros_like(lines)
    for c in range(lines.shape[1]):
        found = np.flatnonzero(lines[:, c])
        below = np.flatnonzero(banded[:, c])
        top = 0.0
        for i in found:
            reached = f[below[below < i]].max() if below.size and below[0] < i else 0.0
            top = max(top, reached)
            if top == 0.0 or f[i] <= LINE_CHAIN * top:
                out[i, c] = True
                top = max(top, f[i])
            else:
                break
    return out


#: the motion's tail is carried on under the noise where its acceleration spectrum falls at least this steeply
#: (as a power of f) over the last octave where it stands out of the noise
TAIL_SLOPE = -1.0


def with_tail(f: np.ndarray, s_hat: np.ndarray) -> np.ndarray:
    """S_hat with the motion's tail below the noise (issue 31). A broadband motion -- a rest-to-rest move, whose
    acceleration has kinks where the jerk steps -- does not end where it sinks into the noise: its acceleration
    spectrum w^4 S falls on as a power of f. S_hat stops there, so the predicted loss of a cut-off near that
    frequency missed the tail and the choice sat too low (1.2-1.9 times the hindsight-best error on minimum-jerk
    moves). Per channel, where the band means of w^4 S_hat (sixth-octave bands) over the octave below the last
    band that holds motion are all positive (three bands at least) and fall as f^a with a < ``TAIL_SLOPE`` (a
    least-squares line in log-log), S_hat above the last band is raised to that line carried on. The last band
    is left out of the fit: a band-limited motion may end inside it, and its partial mean read as a steep fall
    put a phantom tail under a flat acceleration spectrum with a sharp edge (cut-off 100 Hz instead of 8 Hz,
    tests/test_signals_cutoff.py). A line spectrum (flat or rising band means, or bands without motion between
    its lines) gets no tail."""
    index, centre = band_index(f)
    w4 = (2.0 * np.pi * f) ** 4
    out = s_hat.copy()
    counts = np.bincount(index[1:], minlength=centre.size).astype(float)
    for c in range(s_hat.shape[1]):
        means = np.bincount(index[1:], weights=w4[1:] * s_hat[1:, c], minlength=centre.size) / np.maximum(counts, 1)
        moving = np.flatnonzero(means > 0)
        if moving.size < 3:
            continue
        last = int(moving[-1])
        # the last band may hold only part of the motion's edge (a band-limited motion ends in it): the slope
        # is read from the octave below it
        octave = np.flatnonzero((centre >= centre[last - 1] / 2.0) & (np.arange(centre.size) < last))
        if octave.size < 3 or np.any(means[octave] <= 0):
            continue
        slope, level = np.polyfit(np.log(centre[octave]), np.log(means[octave]), 1)
        if slope >= TAIL_SLOPE:
            continue
        above = index > last
        tail = np.exp(level + slope * np.log(f[above])) / np.maximum(w4[above], 1e-300)
        out[above, c] = np.maximum(out[above, c], tail)
    return out


def band_index(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(band of every bin, centre of every band): the bands of :func:`band_medians` (a sixth of an octave wide,
    at least ``MIN_BINS`` bins); bin 0 (the mean) has band -1."""
    edges = [f[1]]
    while edges[-1] < f[-1]:
        edges.append(max(edges[-1] * BAND_RATIO, edges[-1] + MIN_BINS * (f[1] - f[0])))
    index = np.clip(np.searchsorted(edges, f, side="right") - 1, 0, len(edges) - 2)
    index[0] = -1
    bands = np.unique(index[1:])
    centre = np.array([np.sqrt(f[index == b].min() * f[index == b].max()) for b in bands])
    return np.searchsorted(bands, index) - (index < 0), centre


