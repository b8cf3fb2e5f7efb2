"""Derivatives of a function of the joint state, one joint channel at a time, by difference stencils.

For F(q, qd, qdd) evaluated on N samples (a regressor, inverse dynamics), the derivative of a scalar
criterion f(F) with respect to the trajectory coefficients x_j of joint j is, by the chain rule,

    df/dx_j = sum_t [ <G_t, dF_t/dq_j> B0_t + <G_t, dF_t/dqd_j> B1_t + <G_t, dF_t/dqdd_j> B2_t ],

G = df/dF, B_k the Fourier basis rows. Only 5 dof + 1 evaluations of F are needed whatever the number of
harmonics (instead of 4 H dof + 1 for central differences of f in every coefficient). The stencils follow
the structure of the rigid-body model with rotor inertia and friction (Newton-Euler: tau = M(q) qdd +
C(q, qd) qd + g(q) + Fv qd + Fc sign(qd) + F0), so that only the q channel carries a truncation error:

* qdd: F is linear in qdd, so a forward difference with a unit step is exact (up to rounding);
* qd: F is quadratic in qd apart from sign(qd), so the three-point one-sided stencil (steps h and 2h, exact for
  quadratics) is exact; its steps point away from zero, so the sign(qd) columns (Coulomb friction) are never
  differenced across their jump (a sample exactly at qd = 0, where sign is 0, gets the slope of the parabola
  through three stepped points instead: one more evaluation);
* q: central difference with step 1e-5 rad: truncation h^2/6 |F'''| (F is a trigonometric polynomial of low
  degree in q_j, so about 1e-10 relative), rounding about 1e-11.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

StateFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: difference steps for q (rad or m, central), qd (relative to max(1, |qd|), one-sided second order) and
#: qdd (forward; F is linear in qdd)
STEPS = (1e-5, 1e-3, 1.0)


def channel_derivatives(
    fn: StateFunction, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, base: np.ndarray | None = None
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield (kind, joint, dF) with kind 0 = q, 1 = qd, 2 = qdd and dF the sample-wise derivative of F."""
    f0 = fn(q, qd, qdd) if base is None else base
    states = (q, qd, qdd)

    def at(kind: int, j: int, step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F with channel (kind, j) moved by ``step`` per sample, and the step actually taken in floating point."""
        x = states[kind].copy()
        moved = x[:, j] + step
        taken = moved - x[:, j]
        x[:, j] = moved
        args = [q, qd, qdd]
        args[kind] = x
        return fn(*args), taken

    def per_sample(v: np.ndarray, f: np.ndarray) -> np.ndarray:
        return v.reshape((-1,) + (1,) * (f.ndim - 1))

    def parabola_slope(x0, x1, x2, f0_, f1_, f2_):
        """Slope at 0 of the parabola through (x0, f0_), (x1, f1_), (x2, f2_) (Lagrange form, x per sample)."""
        x0 = np.broadcast_to(np.asarray(x0, dtype=float), x1.shape)
        weights = (
            ((0.0 - x1) + (0.0 - x2)) / ((x0 - x1) * (x0 - x2)),
            ((0.0 - x0) + (0.0 - x2)) / ((x1 - x0) * (x1 - x2)),
            ((0.0 - x0) + (0.0 - x1)) / ((x2 - x0) * (x2 - x1)),
        )
        return sum(per_sample(w, f_) * f_ for w, f_ in zip(weights, (f0_, f1_, f2_), strict=True))

    n = q.shape[0]
    for j in range(q.shape[1]):
        fp, hp = at(0, j, np.full(n, STEPS[0]))
        fm, hm = at(0, j, np.full(n, -STEPS[0]))
        yield 0, j, (fp - fm) / per_sample(hp - hm, fp)
    for j in range(q.shape[1]):
        direction = np.where(qd[:, j] >= 0.0, 1.0, -1.0)
        h = STEPS[1] * np.maximum(1.0, np.abs(qd[:, j])) * direction
        f1, s1 = at(1, j, h)
        f2, s2 = at(1, j, 2.0 * h)
        d = parabola_slope(0.0, s1, s2, f0, f1, f2)
        at_rest = qd[:, j] == 0.0
        if np.any(at_rest):
            # sign(0) = 0 differs from sign on the stepped side: take the one-sided slope of the samples beside it
            f3, s3 = at(1, j, 3.0 * h)
            d[at_rest] = parabola_slope(s1, s2, s3, f1, f2, f3)[at_rest]
        yield 1, j, d
    for j in range(q.shape[1]):
        f1, s1 = at(2, j, np.full(n, STEPS[2]))
        yield 2, j, (f1 - f0) / per_sample(s1, f1)
