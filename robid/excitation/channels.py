"""Derivatives of a function of the joint state, one joint channel at a time, by finite differences.

For F(q, qd, qdd) evaluated on N samples (a regressor, inverse dynamics), the derivative of a scalar
criterion f(F) with respect to the trajectory coefficients x_j of joint j is, by the chain rule,

    df/dx_j = sum_t [ <G_t, dF_t/dq_j> B0_t + <G_t, dF_t/dqd_j> B1_t + <G_t, dF_t/dqdd_j> B2_t ],

G = df/dF, B_k the Fourier basis rows. Only 3 dof + 1 evaluations of F are needed whatever the number of
harmonics (instead of 2 H dof + 1 for differencing f in every coefficient). The velocity step points away
from zero so that sign(qd) columns (Coulomb friction) are never differenced across their jump.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

StateFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: forward-difference steps for q (rad or m), qd (relative to max(1, |qd|)) and qdd (F is linear in qdd)
STEPS = (1e-6, 1e-6, 1e-3)


def channel_derivatives(
    fn: StateFunction, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, base: np.ndarray | None = None
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield (kind, joint, dF) with kind 0 = q, 1 = qd, 2 = qdd and dF the sample-wise derivative of F."""
    f0 = fn(q, qd, qdd) if base is None else base
    states = (q, qd, qdd)
    for kind in range(3):
        for j in range(q.shape[1]):
            x = states[kind].copy()
            if kind == 1:
                direction = np.where(x[:, j] >= 0.0, 1.0, -1.0)
                step = STEPS[1] * np.maximum(1.0, np.abs(x[:, j])) * direction
            else:
                step = np.full(x.shape[0], STEPS[kind])
            moved = x[:, j] + step
            step = moved - x[:, j]  # the step actually taken in floating point
            x[:, j] = moved
            args = [q, qd, qdd]
            args[kind] = x
            f1 = fn(*args)
            shape = (-1,) + (1,) * (f1.ndim - 1)
            yield kind, j, (f1 - f0) / step.reshape(shape)
