"""Variable projection for the nonlinear friction fit (Golub & Pereyra 1973; Kaufman's Jacobian, BIT 15, 1975;
robid.estimation.nonlinear_friction, module docstring): the projection on the fixed columns, the projected residual
and its Jacobian over the nonlinear parameters, their bounds, the grid start and the trust-region refinement of one
fit with fixed weights."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.friction_layout import _Layout, _nonlinear_owner, _varying_columns
from robid.estimation.friction_problem import FrictionProblem


class _Projection:
    """Weighted fixed columns factored once per set of weights: A_s = A_w D^-1 = Q R, R = U S V^T (rank-revealing);
    the orthonormal basis Q1 = Q U_r of their span, and least-norm coefficients through V_r S_r^-1 U_r^T Q^T."""

    def __init__(self, fixed: np.ndarray, y: np.ndarray, row_w: np.ndarray):
        A = fixed * row_w[:, None]
        scale = np.linalg.norm(A, axis=0)
        self.live = scale > _lsq.ZERO_COLUMN * max(float(scale.max(initial=0.0)), 1e-300)
        self.scale = np.where(self.live, scale, 1.0)
        As = A[:, self.live] / self.scale[self.live]
        self.width = A.shape[1]
        if As.shape[1]:
            q, r = np.linalg.qr(As, mode="reduced")
            u, sv, vt = np.linalg.svd(r)
            rank = int(np.sum(sv > sv[0] * max(As.shape) * np.finfo(float).eps))
            self.basis = q @ u[:, :rank]
            self._back = vt[:rank].T / sv[:rank]  # V_r S_r^-1: coefficients = back @ (basis^T target)
        else:
            self.basis = np.zeros((A.shape[0], 0))
            self._back = np.zeros((0, 0))
        self.full_rank = self.basis.shape[1] == int(self.live.sum())
        self.yw = y * row_w
        self.yt = self.perp(self.yw)

    def perp(self, x: np.ndarray) -> np.ndarray:
        return x - self.basis @ (self.basis.T @ x)

    def coefficients(self, target: np.ndarray) -> np.ndarray:
        """Least-norm coefficients of the fixed columns for the weighted ``target`` (0 on dead columns)."""
        out = np.zeros(self.width)
        if self.basis.shape[1]:
            out[self.live] = (self._back @ (self.basis.T @ target)) / self.scale[self.live]
        return out

    def solve(self, C: np.ndarray):
        """(residual, coefficients b of C, basis Qc of the projected C) for min ||yt - P C b||."""
        Ct = self.perp(C)
        if Ct.shape[1] == 0:
            return self.yt, np.zeros(0), Ct
        scale = np.linalg.norm(Ct, axis=0)
        live = scale > 1e-12 * max(float(np.linalg.norm(self.yt)), 1e-300)
        b = np.zeros(C.shape[1])
        qc = np.zeros((C.shape[0], 0))
        if live.any():
            qc, rc = np.linalg.qr(Ct[:, live] / scale[live], mode="reduced")
            b[live] = np.linalg.lstsq(rc, qc.T @ self.yt, rcond=None)[0] / scale[live]
        r = self.yt - qc @ (qc.T @ self.yt)
        return r, b, qc


class _Objective:
    """The variable-projection residual r(x) and Kaufman's Jacobian for least_squares, on the used rows."""

    def __init__(self, problem: FrictionProblem, layout: _Layout, fixed: np.ndarray, weights: np.ndarray,
                 projections: dict | None = None):
        self.problem, self.layout = problem, layout
        self.mask = problem.used.reshape(-1)
        n, dof = problem.tau.shape
        self.row_w = _lsq.rows_of_joint(weights, n)[self.mask]
        self.row_joint = np.tile(np.arange(dof), n)[self.mask]
        # the factored fixed columns depend on the kept columns, the ripple and the weights only: candidates of a
        # selection that share them share one factorisation (select_friction_models passes ``projections``)
        key = (layout.kept, layout.ripple_names, np.asarray(weights, dtype=float).tobytes())
        proj = None if projections is None else projections.get(key)
        if proj is None:
            proj = _Projection(fixed.reshape(n * dof, -1)[self.mask], problem.tau.reshape(-1)[self.mask], self.row_w)
            if projections is not None:
                projections[key] = proj
        self.proj = proj
        self.log = layout.log_scale
        self.column, _ = _nonlinear_owner(layout)
        self.evaluations = 0
        self._cache: tuple | None = None

    def linear_coefficients(self, x: np.ndarray) -> np.ndarray:
        """[fixed columns' coefficients | varying columns' b] at x (the fit's own parameterisation)."""
        r, b, qc, D, C, p = self._evaluate(x)
        return np.concatenate([self.proj.coefficients(self.proj.yw - C @ b), b])

    def joint_sigma(self, x: np.ndarray) -> np.ndarray:
        """Per-joint residual std at x, ||r_j||^2 / (N_j - h_j) with h_j the joint's share of the leverages of
        [fixed | varying] (the estimate's weights come from it; the reported covariance does not)."""
        r, b, qc, D, C, p = self._evaluate(x)
        e = r / self.row_w
        h = np.sum(self.proj.basis**2, axis=1) + np.sum(qc**2, axis=1)
        dof = self.problem.tau.shape[1]
        rss = np.bincount(self.row_joint, e**2, minlength=dof)
        rows = np.bincount(self.row_joint, np.ones_like(e), minlength=dof) - np.bincount(self.row_joint, h,
                                                                                         minlength=dof)
        return np.sqrt(rss / np.maximum(rows, 1.0))

    def natural(self, x: np.ndarray) -> np.ndarray:
        return np.where(self.log, np.exp(x), x)

    def _evaluate(self, x: np.ndarray):
        if self._cache is not None and np.array_equal(self._cache[0], x):
            return self._cache[1]
        self.evaluations += 1
        p = self.natural(x)
        varying, derivative = _varying_columns(self.problem, self.layout, p)
        n, dof = self.problem.tau.shape
        C = varying.reshape(n * dof, -1)[self.mask] * self.row_w[:, None]
        D = derivative.reshape(n * dof, -1)[self.mask] * self.row_w[:, None]
        r, b, qc = self.proj.solve(C)
        out = (r, b, qc, D, C, p)
        self._cache = (np.array(x, copy=True), out)
        return out

    def residual(self, x: np.ndarray) -> np.ndarray:
        return self._evaluate(x)[0]

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        r, b, qc, D, C, p = self._evaluate(x)
        chain = np.where(self.log, p, 1.0)  # d p / d x
        M = D * (b[self.column] * chain)[None, :]
        Mt = self.proj.perp(M)
        return -(Mt - qc @ (qc.T @ Mt))

    def cost(self, x: np.ndarray) -> float:
        r = self.residual(x)
        return float(r @ r)


