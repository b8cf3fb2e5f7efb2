"""One joint's friction candidate fitted against the whole problem from that joint's rows alone (the candidates of
a model selection, robid.estimation.friction_model_selection).

A candidate on joint J (a Stribeck or sigmoid model, optionally with position ripple) adds columns C(theta) that
are non-zero on J's rows only, and a sigmoid model drops the column c of fc_J. With the weighted fixed columns A
(every base parameter, the linear model's) factored once -- Q an orthonormal basis of their span, y_t = P y the
weighted torque projected off it, P = I - Q Q^T -- the variable-projection problem of robid.estimation.
nonlinear_friction with weights held fixed is, exactly,

    rho(theta) = min_b || P' (y - C b) ||^2,  P' = P + c_hat c_hat^T

where A' is A without c and c_hat the unit component of c orthogonal to the other columns (A (A^T A)^-1 e_c,
normalised; zero when no column is dropped): P' projects off span(A') = span(A) minus c_hat. Because C lives on J's
rows, every product needs only those rows (index J):

    G = C^T P' C = C_J^T C_J - (Q_J^T C_J)^T (Q_J^T C_J) + (C_J^T c_J)(C_J^T c_J)^T
    g = C^T P' y = C_J^T y_tJ + (C_J^T c_J)(c_hat^T y)
    rho = ||y_t||^2 + (c_hat^T y)^2 - g^T G^-1 g,   b = G^-1 g

and the residual on J's rows is y_tJ + c_J (c_hat^T y) - (C_J b - Q_J Q_J^T C_J b + c_J c_J^T C_J b). Each
evaluation costs O(n_J (r + k) k) for n_J rows of joint J, r fixed columns and k new ones, instead of a projection
of all N dof rows: the selection compares its candidates at a fraction of a full fit's cost. The nonlinear
parameters are found by a grid over their range (as the full fit starts) refined by Brent's bounded search (one
parameter) or L-BFGS-B on rho with its exact gradient (d rho / d theta_i = -2 r^T (dC/d theta_i) b); the fixed
columns' coefficients at the optimum come from the same factorisation (least squares with the coefficient of c held
at zero, for a sigmoid).

What a screened candidate reports -- joint J's residual RMS, AIC and BIC (robid.estimation.nonlinear_friction
module docstring), its values for the held-out error -- are those of the weighted fit with the given weights; no
covariance is computed (std NaN): the chosen models are then fitted together by fit_nonlinear_friction, with
weights re-estimated and their covariance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from robid.estimation import _lsq
from robid.estimation.friction_layout import (
    _fixed_columns,
    _joint_parameters,
    _layout,
    _nonlinear_owner,
    _reporting_values,
    _requests,
    _ripple_function,
    _varying_function,
)
from robid.estimation.friction_problem import FrictionProblem, FrictionRequest, JointFrictionFit
from robid.estimation.friction_projection import _bounds, _Projection
from robid.estimation.nonlinear_friction import _effective_rows

#: grid points over each nonlinear parameter's range before the refinement, as the full fit's start (8 missed the
#: basin of a Stribeck velocity of 0.2 rad/s in tests/test_nonlinear_friction.py: the refinement found 1.16)
GRID = 16


@dataclass(frozen=True, eq=False)
class ScreenedCandidate:
    """A candidate fitted with fixed weights (module docstring): the fields robid.estimation.nonlinear_friction.
    predict_friction reads (``names``, ``values``, ``nonlinear``, ``requests``), joint J's figures (``joint``),
    whether the refinement converged; ``std`` is NaN (not computed)."""

    names: tuple[str, ...]
    values: np.ndarray
    nonlinear: tuple[bool, ...]
    requests: tuple[FrictionRequest, ...]
    joint: JointFrictionFit
    converged: bool
    notes: tuple[str, ...] = ()

    @property
    def std(self) -> np.ndarray:
        return np.full(len(self.names), np.nan)

    def value(self, name: str) -> float:
        return float(self.values[self.names.index(name)])

    def std_of(self, name: str) -> float:
        self.names.index(name)
        return math.nan


class _Screen:
    """rho(theta) of one candidate on joint ``row`` (module docstring)."""

    def __init__(self, problem: FrictionProblem, request: FrictionRequest, row: int, weights: np.ndarray,
                 projections: dict):
        self.problem, self.row = problem, row
        requests = tuple(request if k == row else FrictionRequest() for k in range(len(problem.joint_names)))
        self.layout = _layout(problem, requests)
        linear = _layout(problem, tuple(FrictionRequest() for _ in problem.joint_names))
        n, dof = problem.tau.shape
        mask = problem.used.reshape(-1)
        row_w = _lsq.rows_of_joint(weights, n)[mask]
        key = (linear.kept, linear.ripple_names, np.asarray(weights, dtype=float).tobytes())
        proj = projections.get(key)
        if proj is None:
            fixed = _fixed_columns(problem, linear)
            proj = projections[key] = _Projection(fixed.reshape(n * dof, -1)[mask], problem.tau.reshape(-1)[mask],
                                                  row_w)
        self.proj = proj
        self.samples = problem.used[:, row]
        self.rows = np.nonzero(np.tile(np.arange(dof), n)[mask] == row)[0]  # joint J's rows among the used ones
        self.w = float(weights[row])
        self.QJ = proj.basis[self.rows]
        self.ytJ = proj.yt[self.rows]
        self.yt2 = float(proj.yt @ proj.yt)
        self.drop = self._dropped_direction(linear)
        self.full_rank = proj.full_rank
        self._ripple = None

    def _dropped_direction(self, linear) -> tuple[np.ndarray, float, int] | None:
        """(c_J, c_hat^T y, index of c among the fixed columns) of the dropped column, or None."""
        dropped = [i for i in linear.kept if i not in self.layout.kept]
        if not dropped:
            return None
        c = linear.kept.index(dropped[0])
        proj = self.proj
        live = np.nonzero(proj.live)[0]
        if c not in live or not proj.full_rank:
            return None
        e = np.zeros(live.size)
        e[list(live).index(c)] = 1.0
        direction = proj.basis @ (proj._back.T @ e)
        direction /= np.linalg.norm(direction)
        return direction[self.rows], float(direction @ proj.yw), c

    def columns(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(C_J (n_J, k): ripple then varying columns on joint J's used rows, weighted; D_J: the derivative of
        each varying column with respect to each nonlinear parameter, weighted)."""
        layout, signals = self.layout, self.problem.signals
        nv = len(layout.varying_names)
        parts, derivative = [], np.zeros((self.samples.size, 0))
        if layout.ripple_names:
            if self._ripple is None:
                self._ripple = signals.evaluate(_ripple_function(layout))
            parts.append(self._ripple)
        if nv:
            varying = signals.evaluate(_varying_function(layout, p))
            parts.append(varying[:, :nv])
            derivative = varying[:, nv:]
        cols = np.concatenate(parts, axis=1) if parts else np.zeros((self.samples.size, 0))
        return cols[self.samples] * self.w, derivative[self.samples] * self.w

    def solve(self, p: np.ndarray):
        """(rho, b, C_J, D_J) at the natural nonlinear values ``p``."""
        CJ, DJ = self.columns(p)
        QC = self.QJ.T @ CJ
        G = CJ.T @ CJ - QC.T @ QC
        g = CJ.T @ self.ytJ
        base = self.yt2
        if self.drop is not None:
            cJ, cy, _ = self.drop
            cc = CJ.T @ cJ
            G = G + np.outer(cc, cc)
            g = g + cc * cy
            base += cy * cy
        b = np.linalg.lstsq(G, g, rcond=None)[0] if G.size else np.zeros(0)
        return base - float(g @ b), b, CJ, DJ

    def gradient(self, b: np.ndarray, CJ: np.ndarray, DJ: np.ndarray) -> np.ndarray:
        """d rho / d p: -2 r^T (dC/dp_i) b, r the weighted residual (in the range of P', whose derivative terms
        vanish at the optimal b: the variable-projection gradient, Golub & Pereyra 1973)."""
        r = self.residual(b, CJ) * self.w
        nr = len(self.layout.ripple_names)
        column, _ = _nonlinear_owner(self.layout)
        return np.array([-2.0 * float(r @ DJ[:, i]) * b[nr + column[i]] for i in range(DJ.shape[1])])

    def residual(self, b: np.ndarray, CJ: np.ndarray) -> np.ndarray:
        """Joint J's residual on its used rows, unweighted (N m)."""
        Cb = CJ @ b
        r = self.ytJ - (Cb - self.QJ @ (self.QJ.T @ Cb))
        if self.drop is not None:
            cJ, cy, _ = self.drop
            r = r + cJ * cy - cJ * float(cJ @ Cb)
        return r / self.w

    def fixed_coefficients(self, b: np.ndarray, CJ: np.ndarray) -> np.ndarray:
        """Coefficients of the kept fixed columns for the weighted target y - C b (the dropped one held at 0)."""
        proj = self.proj
        target = proj.yw.copy()
        target[self.rows] -= CJ @ b
        if not proj.basis.shape[1]:
            return np.zeros(len(self.layout.kept))
        live = np.nonzero(proj.live)[0]
        scaled = proj._back @ (proj.basis.T @ target)  # live columns, scaled coordinates
        if self.drop is not None:
            c = list(live).index(self.drop[2])
            z = proj._back @ proj._back[c]  # (A_s^T A_s)^-1 e_c
            scaled = scaled - scaled[c] / z[c] * z
        full = np.zeros(proj.width)
        full[live] = scaled / proj.scale[live]
        if self.drop is not None:
            full = np.delete(full, self.drop[2])
        return full


