"""Undo a known time delay of recorded channels: band-limited (spectral) fractional-delay interpolation.

A channel read ``delay`` seconds late holds ``x_rec(t) = x(t - delay)``; the corrected channel is
``x(t_n) = x_rec(t_n + delay)``, needed between the samples when the delay is not a whole number of steps (the
KR300's link encoders read 3.06 ms after the motor encoders, 0.77 of a 4 ms step; docs/mapping-file.md "delay").

Method (the sampling theorem's interpolation, Oppenheim & Schafer, *Discrete-Time Signal Processing*, 3rd ed.,
section 4.6 / eq. 4.65 for the ideal fractional delay ``H(e^{jw}) = e^{jw D}``, applied per DFT bin):

1. the straight line through the first and last samples is taken out (it is shifted exactly, being linear);
2. the remainder ``y`` (zero at both ends) is extended odd-symmetrically to ``[y_0..y_{N-1}, -y_{N-2}..-y_1]``,
   a periodic sequence of period ``2N - 2`` that is continuous with a continuous first difference, so its DFT
   coefficients fall off as ``1/k^3`` and the periodic interpolation is free of the wrap-around jump a plain DFT
   of a non-periodic record would have;
3. every bin ``k`` of that sequence is multiplied by ``exp(j 2 pi f_k delay)`` (the Nyquist bin, real for a real
   signal, by ``cos(pi delay / dt)``) and the inverse DFT taken; the first ``N`` samples are the shifted
   remainder.

For a band-limited signal this is the exact delay in the interior of the record; within a few samples of the
ends, values beyond the record are the odd continuation, i.e. second-order accurate there (exact when the record
starts and ends at rest). For periodic data recorded over whole periods the plain phase shift per harmonic
``exp(j k omega_0 delay)`` of the record itself would be exact; the odd extension, used for every record because
the reader does not know yet which path the signal stage will take, agrees with it to 1e-7 of the amplitude away
from the ends (tests/test_mapping_delay.py). Uniform sampling is required.
"""

from __future__ import annotations

import numpy as np

#: relative spread of the time steps accepted as uniform sampling
UNIFORM_TOLERANCE = 1e-3


def uniform_step(t: np.ndarray) -> float | None:
    """The sampling step of ``t`` if it is uniform within UNIFORM_TOLERANCE (relative), else None."""
    t = np.asarray(t, dtype=float)
    if t.size < 2:
        return None
    steps = np.diff(t)
    h = float(np.median(steps))
    if not h > 0 or np.max(np.abs(steps - h)) > UNIFORM_TOLERANCE * h:
        return None
    return h


def advance(x: np.ndarray, step: float, delay: float) -> np.ndarray:
    """``x(t_n + delay)`` from uniform samples ``x`` (N,) or (N, m) along axis 0 with spacing ``step``
    (module docstring: line removed, odd-symmetric extension, phase ``exp(j 2 pi f delay)`` per bin).

    A positive ``delay`` undoes a channel that was recorded late; ``delay = 0`` returns a copy."""
    x = np.asarray(x, dtype=float)
    if delay == 0.0 or x.shape[0] < 3:
        return x.copy()
    column = x.ndim == 1
    data = x[:, None] if column else x
    n = data.shape[0]
    ramp = np.arange(n, dtype=float)[:, None] / (n - 1)
    first, last = data[:1], data[-1:]
    line = first + (last - first) * ramp
    rest = data - line
    extended = np.concatenate([rest, -rest[-2:0:-1]], axis=0)  # period 2N - 2, odd about samples 0 and N - 1
    m = extended.shape[0]
    spectrum = np.fft.rfft(extended, axis=0)
    phase = np.exp(2j * np.pi * np.fft.rfftfreq(m, step) * delay)
    if m % 2 == 0:
        phase[-1] = np.cos(np.pi * delay / step)  # the real Nyquist bin: the shift's real part
    shifted = np.fft.irfft(spectrum * phase[:, None], n=m, axis=0)[:n]
    moved_line = first + (last - first) * (ramp + delay / (step * (n - 1)))
    out = shifted + moved_line
    return out[:, 0] if column else out
