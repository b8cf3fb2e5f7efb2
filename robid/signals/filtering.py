"""Non-periodic path: zero-phase low-pass filtering, consistent differentiation, decimation, edge trimming.

Filter: a Butterworth low-pass of order n (default 4) at the cut-off fc, run forwards and backwards
(``scipy.signal.sosfiltfilt``, odd padding): zero phase, magnitude |H(f)|^2 (-6 dB at fc, effective order 2n).
The same filter is applied to positions, torques and motor positions (parallel filtering, Gautier 1997),
and ``apply`` gives it to any other signal (e.g. regressor columns).
Differentiation: the 5-point central difference x'[k] = (x[k-2] - 8x[k-1] + 8x[k+1] - x[k+2]) / (12 h), applied
repeatedly to the filtered positions (fourth-order accurate; at f << fs its gain is j*omega to within
(omega h)^4 / 30). Edges: samples within ``edge_periods`` periods of the cut-off (3/fc by default) plus the
stencils' reach are trimmed at both ends, where the forward-backward filter is still settling.
Decimation (optional, integer factor R): every R-th sample after filtering; needs fc < 0.8 fs / (2R).
"""

from __future__ import annotations

import numpy as np
from scipy import signal

EDGE_PERIODS = 3.0


def lowpass_sos(cutoff: float, rate: float, order: int = 4) -> np.ndarray:
    return signal.butter(order, cutoff, btype="low", fs=rate, output="sos")


def zero_phase(x: np.ndarray, sos: np.ndarray) -> np.ndarray:
    """Forward-backward filtering along axis 0."""
    return signal.sosfiltfilt(sos, x, axis=0, padtype="odd")


def zero_phase_unpadded(x: np.ndarray, sos: np.ndarray) -> np.ndarray:
    """Forward-backward filtering along axis 0 from rest, without padding: the plain convolution with the
    zero-phase impulse response for a signal that is zero at both ends (the transpose of :func:`zero_phase` on
    samples far from the ends)."""
    return signal.sosfiltfilt(sos, x, axis=0, padtype=None)


def derivative(x: np.ndarray, h: float) -> np.ndarray:
    """5-point central difference along axis 0 (second-order one-sided stencils at the two first and last
    samples, which edge trimming removes anyway)."""
    out = np.empty_like(x)
    out[2:-2] = (x[:-4] - 8.0 * x[1:-3] + 8.0 * x[3:-1] - x[4:]) / (12.0 * h)
    out[:2] = np.gradient(x[:4], h, axis=0, edge_order=2)[:2]
    out[-2:] = np.gradient(x[-4:], h, axis=0, edge_order=2)[-2:]
    return out


def edge_samples(cutoff: float, rate: float, orders: int) -> int:
    return int(np.ceil(EDGE_PERIODS * rate / cutoff)) + 2 * orders


def magnitude_squared(sos: np.ndarray, rate: float, n: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Frequencies (Hz, 0..fs/2) and |H|^2 of the forward-backward filter there (|H_sos|^2 of one pass)."""
    f, response = signal.sosfreqz(sos, worN=n, fs=rate)
    return f, np.abs(response) ** 2


def derivative_gain(f: np.ndarray, rate: float) -> np.ndarray:
    """|D(f)| of the 5-point central difference: (8 sin(w h) - sin(2 w h)) / (6 h), w = 2 pi f."""
    wh = 2.0 * np.pi * f / rate
    return (8.0 * np.sin(wh) - np.sin(2.0 * wh)) / 6.0 * rate
