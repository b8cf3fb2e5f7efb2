"""Finite Fourier series trajectories (Swevers form) with analytic derivatives of any order.

Per joint j, with fundamental w = 2 pi / T and H harmonics (Swevers, Ganseman, Tukel, De Schutter, Van Brussel,
IEEE TRA 13(5), 1997, eq. 10)::

    q_j(t) = c_j + sum_l  a_jl / (l w) sin(l w t)  -  b_jl / (l w) cos(l w t)
    qd_j(t) =      sum_l  a_jl cos(l w t)          +  b_jl sin(l w t)

so ``a`` and ``b`` are velocity amplitudes and ``c`` (the centre) is the mean position over a period. The k-th
derivative is linear in (a, b): ``q^(k)(t) = basis(t, k) @ [a_j, b_j]`` (+ c_j for k = 0), which the designer
uses for exact, cheap constraint gradients.

Rest-to-rest variant
--------------------
A controller that cannot start mid-motion needs a motion that starts and ends at the centre pose at rest.
Instead of adding a polynomial (which breaks periodicity and leaks energy outside the excited harmonics, so
that period averaging and spectral differentiation no longer apply), robid keeps a *pure* Fourier series and
imposes linear equalities on the coefficients at t = 0::

    q(0) = c,   q^(k)(0) = 0  for k = 1 .. m           (m = ``rest_order``, default 4)

Because the series is T-periodic, the same values hold at t = T, 2T, ...: every period starts and ends at the
centre, with zero velocity, acceleration, jerk and snap. Preceded and followed by standstill, the motion is
C^m (C4 by default, C5 or C6 on request); inside the motion it is C-infinity. Even orders constrain the cosine
part (b), odd orders the sine part (a); ``rest_order`` = m removes m + 1 degrees of freedom per joint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

# k-th derivative of sin(x) and cos(x) at phase x, cycling with period 4: d/dx sin = cos, d/dx cos = -sin.
# sin^(k)(x) = _SIN_SIN[k % 4] * sin(x) + _SIN_COS[k % 4] * cos(x)
_SIN_SIN = (1.0, 0.0, -1.0, 0.0)
_SIN_COS = (0.0, 1.0, 0.0, -1.0)
# cos^(k)(x) = _COS_SIN[k % 4] * sin(x) + _COS_COS[k % 4] * cos(x)
_COS_SIN = (0.0, -1.0, 0.0, 1.0)
_COS_COS = (1.0, 0.0, -1.0, 0.0)


def phases(t: np.ndarray, period: float, harmonics: int) -> np.ndarray:
    """Phases l w t, (N, H), reduced modulo 2 pi through the fraction of the period so that t = kT gives 0 exactly."""
    t = np.asarray(t, dtype=float).reshape(-1)
    frac = np.mod(t / period, 1.0)
    ls = np.arange(1, harmonics + 1, dtype=float)
    return 2.0 * math.pi * np.mod(np.outer(frac, ls), 1.0)


def basis(t: np.ndarray, period: float, harmonics: int, order: int) -> np.ndarray:
    """Matrix B (N, 2H) with q^(k)(t) - [k == 0] c = B @ [a_1..a_H, b_1..b_H] for one joint.

    q^(k) = sum_l (l w)^(k-1) [a_l sin^(k)(l w t) - b_l cos^(k)(l w t)].
    """
    if order < 0:
        raise ValueError("order must be >= 0")
    ph = phases(t, period, harmonics)
    s, c = np.sin(ph), np.cos(ph)
    w = 2.0 * math.pi / period
    scale = (np.arange(1, harmonics + 1) * w) ** (order - 1)
    k = order % 4
    sin_part = (_SIN_SIN[k] * s + _SIN_COS[k] * c) * scale
    cos_part = (_COS_SIN[k] * s + _COS_COS[k] * c) * scale
    return np.hstack([sin_part, -cos_part])


def rest_constraint_matrix(harmonics: int, rest_order: int) -> np.ndarray:
    """Rows R (m+1, 2H) with R @ [a, b] = 0 <=> q(0) = c and q^(k)(0) = 0 for k = 1..m.

    Row k is basis(0, k) with the common factor w^(k-1) removed (it only depends on the integers l and k).
    """
    ls = np.arange(1, harmonics + 1, dtype=float)
    rows = []
    for k in range(rest_order + 1):
        kk = k % 4
        # at phase 0: sin = 0, cos = 1
        rows.append(np.concatenate([_SIN_COS[kk] * ls ** (k - 1), -_COS_COS[kk] * ls ** (k - 1)]))
    r = np.array(rows)
    return r / np.linalg.norm(r, axis=1, keepdims=True)


def rest_nullspace(harmonics: int, rest_order: int) -> np.ndarray:
    """Orthonormal basis N (2H, 2H - m - 1) of the coefficients that satisfy the rest-to-rest conditions."""
    n = scipy.linalg.null_space(rest_constraint_matrix(harmonics, rest_order))
    # fix the sign of each basis vector so the result does not depend on LAPACK's choice
    for i in range(n.shape[1]):
        j = int(np.argmax(np.abs(n[:, i]) > 1e-12))
        if n[j, i] < 0:
            n[:, i] = -n[:, i]
    return n


def minimum_harmonics(rest_order: int) -> int:
    """Fewest harmonics leaving a free coefficient in both the sine and the cosine part."""
    n_even = rest_order // 2 + 1  # orders 0, 2, 4, ... act on b
    n_odd = (rest_order + 1) // 2  # orders 1, 3, ... act on a
    return max(n_even, n_odd) + 1


class FourierShape:
    """What every robid trajectory built on a Fourier series of ``period`` with coefficients ``a`` (dof, H)
    tells about itself."""

    period: float
    a: np.ndarray

    @property
    def harmonics(self) -> int:
        """H, the harmonics of the Fourier series."""
        return self.a.shape[1]

    @property
    def omega(self) -> float:
        """Fundamental angular frequency w = 2 pi / T, rad/s."""
        return 2.0 * math.pi / self.period


@dataclass(frozen=True, eq=False)
class FourierTrajectory(FourierShape):
    """Joint trajectory q(t) for all joints; arrays are copied and made read-only.

    ``rest_order`` is None for a plain periodic series, or m >= 2 for the rest-to-rest variant (the
    coefficients must then satisfy :func:`rest_constraint_matrix`; use :meth:`project_rest` to enforce it).
    """

    period: float
    center: np.ndarray  # (dof,)
    a: np.ndarray  # (dof, H)
    b: np.ndarray  # (dof, H)
    rest_order: int | None = None
    joint_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        center = np.array(self.center, dtype=float).reshape(-1)
        a = np.array(self.a, dtype=float).reshape(len(center), -1)
        b = np.array(self.b, dtype=float).reshape(len(center), -1)
        if a.shape != b.shape:
            raise ValueError("a and b must have the same shape (dof, H)")
        if not (self.period > 0 and math.isfinite(self.period)):
            raise ValueError("period must be positive")
        for arr in (center, a, b):
            arr.setflags(write=False)
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        if not self.joint_names:
            object.__setattr__(self, "joint_names", tuple(f"q{j + 1}" for j in range(len(center))))

    # ---- shape -------------------------------------------------------------------------------------------
    @property
    def dof(self) -> int:
        return self.center.shape[0]

    @property
    def rest_to_rest(self) -> bool:
        return self.rest_order is not None

    def coefficients(self) -> np.ndarray:
        """(dof, 2H) rows [a_j, b_j]."""
        return np.hstack([self.a, self.b])

    def with_coefficients(self, x: np.ndarray) -> FourierTrajectory:
        x = np.asarray(x, dtype=float).reshape(self.dof, 2 * self.harmonics)
        h = self.harmonics
        return FourierTrajectory(self.period, self.center, x[:, :h], x[:, h:], self.rest_order, self.joint_names)

    def project_rest(self) -> FourierTrajectory:
        """Orthogonal projection of the coefficients onto the rest-to-rest subspace (no-op if periodic)."""
        if self.rest_order is None:
            return self
        n = rest_nullspace(self.harmonics, self.rest_order)
        x = self.coefficients() @ n @ n.T
        return self.with_coefficients(x)

    # ---- evaluation --------------------------------------------------------------------------------------
    def derivative(self, t: np.ndarray, order: int = 0) -> np.ndarray:
        """q^(order)(t), shape (N, dof). Exact rest values at multiples of the period for rest-to-rest."""
        t = np.asarray(t, dtype=float).reshape(-1)
        out = basis(t, self.period, self.harmonics, order) @ self.coefficients().T
        if order == 0:
            out = out + self.center
        if self.rest_order is not None and order <= self.rest_order:
            at_rest = np.mod(t / self.period, 1.0) == 0.0
            if np.any(at_rest):
                out[at_rest] = self.center if order == 0 else 0.0
        return out

    def evaluate(self, t: np.ndarray, max_order: int = 2) -> list[np.ndarray]:
        """[q, qd, qdd, ...] up to ``max_order``, each (N, dof)."""
        return [self.derivative(t, k) for k in range(max_order + 1)]

    def derivative_bound(self, order: int) -> np.ndarray:
        """Per joint M_k >= max_t |q^(k)(t)| (k >= 1) or >= max_t |q(t) - c| (k = 0).

        Each harmonic contributes (l w)^k times its position amplitude sqrt(a^2 + b^2) / (l w):
        M_k = sum_l (l w)^(k-1) sqrt(a_l^2 + b_l^2).
        """
        ls = np.arange(1, self.harmonics + 1) * self.omega
        return (np.hypot(self.a, self.b) * ls ** (order - 1)).sum(axis=1)

    def continuity_order(self, rtol: float = 1e-9, max_order: int = 8) -> int:
        """Largest m with q^(k)(0) = 0 for k = 1..m (relative to the bound M_k): the motion, started from
        standstill at q(0) and stopped after whole periods, is C^m (0: a velocity jump at the start)."""
        t0 = np.array([0.0])
        for k in range(1, max_order + 1):
            vals = basis(t0, self.period, self.harmonics, k) @ self.coefficients().T
            scale = max(1e-300, float(np.max(self.derivative_bound(k), initial=0.0)))
            if np.any(np.abs(vals) > rtol * scale):
                return k - 1
        return max_order
