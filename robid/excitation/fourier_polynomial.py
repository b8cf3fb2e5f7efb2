"""Fourier series plus polynomial: the rest-to-rest designs of Mamedov et al. (and any design of that form).

Per joint j, on one execution tau in [0, T], w = 2 pi / T, N harmonics (Swevers et al., IEEE TRA 13(5), 1997,
eq. 10, for the series; Mamedov, Popov, Mikhel, Klimchik, Frontiers in Robotics and AI 2020, section 3, for
the polynomial)::

    q_j(tau) = sum_l a_jl / (l w) sin(l w tau) - b_jl / (l w) cos(l w tau)  +  sum_k c_jk tau^k

with ``a``, ``b`` velocity amplitudes (as in :mod:`robid.excitation.fourier`, whose series has no constant here)
and ``c`` (dof, P + 1) in ascending powers of tau (s). The published designs use P = 5; the six coefficients
are solved so that q(0) = q(T) = q0 and qd, qdd vanish at both ends. The polynomial is not periodic: a design
of this form is executed once, from rest to rest. Outside [0, T] the motion is at rest (q(0) before, q(T)
after, derivatives zero).

The polynomial spreads energy over all harmonics of 1/T. :meth:`FourierPolynomialTrajectory.band` gives the
harmonics where the design itself holds its motion (the N of the series, plus what the polynomial adds) --
what a signal stage should keep of one execution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.polynomial import polynomial as npoly

from robid.excitation.fourier import FourierShape, FourierTrajectory, basis

#: Default tolerance of :meth:`FourierPolynomialTrajectory.band`: rms of the accelerations left out, relative.
BAND_TOLERANCE = 0.01

#: Samples per period of the DFT behind :meth:`FourierPolynomialTrajectory.band` (at least 16 per harmonic kept).
_BAND_SAMPLES = 8192


@dataclass(frozen=True, eq=False)
class FourierPolynomialTrajectory(FourierShape):
    """One rest-to-rest execution q(tau), tau in [0, ``period``] (module docstring); arrays are copied and made
    read-only. ``poly`` (dof, P + 1): ascending powers of tau in s."""

    period: float
    a: np.ndarray  # (dof, N)
    b: np.ndarray  # (dof, N)
    poly: np.ndarray  # (dof, P + 1)
    joint_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        poly = np.array(self.poly, dtype=float)
        if poly.ndim != 2:
            raise ValueError("poly must be (dof, P + 1)")
        dof = poly.shape[0]
        a = np.array(self.a, dtype=float).reshape(dof, -1)
        b = np.array(self.b, dtype=float).reshape(dof, -1)
        if a.shape != b.shape:
            raise ValueError("a and b must have the same shape (dof, N)")
        if not (self.period > 0 and math.isfinite(self.period)):
            raise ValueError("period must be positive")
        for arr in (a, b, poly):
            if not np.all(np.isfinite(arr)):
                raise ValueError("coefficients must be finite")
            arr.setflags(write=False)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "poly", poly)
        if not self.joint_names:
            object.__setattr__(self, "joint_names", tuple(f"q{j + 1}" for j in range(dof)))
        if len(self.joint_names) != dof:
            raise ValueError(f"{len(self.joint_names)} joint names for {dof} joints")

    # ---- shape -------------------------------------------------------------------------------------------
    @property
    def dof(self) -> int:
        return self.poly.shape[0]

    @property
    def rest_to_rest(self) -> bool:
        """Always: a design of this form is executed once, between rests."""
        return True

    @property
    def center(self) -> np.ndarray:
        """The start pose q(0) (where the motion starts and, for the published designs, ends)."""
        return self.derivative(np.array([0.0]), 0)[0]

    def fourier_part(self) -> FourierTrajectory:
        """The series alone (zero centre): what the designed harmonics carry."""
        return FourierTrajectory(self.period, np.zeros(self.dof), self.a, self.b, None, self.joint_names)

    # ---- evaluation --------------------------------------------------------------------------------------
    def derivative(self, t: np.ndarray, order: int = 0) -> np.ndarray:
        """q^(order)(t), shape (n, dof); at rest outside [0, T] (q(0) before, q(T) after, derivatives 0)."""
        if order < 0:
            raise ValueError("order must be >= 0")
        t = np.asarray(t, dtype=float).reshape(-1)
        inside = np.clip(t, 0.0, self.period)
        series = basis(inside, self.period, self.harmonics, order) @ np.hstack([self.a, self.b]).T
        coeffs = npoly.polyder(self.poly.T, order) if order else self.poly.T  # (P + 1 - order, dof)
        out = series + npoly.polyval(inside, coeffs).T
        if order > 0:
            out[(t < 0.0) | (t > self.period)] = 0.0
        return out

    def evaluate(self, t: np.ndarray, max_order: int = 2) -> list[np.ndarray]:
        """[q, qd, qdd, ...] up to ``max_order``, each (n, dof)."""
        return [self.derivative(t, k) for k in range(max_order + 1)]

    def continuity_order(self, rtol: float = 1e-6, max_order: int = 8) -> int:
        """Largest m with q^(k) = 0 at both ends for k = 1..m, relative to max |q^(k)| over the period: run
        from and into standstill the motion is C^m (the published designs: 2, velocity and acceleration)."""
        grid = np.linspace(0.0, self.period, 2049)
        ends = np.array([0.0, self.period])
        for k in range(1, max_order + 1):
            scale = max(1e-300, float(np.max(np.abs(self.derivative(grid, k)))))
            if np.any(np.abs(self.derivative(ends, k)) > rtol * scale):
                return k - 1
        return max_order

    def band(self, tolerance: float = BAND_TOLERANCE) -> tuple[int, ...]:
        """Harmonics 1..H of 1/T that hold the design's motion: H >= N is the smallest with the rms of the
        accelerations above harmonic H at most ``tolerance`` times the rms of the accelerations, for every
        joint (Parseval on the DFT of one period, 8192 samples; what moves no joint does not count)."""
        m = 2 * ((max(_BAND_SAMPLES, 32 * self.harmonics) + 1) // 2)
        qdd = self.derivative(np.arange(m) * (self.period / m), 2)
        power = np.abs(np.fft.rfft(qdd - qdd.mean(axis=0), axis=0)) ** 2  # (m/2 + 1, dof)
        power[-1] = 0.0  # m is even: the Nyquist bin, never kept
        total = power.sum(axis=0)
        moving = total > 1e-24 * max(float(total.max()), 1e-300)
        tail = np.cumsum(power[::-1], axis=0)[::-1]  # tail[h] = energy at harmonics >= h
        allowed = tolerance**2 * total
        for top in range(self.harmonics, power.shape[0] - 1):
            if np.all(tail[top + 1][moving] <= allowed[moving]):
                return tuple(range(1, top + 1))
        return tuple(range(1, power.shape[0] - 1))