def _bounds(problem: FrictionProblem, layout: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Search bounds in the optimiser's coordinates: a velocity scale (vs; 1/slope) from 1/20 of the 1st percentile
    of |v| on the joint's used rows (a sigmoid that steep is a step on those rows), but at least the velocity noise
    std (narrower features are not seen through the smoothed sign) and 1e-4, to the largest |v| there; offsets
    within half the largest |v|."""
    used = problem.used
    lo, hi = [], []
    for j in layout.joints:
        speed = np.abs(problem.signals.velocity[used[:, j.row], j.row])
        if speed.size == 0 or not np.any(speed > 0):
            raise RobidInputError(f"friction: joint {j.name} has no used rows with motion: its {j.request.model} "
                                  "model cannot be fitted")
        vmax = float(speed.max())
        noise = problem.signals.noise
        floor = float(noise[j.row]) if noise is not None and np.isfinite(noise[j.row]) else 0.0
        vmin = min(max(float(np.percentile(speed, 1.0)) / 20.0, 1e-4, 1e-6 * vmax, floor), 0.5 * vmax)
        if j.request.model == "stribeck":
            lo.append(math.log(vmin))
            hi.append(math.log(vmax))
        elif j.request.model == "sigmoid":
            for _ in range(j.request.sigmoids):
                lo += [math.log(1.0 / vmax), -0.5 * vmax]
                hi += [math.log(1.0 / vmin), 0.5 * vmax]
    return np.array(lo), np.array(hi)


def _start(objective: _Objective, lo: np.ndarray, hi: np.ndarray, initial: np.ndarray | None) -> np.ndarray:
    """A starting point: ``initial`` (natural units) or, joint by joint, the best of a grid over its velocity scale
    (16 points, log-spaced within the bounds; sigmoid offsets 0, further sigmoids 10x and 100x wider)."""
    layout = objective.layout
    if initial is not None:
        x0 = np.where(objective.log, np.log(np.maximum(initial, 1e-300)), initial)
        return np.clip(x0, lo, hi)
    x0 = np.where(objective.log, 0.5 * (lo + hi), 0.0)
    k = 0
    for j in layout.joints:
        n = len(j.nonlinear_names)
        if n == 0:
            continue
        best, best_cost = None, math.inf
        for scale in np.linspace(lo[k], hi[k], 16):
            x = x0.copy()
            if j.request.model == "stribeck":
                x[k] = scale
            else:
                for i in range(j.request.sigmoids):
                    x[k + 2 * i] = np.clip(scale - math.log(10.0) * i, lo[k + 2 * i], hi[k + 2 * i])
                    x[k + 2 * i + 1] = 0.0
            cost = objective.cost(x)
            if cost < best_cost:
                best, best_cost = x, cost
        x0 = best
        k += n
    return x0


def _vp_fit(objective: _Objective, lo, hi, x0, max_nfev: int):
    if x0.size == 0:
        return x0, True, "no nonlinear parameter"
    sol = least_squares(objective.residual, x0, jac=objective.jacobian, bounds=(lo, hi), method="trf",
                        x_scale="jac", xtol=1e-9, ftol=1e-10, gtol=1e-10, max_nfev=max_nfev)
    return sol.x, bool(sol.status > 0), str(sol.message)


@dataclass(frozen=True, eq=False)
class _WeightedFit:
    x: np.ndarray  # optimiser coordinates
    p: np.ndarray  # natural values of the nonlinear parameters
    beta: np.ndarray  # linear coefficients, the fit's own parameterisation ([fixed | varying], fs - fc)
    sigma: np.ndarray  # per-joint residual std
    ok: bool
    message: str
    evaluations: int
    full_rank: bool


def _weighted_fit(problem, layout, fixed, weights, lo, hi, x, start, max_nfev, projections=None) -> _WeightedFit:
    """One variable-projection fit with fixed weights, from ``x`` (or the grid / ``start`` when None)."""
    objective = _Objective(problem, layout, fixed, weights, projections)
    if x is None:
        x = _start(objective, lo, hi, start)
    x, ok, message = _vp_fit(objective, lo, hi, x, max_nfev)
    return _WeightedFit(x, objective.natural(x), objective.linear_coefficients(x), objective.joint_sigma(x), ok,
                        message, objective.evaluations, objective.proj.full_rank)


