"""The objective and the limit rows of an excitation design in the reduced variables z (robid.excitation.optimiser,
module docstring): the criterion and its analytic gradient on the design grid, the certified limit rows, the
excitation floor and the coarse screening grid, cached between the optimiser's calls."""

from __future__ import annotations

import math

import numpy as np

from robid.excitation.channels import channel_derivatives
from robid.excitation.criteria import (
    BaseRegressor,
    criterion_grid,
    objective_and_gradient,
    objective_value,
    stack,
)
from robid.excitation.design_problem import COARSE_POINTS, DesignProblem
from robid.excitation.fourier import basis, rest_nullspace
from robid.excitation.grid_constraints import GridConstraints
from robid.excitation.starts import largest_feasible_scale
from robid.excitation.velocity_floor import (
    VelocityFloor,
    lift_to_floor,
)


def _passive_joints(p: DesignProblem):
    """The closed chain's passive joints with limits, narrowed by the margin (None for a serial robot)."""
    from robid.excitation.passive_limits import PassiveJoints

    passive = PassiveJoints.from_model(p.model) if p.model is not None else None
    return passive.with_margin(p.margin) if passive is not None else None


def for_many_calls(base_regressor: BaseRegressor) -> BaseRegressor:
    """The optimiser calls its base regressor thousands of times on a few hundred samples: a robid
    ``BaseParameters.regressor`` is taken in its ``for_many_calls`` form (the C library on every call,
    robid.dynamics.compiled); any other callable as it is."""
    many = getattr(getattr(base_regressor, "__self__", None), "for_many_calls", None)
    return many().regressor if many is not None else base_regressor


