"""Result records of the estimators (frozen: they describe what an estimate is, not a workspace)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def relative_std_percent(values: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``100 * std / |value|``; infinite where the value is exactly zero."""
    values = np.asarray(values, dtype=float)
    std = np.asarray(std, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 100.0 * std / np.abs(values)
    return np.where(np.abs(values) > 0, out, np.inf)


@dataclass(frozen=True)
class EstimationResult:
    """One estimate of linear parameters with its uncertainty.

    Attributes
    ----------
    method : which estimator produced these numbers (``ols``, ``wls``, ``irls-huber``, ...: robid.defaults.METHODS).
    names : parameter names, in column order of the regressor.
    values, covariance, std, relative_std_percent : estimate, its covariance, ``sqrt(diag(cov))`` and
        ``100 std/|value|``.
    residual : (N, dof) measured minus predicted torque, unweighted (N m).
    sigma : (dof,) residual standard deviation per joint (robust scale for IRLS), N m.
    weights : (dof,) per-joint weights applied to the rows (1 for OLS; ``1/sigma_j`` for WLS).
    condition_number : 2-norm condition number of the weighted regressor as used by the estimator.
    condition_number_scaled : the same with unit-norm columns (independent of parameter units).
    dof_residual : rows that carry an equation (``N * dof`` without a data selection) minus ``nb``.
    notes : warnings and facts a user must see (rank deficiency, weights, non-convergence, ...).
    converged : False when an iteration limit was hit or the problem was rank deficient.
    iterations : iterations of an iterative estimator (1 for OLS, 2 for two-step WLS).
    white_sigma : (dof,) when the rows are filtered (correlated, non-periodic path): the per-joint standard
        deviation of the white noise on the recorded samples that, through the filter, explains the residual
        (``sigma`` is the standard deviation of one filtered row); None for independent rows.
    """

    method: str
    names: tuple[str, ...]
    values: np.ndarray
    covariance: np.ndarray
    std: np.ndarray
    relative_std_percent: np.ndarray
    residual: np.ndarray
    sigma: np.ndarray
    weights: np.ndarray
    condition_number: float
    condition_number_scaled: float
    dof_residual: int
    notes: tuple[str, ...] = field(default_factory=tuple)
    converged: bool = True
    iterations: int = 1
    white_sigma: np.ndarray | None = None

    @classmethod
    def build(
        cls,
        *,
        method: str,
        names: tuple[str, ...],
        values: np.ndarray,
        covariance: np.ndarray,
        residual: np.ndarray,
        sigma: np.ndarray,
        weights: np.ndarray,
        condition_number: float,
        condition_number_scaled: float,
        notes: list[str] | tuple[str, ...] = (),
        converged: bool = True,
        iterations: int = 1,
        rows_used: int | None = None,
        white_sigma: np.ndarray | None = None,
    ) -> EstimationResult:
        cov = np.asarray(covariance, dtype=float)
        std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        n, dof = residual.shape
        return cls(
            method=method,
            names=tuple(names),
            values=_readonly(values),
            covariance=_readonly(cov),
            std=_readonly(std),
            relative_std_percent=_readonly(relative_std_percent(values, std)),
            residual=_readonly(residual),
            sigma=_readonly(sigma),
            weights=_readonly(weights),
            condition_number=float(condition_number),
            condition_number_scaled=float(condition_number_scaled),
            dof_residual=int((n * dof if rows_used is None else rows_used) - len(names)),
            notes=tuple(notes),
            converged=bool(converged),
            iterations=int(iterations),
            white_sigma=None if white_sigma is None else _readonly(white_sigma),
        )

    def with_estimate(self, values: np.ndarray, covariance: np.ndarray, **changes) -> EstimationResult:
        """This fit with other unknowns: new ``values`` and ``covariance`` (e.g. mapped to other parameters by
        the delta method, ``T Cov T^T``), std and relative std recomputed. ``changes`` replace further arguments
        of :meth:`build` (``method``, ``names``, ``residual``, ``notes``, ...); the rest (per-joint sigma and
        weights, condition numbers, ...) stays that of this fit."""
        kept = {name: getattr(self, name) for name in _BUILD_ARGUMENTS}
        return EstimationResult.build(**{**kept, "values": values, "covariance": covariance, **changes})

    @property
    def correlation(self) -> np.ndarray:
        """Correlation matrix of the estimate (see :func:`robid.estimation.statistics.correlation_matrix`)."""
        from robid.estimation.statistics import correlation_matrix

        return correlation_matrix(self.covariance)

    def value(self, name: str) -> float:
        return float(self.values[self.names.index(name)])


#: the arguments of :meth:`EstimationResult.build` besides values and covariance (fields of the same name)
_BUILD_ARGUMENTS = (
    "method",
    "names",
    "residual",
    "sigma",
    "weights",
    "condition_number",
    "condition_number_scaled",
    "notes",
    "converged",
    "iterations",
    "white_sigma",
)
