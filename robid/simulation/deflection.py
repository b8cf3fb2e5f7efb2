"""Motor-side reference of the virtual robot's damped elastic joints: the deflection delta = q - theta under which
the link follows its reference exactly.

On the reference the link row of an elastic joint (robid.simulation.plant, Spong 1987) reads
``tau_L = K (theta - q) + D (thetad - qd)`` with tau_L the link torque of the reference, i.e.::

    D delta' + K delta = -tau_L(t)                                                                      (1)

D = 0 gives delta = -tau_L / K (the flat output; plant.py keeps that case). With D > 0, (1) is a stable first-order
system. For a T-periodic tau_L = Re sum_h c_h e^{j h w t} (w = 2 pi / T) its periodic solution is exact per
harmonic (Lismonde 2020 eq. 2.22)::

    delta_h = -c_h / (K + j h w D),    delta^(k)_h = (j h w)^k delta_h                                 (2)

A run from standstill (rest-to-rest trajectory) adds the homogeneous solution c e^{-a t}, a = K / D, so that
delta starts at the standstill deflection -tau_L(q0, 0, 0) / K; after the motion the motor relaxes to it again
as e^{-a (t - end)} while the links hold still (:class:`StandstillTransient`).

robid.elastic.motor_reference solves the same equations, but on robid's generated inverse dynamics, which the
virtual robot never uses (docs/architecture.md: the simulator shares only the robot file with the
identification). The per-harmonic solve is therefore repeated here on the simulator's own Newton-Euler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: harmonics of tau_L kept: those above SPECTRUM_TAIL times the largest of their joint (the rest is rounding)
SPECTRUM_TAIL = 1e-14
#: the sampling of one period is doubled (from the feed-forward table's) until the kept harmonics lie in its lowest
#: eighth, up to this many samples; beyond that (a torque that is not band-limited, e.g. a kink) the DFT of the
#: finest sampling is used as it is
MAX_SAMPLES = 2**16
#: e^-50 ~ 2e-22: a transient older than this many time constants is left out (below rounding)
TRANSIENT_HORIZON = 50.0


def periodic_deflection(
    torque: Callable[[np.ndarray], np.ndarray],
    period: float,
    samples: int,
    stiffness: np.ndarray,
    damping: np.ndarray,
) -> list[np.ndarray]:
    """[delta, delta', delta''] of eq. (2), each (samples + 1, m), at t = k T / samples, k = 0..samples (the last
    row repeats the first), for the T-periodic link torque ``torque(t) -> (N, m)`` of m joints with ``stiffness``
    K > 0 and ``damping`` D > 0 (m,). tau_L is sampled on a refinement of that grid (``samples`` times a power of
    2, see MAX_SAMPLES), so the grid's values are the DFT's samples and no series is evaluated off it."""
    n = samples
    while True:
        tau = np.asarray(torque(np.arange(n) * (period / n)), dtype=float)
        spectrum = np.fft.rfft(tau, axis=0)
        magnitude = np.abs(spectrum)
        significant = np.flatnonzero(np.any(magnitude > SPECTRUM_TAIL * magnitude.max(axis=0), axis=1))
        top = int(significant[-1]) if significant.size else 0
        if top <= n // 8 or 2 * n > max(MAX_SAMPLES, samples):
            break
        n *= 2
    top = min(top, (n - 1) // 2)  # an even n's Nyquist bin has no sign for the odd derivative: never kept
    spectrum[top + 1 :] = 0.0
    jhw = 2j * np.pi / period * np.arange(spectrum.shape[0])[:, None]
    delta = -spectrum / (stiffness + jhw * damping)
    out = []
    for k in range(3):
        values = np.fft.irfft(delta * jhw**k, n, axis=0)[:: n // samples]
        out.append(np.vstack([values, values[:1]]))
    return out


@dataclass(frozen=True, eq=False)
class StandstillTransient:
    """A rest-to-rest run of damped elastic joints (m of them), from standstill at t = 0 to ``end``.

    The exact deflection is (module docstring)::

        t < 0:          delta = rest
        0 <= t <= end:  delta = delta_p(t) + c e^{-a t},                   c = rest - delta_p(0)
        t > end:        delta = rest + (delta_end - rest) e^{-a (t - end)},  delta_end = delta_p(0) + c e^{-a end}

    with delta_p the periodic solution (2). ``periodic_start`` = (delta_p, delta_p', delta_p'') at phase 0, each
    (m,): the values a periodic table holds outside the motion. delta and delta' are continuous at 0 and end
    (D delta' = -K delta - tau_L with tau_L continuous there).
    """

    rate: np.ndarray  # a = K / D, (m,)
    rest: np.ndarray  # -tau_L(q0, 0, 0) / K, (m,)
    periodic_start: tuple[np.ndarray, np.ndarray, np.ndarray]
    end: float

    @property
    def settled_after(self) -> float:
        """Inside the motion, the start transient is below rounding after this time (TRANSIENT_HORIZON / a)."""
        return TRANSIENT_HORIZON / float(self.rate.min())

    @property
    def offset(self) -> np.ndarray:
        """c = rest - delta_p(0)."""
        return self.rest - self.periodic_start[0]

    def corrections(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(delta, delta', delta'') minus the periodic table's values at time(s) t: (m,) each for a scalar t
        (None when the start transient is below rounding), else (N, m)."""
        a, c = self.rate, self.offset
        p0, p1, p2 = self.periodic_start
        if np.ndim(t) == 0:
            t = float(t)
            if 0.0 <= t <= self.end:
                if t > self.settled_after:
                    return None
                x = c * np.exp(-a * t)
                return x, -a * x, a * a * x
            if t < 0.0:
                return self.rest - p0, -p1, -p2
            y = (p0 + c * np.exp(-a * self.end) - self.rest) * np.exp(-a * (t - self.end))
            return self.rest + y - p0, -a * y - p1, a * a * y - p2
        t = np.asarray(t, dtype=float)[:, None]
        before, after = t < 0.0, t > self.end
        x = c * np.exp(-a * np.clip(t, 0.0, self.end))
        y = (p0 + c * np.exp(-a * self.end) - self.rest) * np.exp(-a * np.clip(t - self.end, 0.0, None))
        d0 = np.where(before, self.rest - p0, np.where(after, self.rest + y - p0, x))
        d1 = np.where(before, -p1, np.where(after, -a * y - p1, -a * x))
        d2 = np.where(before, -p2, np.where(after, a * a * y - p2, a * a * x))
        return d0, d1, d2
