"""Evaluation of a closed chain whose loops are solved numerically (a general planar loop; docs/model.md,
"Closed chains"): the generated code is the tree's, and the closed chain's functions are

    Y(q_a, qd_a, qdd_a) = W^T Y_tree(q, qd, qdd),    tau_a = W^T tau_tree(q, qd, qdd)

with the tree's states and W = d q_tree / d q_a from the closure (robid.model.closure; Khalil & Dombre 2002,
eq. 10.7). A chain of parallelograms needs none of this: its projection is in the generated code itself.
"""

from __future__ import annotations

import numpy as np

from robid.model.closure import LoopClosure, project


class ClosedChainModule:
    """The four functions of a generated module (``regressor``, ``inverse_dynamics``, ``base_regressor``,
    ``base_inverse_dynamics``) on the active joints' states, (N, n_active) arrays, for a tree ``module``."""

    def __init__(self, module, closure: LoopClosure):
        self._module = module
        self.closure = closure

    def _projected(self, name: str, q, qd, qdd, *extra, out=None) -> np.ndarray:
        states = self.closure.states(q, qd, qdd)
        y = project(states.w, getattr(self._module, name)(states.q, states.qd, states.qdd, *extra))
        if out is not None:
            out[...] = y
            return out
        return y

    def regressor(self, q, qd, qdd, out=None) -> np.ndarray:
        return self._projected("regressor", q, qd, qdd, out=out)

    def base_regressor(self, q, qd, qdd, out=None) -> np.ndarray:
        return self._projected("base_regressor", q, qd, qdd, out=out)

    def inverse_dynamics(self, q, qd, qdd, params) -> np.ndarray:
        return self._projected("inverse_dynamics", q, qd, qdd, params)

    def base_inverse_dynamics(self, q, qd, qdd, params) -> np.ndarray:
        return self._projected("base_inverse_dynamics", q, qd, qdd, params)
