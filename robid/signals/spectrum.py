"""Amplitude spectra of processed signals, for residual analysis (what a fit leaves, frequency by frequency)."""

from __future__ import annotations

import numpy as np


def amplitude_spectrum(x: np.ndarray, sample_rate: float, periodic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Single-sided amplitude spectrum of the columns of ``x`` (N, k): ``2 |X_h| / N`` (DC: ``|X_0| / N``).

    A periodic record holding whole periods has no leakage and is transformed as it is; any other record is
    multiplied by a Hann window (amplitudes corrected by its coherent gain 0.5), and a long one zero-padded to a
    fast transform length (robid.signals.cutoff.fft_length: the same windowed spectrum on a grid a few per mille
    finer, the amplitudes still those of the n windowed samples)."""
    from robid.signals.cutoff import fft_length

    x = np.asarray(x, dtype=float)
    n = size = x.shape[0]
    if periodic:
        spec = np.abs(np.fft.rfft(x, axis=0)) / n
    else:
        w = np.hanning(n)
        size = fft_length(n)
        spec = np.abs(np.fft.rfft((x - x.mean(axis=0)) * w[:, None], n=size, axis=0)) / (0.5 * n)
    spec[1:] *= 2.0
    freq = np.fft.rfftfreq(size, d=1.0 / sample_rate)
    return freq, spec


def merge_bins(freq: np.ndarray, spec: np.ndarray, max_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_bins`` bins: groups of consecutive bins become one, at the group's first frequency, with the
    group's largest amplitude (a peak is never averaged away)."""
    n = freq.size
    if n <= max_bins:
        return freq, spec
    size = -(-n // max_bins)
    starts = np.arange(0, n, size)
    return freq[starts], np.maximum.reduceat(spec, starts, axis=0)