def screen_candidate(problem: FrictionProblem, joint: str, request: FrictionRequest, weights: np.ndarray,
                     projections: dict) -> ScreenedCandidate:
    """Fit ``request`` on ``joint`` (the other joints linear) with the per-joint ``weights`` held fixed, from that
    joint's rows (module docstring); ``projections`` shares the factored fixed columns between candidates."""
    row = list(problem.joint_names).index(joint)
    screen = _Screen(problem, _requests({joint: request}, problem.joint_names)[row], row,
                     np.asarray(weights, dtype=float), projections)
    layout = screen.layout
    lo, hi = _bounds(problem, layout) if layout.nonlinear_names else (np.zeros(0), np.zeros(0))
    logs = layout.log_scale

    def natural(x):
        return np.where(logs, np.exp(x), x)

    def rho(x):
        p = natural(x)
        value, b, CJ, DJ = screen.solve(p)
        return value, screen.gradient(b, CJ, DJ) * np.where(logs, p, 1.0)

    x, converged, notes = np.zeros(0), True, []
    if layout.nonlinear_names:
        x, converged = _minimise(rho, lo, hi, layout)
        width = hi - lo
        at_bound = [n for i, n in enumerate(layout.nonlinear_names)
                    if min(x[i] - lo[i], hi[i] - x[i]) < 1e-3 * max(width[i], 1e-12)]
    else:
        at_bound = []
    p = natural(x)
    _, b, CJ, _ = screen.solve(p)
    fixed = screen.fixed_coefficients(b, CJ)
    beta = np.concatenate([fixed, b])
    values = np.concatenate([_reporting_values(layout, beta, fixed.size + len(layout.ripple_names)), p])
    residual = screen.residual(b, CJ)
    figures = _figures(problem, layout, row, residual, tuple(at_bound))
    if not screen.full_rank:
        notes.append("the fixed columns are numerically rank deficient: least-norm solution")
    nonlinear = tuple([False] * len(layout.linear_names) + [True] * len(layout.nonlinear_names))
    return ScreenedCandidate(layout.names, values, nonlinear, layout.requests, figures, bool(converged),
                             tuple(notes))