class _Evaluator:
    """Objective and constraints in the reduced variables z (dof, r), with caching between calls."""

    def __init__(self, problem: DesignProblem, base_regressor: BaseRegressor):
        p = problem
        self.p = p
        self.regressor = for_many_calls(base_regressor)
        h2 = 2 * p.harmonics
        self.null = rest_nullspace(p.harmonics, p.rest_order) if p.rest_order is not None else np.eye(h2)
        self.r = self.null.shape[1]
        self.constraints = GridConstraints(
            p.limits.with_margin(p.margin),
            p.period,
            p.harmonics,
            p.constraint_samples(),
            p.center,
            p.cartesian,
            p.model,
            p.torque_fn,
            passive=_passive_joints(p),
        )
        self.floor = VelocityFloor(p.floor_speeds())
        self.t = criterion_grid(p.period, p.grid_points)
        self.basis = [basis(self.t, p.period, p.harmonics, k) for k in range(3)]
        t_coarse = criterion_grid(p.period, min(p.grid_points, COARSE_POINTS))
        self._coarse = [basis(t_coarse, p.period, p.harmonics, k) for k in range(3)]
        self.windows = p.constraint_windows if p.constraint_windows > 0 else None  # None: every sample a row
        self._cache_f: tuple[bytes, float, np.ndarray, np.ndarray] | None = None
        self._cache_g: tuple[bytes, np.ndarray, np.ndarray] | None = None
        self.evaluations = 0

    def coefficients(self, z: np.ndarray) -> np.ndarray:
        return np.asarray(z, dtype=float).reshape(self.p.dof, self.r) @ self.null.T

    def states(self, x_all: np.ndarray):
        q = self.basis[0] @ x_all.T + self.p.center
        return q, self.basis[1] @ x_all.T, self.basis[2] @ x_all.T

    def _criterion(self, z: np.ndarray, with_gradient: bool) -> tuple[float, np.ndarray, np.ndarray | None]:
        """(f, W as (N, dof, nb), df/dW or None) at z, kept for the gradient at the same point."""
        key = np.asarray(z).tobytes()
        if self._cache_f is None or self._cache_f[0] != key:
            q, qd, qdd = self.states(self.coefficients(z))
            w3 = np.asarray(self.regressor(q, qd, qdd), dtype=float)
            self.evaluations += 1
            f = objective_value(stack(w3), self.p.criterion, self.p.raw_weight)
            self._cache_f = (key, f if math.isfinite(f) else 1e6, w3, None)
        key, f, w3, g = self._cache_f
        if with_gradient and g is None:
            f_again, g = objective_and_gradient(stack(w3), self.p.criterion, self.p.raw_weight)
            if not math.isfinite(f_again):
                g = np.zeros_like(g)
            self._cache_f = (key, f, w3, g)
        return f, w3, g

    def objective(self, z: np.ndarray) -> float:
        return self._criterion(z, False)[0]

    def gradient(self, z: np.ndarray) -> np.ndarray:
        """df/dz: the criterion's analytic gradient in W (:func:`objective_and_gradient`: singular pairs of the
        Gram matrix, d sigma = u^T dW v) chained through the joint channels (:func:`channel_derivatives`) and the
        Fourier basis to the coefficients, then to the rest-to-rest coordinates z."""
        _, w3, g = self._criterion(z, True)
        q, qd, qdd = self.states(self.coefficients(z))
        g3 = g.reshape(w3.shape)
        grad_x = np.zeros((self.p.dof, 2 * self.p.harmonics))
        for kind, j, dw in channel_derivatives(self.regressor, q, qd, qdd, w3):
            weights = np.einsum("nrc,nrc->n", g3, dw)
            grad_x[j] += self.basis[kind].T @ weights
        self.evaluations += 5 * self.p.dof
        return (grad_x @ self.null).reshape(-1)

    def _constraints(self, z: np.ndarray):
        """(key, rows, Jacobian): the limit rows, then the excitation floor's rows."""
        key = np.asarray(z).tobytes()
        if self._cache_g is None or self._cache_g[0] != key:
            x_all = self.coefficients(z)
            g, jz = self.constraints.evaluate_windows(x_all, self.windows, self.null)
            if self.floor.rows:
                g = np.concatenate([g, self.floor.values(x_all)])
                jz = np.vstack([jz, self.floor.jacobian(x_all, self.null)])
            self._cache_g = (key, g, jz)
        return self._cache_g

    def constraint_values(self, z: np.ndarray) -> np.ndarray:
        """The optimiser's rows at z, limits then floor (line searches need no Jacobian: it is computed only when
        asked for)."""
        key = np.asarray(z).tobytes()
        if self._cache_g is not None and self._cache_g[0] == key:
            return self._cache_g[1]
        if self.windows is not None:
            return self._constraints(z)[1]
        x_all = self.coefficients(z)
        g = self.constraints.values(x_all)
        return np.concatenate([g, self.floor.values(x_all)]) if self.floor.rows else g

    def constraint_jacobian(self, z: np.ndarray) -> np.ndarray:
        return self._constraints(z)[2]

    def feasible(self, z: np.ndarray) -> bool:
        """Every certified limit row >= 0 at z (all samples; the excitation floor is not a limit: see
        :meth:`floor_met`)."""
        return self.constraints.all_met(self.coefficients(z))

    def floor_met(self, z: np.ndarray, tolerance: float = 0.0) -> bool:
        """Every floored joint's RMS velocity >= (1 - tolerance) of its floor at z."""
        return self.floor.met(self.coefficients(z), tolerance)

    def lift_to_floor(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A starting point z raised onto the excitation floor within the limits
        (:func:`robid.excitation.velocity_floor.lift_to_floor`)."""
        z = np.array(z, dtype=float).reshape(self.p.dof, self.r)
        return lift_to_floor(z, self.floor, self.coefficients, self.feasible, self.null, self.p.harmonics, rng)

    def largest_feasible_scale(self, z: np.ndarray) -> float:
        """Largest alpha in [0, 1] (bisection) with z scaled by alpha feasible; 0 if only the centre pose is."""
        return largest_feasible_scale(self.feasible, z, upper=1.0)

    def coarse_objective(self, z: np.ndarray) -> float:
        """The criterion on the coarse screening grid (:data:`COARSE_POINTS` samples of one period)."""
        x_all = self.coefficients(z)
        q = self._coarse[0] @ x_all.T + self.p.center
        w3 = np.asarray(self.regressor(q, self._coarse[1] @ x_all.T, self._coarse[2] @ x_all.T), dtype=float)
        return objective_value(stack(w3), self.p.criterion, self.p.raw_weight)
