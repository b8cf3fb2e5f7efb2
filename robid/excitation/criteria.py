"""Excitation criteria on the stacked base regressor W (N dof x nb) of one period.

* ``cond`` (default): condition number of the column-scaled regressor, kappa(W D^-1) with D = diag(||w_c||).
  Scaling removes the arbitrary units of the base parameters (kg vs kg m^2 vs N m s/rad), so the number says
  how evenly the trajectory excites the parameters rather than how their units compare. The raw kappa(W) is
  reported alongside (it is what several papers quote).
* ``cond_raw`` and ``cond_both`` (minimise kappa(W), or the product kappa(W D^-1) kappa(W)) for when the raw
  number matters too, e.g. to compare with designs published with the raw figure.
* ``logdet`` (D-optimality): log det(W^T W / rows), to maximise; it grows with the excitation amplitude and
  is insensitive to a single weak direction, which is why cond stays the default.

Both are always reported. The optimiser minimises log kappa (or -logdet); their gradients with respect to W
are analytic (singular vectors: d sigma_i = u_i^T dW v_i) and reach the trajectory coefficients through
:func:`robid.excitation.channels.channel_derivatives`.

The grid is tied to the period: ``grid_points`` samples t_i = (i + 1/2) T / n over one period. The half-step
offset keeps the samples off t = 0, where a rest-to-rest trajectory has qd = 0 exactly and the Coulomb column
sign(qd) is undefined (its value there would flip with rounding noise and make the criterion discontinuous).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from robid.excitation.fourier import FourierTrajectory

BaseRegressor = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
CRITERIA = ("cond", "logdet", "cond_raw", "cond_both")
#: the default (docs/excitation.md "Criteria"): log kappa(W D^-1) + raw_weight log kappa(W), with the excitation
#: floor of robid.excitation.velocity_floor keeping every joint moving
DEFAULT_CRITERION = "cond_both"


@dataclass(frozen=True)
class CriterionValues:
    """Criteria of one trajectory: ``cond`` (column-scaled), ``cond_raw``, ``logdet``, on ``grid_points``."""

    cond: float
    cond_raw: float
    logdet: float
    grid_points: int
    rank: int
    columns: int

    def value(self, criterion: str) -> float:
        return {
            "cond": self.cond,
            "logdet": self.logdet,
            "cond_raw": self.cond_raw,
            "cond_both": self.cond * self.cond_raw,
        }[criterion]

    def to_dict(self) -> dict:
        return {
            "cond": self.cond,
            "cond_raw": self.cond_raw,
            "logdet": self.logdet,
            "grid_points": self.grid_points,
            "rank": self.rank,
            "columns": self.columns,
        }


def stack(w3: np.ndarray) -> np.ndarray:
    """(N, dof, nb) -> (N dof, nb), rows sample-major."""
    w3 = np.asarray(w3, dtype=float)
    return w3.reshape(-1, w3.shape[-1])


def column_scaled(w: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(w, axis=0)
    return w / np.where(norms > 0.0, norms, 1.0)


def condition_number(w: np.ndarray, scale_columns: bool = True) -> float:
    """sigma_max / sigma_min (inf if a column is zero or the matrix is rank deficient)."""
    if scale_columns:
        if np.any(np.linalg.norm(w, axis=0) == 0.0):
            return math.inf
        w = column_scaled(w)
    s = np.linalg.svd(w, compute_uv=False)
    return math.inf if s[-1] <= s[0] * 1e-15 else float(s[0] / s[-1])


def log_det(w: np.ndarray) -> float:
    """log det(W^T W / rows) (-inf if singular)."""
    sign, value = np.linalg.slogdet(w.T @ w / w.shape[0])
    return float(value) if sign > 0 else -math.inf


def numeric_rank(w: np.ndarray) -> int:
    s = np.linalg.svd(column_scaled(w), compute_uv=False)
    return int(np.sum(s > s[0] * max(w.shape) * np.finfo(float).eps)) if s.size else 0


def criteria_of_matrix(w: np.ndarray, grid_points: int) -> CriterionValues:
    return CriterionValues(
        cond=condition_number(w, True),
        cond_raw=condition_number(w, False),
        logdet=log_det(w),
        grid_points=grid_points,
        rank=numeric_rank(w),
        columns=w.shape[1],
    )


def criterion_grid(period: float, grid_points: int) -> np.ndarray:
    return (np.arange(grid_points) + 0.5) * (period / grid_points)


def evaluate_criteria(
    traj: FourierTrajectory, base_regressor: BaseRegressor, grid_points: int = 250
) -> CriterionValues:
    """Both criteria for a trajectory on ``grid_points`` samples of one period."""
    t = criterion_grid(traj.period, grid_points)
    q, qd, qdd = traj.evaluate(t, 2)
    return criteria_of_matrix(stack(base_regressor(q, qd, qdd)), grid_points)


def _log_cond(w: np.ndarray) -> tuple[float, np.ndarray]:
    """log kappa(W) and its gradient u_1 v_1^T / s_1 - u_n v_n^T / s_n.

    Singular values and right vectors come from the small Gram matrix (nb x nb): much cheaper than an SVD of
    the tall matrix, and accurate while cond^2 << 1/eps (cond < 1e6, far beyond useful designs).
    """
    evals, v = np.linalg.eigh(w.T @ w)
    if evals[0] <= evals[-1] * 1e-24 or evals[0] <= 0.0:
        return math.inf, np.zeros_like(w)
    s1, sn = math.sqrt(evals[-1]), math.sqrt(evals[0])
    v1, vn = v[:, -1], v[:, 0]
    u1, un = w @ v1 / s1, w @ vn / sn
    return math.log(s1) - math.log(sn), np.outer(u1, v1) / s1 - np.outer(un, vn) / sn


def _log_cond_value(gram: np.ndarray) -> float:
    """log kappa from the Gram matrix W^T W (eigenvalues only)."""
    if not np.all(np.isfinite(gram)):  # a column the motion leaves at zero, scaled: rank-deficient
        return math.inf
    evals = np.linalg.eigvalsh(gram)
    if evals[0] <= evals[-1] * 1e-24 or evals[0] <= 0.0:
        return math.inf
    return 0.5 * (math.log(evals[-1]) - math.log(evals[0]))


def objective_value(w: np.ndarray, criterion: str, raw_weight: float = 1.0) -> float:
    """The minimised objective f(W) of :func:`objective_and_gradient` without its gradient (one Gram matrix,
    eigenvalues only: what line searches and the screening of starting points need)."""
    if criterion in ("cond", "cond_raw", "cond_both"):
        gram = w.T @ w
        f = 0.0
        if criterion != "cond_raw":
            d = np.sqrt(np.diag(gram))
            if not np.all(d > 0.0):  # a base column the motion leaves at zero: not identifiable from it
                return math.inf
            f += _log_cond_value(gram / np.outer(d, d))  # Gram of W D^-1
        if criterion != "cond":
            f += (raw_weight if criterion == "cond_both" else 1.0) * _log_cond_value(gram)
        return f
    if criterion == "logdet":
        sign, value = np.linalg.slogdet(w.T @ w / w.shape[0])
        return -float(value) if sign > 0 else math.inf
    raise ValueError(f"unknown criterion {criterion!r}")


def objective_and_gradient(w: np.ndarray, criterion: str, raw_weight: float = 1.0) -> tuple[float, np.ndarray]:
    """The minimised objective f(W) and df/dW.

    cond:      f = log kappa(Ws), Ws = W D^-1; with g = df/dWs and n_c = ||w_c||, per column
               df/dw_c = (I - w_c w_c^T / n_c^2) g_c / n_c  (the scaling is differentiated too).
    cond_raw:  f = log kappa(W).
    cond_both: f = log kappa(Ws) + raw_weight * log kappa(W) (both measures at once).
    logdet:    f = -log det(W^T W / rows), df/dW = -2 W (W^T W)^-1.
    """
    if criterion in ("cond", "cond_raw", "cond_both"):
        f, g = 0.0, np.zeros_like(w)
        if criterion != "cond_raw":
            norms = np.linalg.norm(w, axis=0)
            norms = np.where(norms > 0.0, norms, 1e-300)
            ws = w / norms
            fs, g_s = _log_cond(ws)
            along = np.sum(g_s * ws, axis=0)  # remove the component along each column, undo the scaling
            f, g = f + fs, g + (g_s - ws * along) / norms
        if criterion != "cond":
            fr, gr = _log_cond(w)
            weight = raw_weight if criterion == "cond_both" else 1.0
            f, g = f + weight * fr, g + weight * gr
        return f, g
    if criterion == "logdet":
        gram = w.T @ w
        sign, value = np.linalg.slogdet(gram / w.shape[0])
        if sign <= 0:
            return math.inf, np.zeros_like(w)
        return -float(value), -2.0 * w @ np.linalg.inv(gram)
    raise ValueError(f"unknown criterion {criterion!r}")