def _minimise(rho, lo: np.ndarray, hi: np.ndarray, layout) -> tuple[np.ndarray, bool]:
    """The best of a grid over the nonlinear parameters' range (sigmoid offsets 0, further sigmoids 10x and 100x
    wider, as the full fit starts), refined within the bounds: one parameter (Stribeck) by Brent's bounded search
    between the best point's grid neighbours, more (sigmoids) by L-BFGS-B with the exact gradient, restarted once
    from where it stopped."""
    x0 = np.where(layout.log_scale, 0.5 * (lo + hi), 0.0)
    grid = np.linspace(lo[0], hi[0], GRID)
    best, best_cost, best_k = x0, math.inf, 0
    joint = layout.joints[0]
    for k, scale in enumerate(grid):
        x = x0.copy()
        if joint.request.model == "stribeck":
            x[0] = scale
        else:
            for i in range(joint.request.sigmoids):
                x[2 * i] = np.clip(scale - math.log(10.0) * i, lo[2 * i], hi[2 * i])
                x[2 * i + 1] = 0.0
        cost = rho(x)[0]
        if cost < best_cost:
            best, best_cost, best_k = x, cost, k
    if best.size == 1:
        a, b = grid[max(best_k - 1, 0)], grid[min(best_k + 1, GRID - 1)]
        result = minimize_scalar(lambda t: rho(np.array([t]))[0], bounds=(a, b), method="bounded",
                                 options={"xatol": 1e-10 * max(1.0, abs(b - a)), "maxiter": 200})
        x = np.array([result.x]) if result.fun <= best_cost else best
        return x, bool(result.success)
    bounds = list(zip(lo, hi, strict=True))
    x, ok = best, True
    for _ in range(2):
        result = minimize(rho, x, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": 200, "ftol": 1e-15, "gtol": 1e-12})
        if result.fun <= rho(x)[0]:
            x, ok = np.asarray(result.x, dtype=float), bool(result.success)
    return x, ok


def _figures(problem: FrictionProblem, layout, row: int, residual: np.ndarray, at_bound) -> JointFrictionFit:
    """Joint ``row``'s figures (robid.estimation.nonlinear_friction._joint_figures) from its residual."""
    used = problem.used
    params = _joint_parameters(layout, row)
    n = int(used[:, row].sum())
    ne = float(_effective_rows(problem, used)[row])
    rss = float(residual @ residual)
    rms = math.sqrt(rss / n) if n else math.nan
    if n and rss > 0 and ne > 1:
        fit = ne * math.log(rss / n)
        aic, bic = fit + 2 * len(params), fit + len(params) * math.log(ne)
    else:
        aic = bic = math.nan
    return JointFrictionFit(problem.joint_names[row], layout.requests[row].label, params, n, ne, rms, aic, bic,
                            tuple(a for a in at_bound if a in params))
