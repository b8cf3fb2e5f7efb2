"""Holding compensator (or any) parameters at datasheet values and re-estimating the others (docs/compensator.md,
section 4).

A parameter ``theta_i`` held at a datasheet value ``v_i`` moves its column to the torque side:
``tau - W_i v_i = W_r theta_r + e``, estimated with the same estimator as the full problem. The report gives,
for every remaining parameter, the value and standard deviation before and after, and the shift in units of
its free standard deviation; the sensitivity ``d theta_r / d v_i = -(A_r^T A_r)^-1 A_r^T a_i`` (rows weighted
by the final per-joint weights) says how the others follow the datasheet value, and a datasheet uncertainty
``s_i`` adds ``s_i^2 (d theta_r/d v_i)(d theta_r/d v_i)^T`` to the covariance. The free estimate's distance
from the datasheet value, in its own standard deviations, says whether data and datasheet agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.defaults import WLS
from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.compensator._numbers import finite_or_none as _num
from robid.estimation.estimators import estimate
from robid.estimation.results import EstimationResult
from robid.estimation.statistics import weighted_regressor


@dataclass(frozen=True)
class ParameterChange:
    name: str
    free_value: float
    free_std: float
    value: float  # with the fixed parameters held
    std: float  # with the fixed parameters held (plus the datasheet uncertainty, if given)

    @property
    def shift_in_free_std(self) -> float:
        return (self.value - self.free_value) / self.free_std if self.free_std > 0 else float("inf")

    @property
    def relative_change_percent(self) -> float:
        return 100.0 * (self.value - self.free_value) / abs(self.free_value) if self.free_value else float("inf")


@dataclass(frozen=True, eq=False)
class FixedEstimate:
    """Re-estimate with some parameters held at given (datasheet) values."""

    fixed: dict[str, float]
    fixed_std: dict[str, float]
    free: EstimationResult  # every parameter estimated
    estimate: EstimationResult  # the remaining parameters, fixed columns moved to the torque side
    names: tuple[str, ...]  # remaining parameters
    covariance: np.ndarray  # of the remaining parameters, with the propagated datasheet uncertainty
    sensitivity: dict[str, np.ndarray]  # d theta_r / d v_i
    changes: tuple[ParameterChange, ...]
    notes: tuple[str, ...]

    @property
    def values(self) -> np.ndarray:
        return self.estimate.values

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def value(self, name: str) -> float:
        return float(self.estimate.values[self.names.index(name)])

    def change(self, name: str) -> ParameterChange:
        for c in self.changes:
            if c.name == name:
                return c
        raise KeyError(name)

    def full_values(self, names: Sequence[str]) -> np.ndarray:
        """All parameters in the order ``names``: the fixed ones at their values, the others estimated."""
        out = []
        for n in names:
            out.append(self.fixed[n] if n in self.fixed else self.value(n))
        return np.array(out, dtype=float)

    def to_dict(self) -> dict:
        return {
            "fixed": {k: _num(v) for k, v in self.fixed.items()},
            "fixed_std": {k: _num(v) for k, v in self.fixed_std.items()},
            "method": self.estimate.method,
            "changes": [
                {
                    "name": c.name,
                    "free_value": _num(c.free_value),
                    "free_std": _num(c.free_std),
                    "value": _num(c.value),
                    "std": _num(c.std),
                    "shift_in_free_std": _num(c.shift_in_free_std),
                }
                for c in self.changes
            ],
            "notes": list(self.notes),
        }


def fix_parameters(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str],
    fixed: Mapping[str, float],
    *,
    method: str = WLS,
    fixed_std: Mapping[str, float] | None = None,
    free: EstimationResult | None = None,
    **options,
) -> FixedEstimate:
    """Hold ``fixed`` parameters at the given values and re-estimate the others (module docstring).

    ``method`` and ``options`` go to :func:`robid.estimation.estimate` for both the free and the fixed problem
    (``free`` may pass an existing full estimate). ``fixed_std`` (datasheet tolerances, one standard deviation)
    is propagated into the covariance of the others.
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    fixed = {str(k): float(v) for k, v in fixed.items()}
    fixed_std = {str(k): float(v) for k, v in (fixed_std or {}).items()}
    _check_fixed(names, fixed, fixed_std)
    if free is None:
        free = estimate(W, tau, names, method=method, **options)
    idx_fixed = [names.index(k) for k in fixed]
    keep = [k for k in range(len(names)) if k not in idx_fixed]
    v = np.array([fixed[names[i]] for i in idx_fixed])
    tau_r = tau - W[:, :, idx_fixed] @ v
    rest_names = tuple(names[k] for k in keep)
    est = estimate(W[:, :, keep], tau_r, rest_names, method=method, **options)
    sens, cov = _sensitivities(W, names, keep, idx_fixed, est, fixed_std)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    changes = tuple(
        ParameterChange(
            name=names[k],
            free_value=float(free.values[k]),
            free_std=float(free.std[k]),
            value=float(est.values[m]),
            std=float(std[m]),
        )
        for m, k in enumerate(keep)
    )
    return FixedEstimate(
        fixed=fixed,
        fixed_std=fixed_std,
        free=free,
        estimate=est,
        names=rest_names,
        covariance=cov,
        sensitivity=sens,
        changes=changes,
        notes=_notes(names, fixed, fixed_std, free, est.method),
    )


def _check_fixed(names: list[str], fixed: dict[str, float], fixed_std: dict[str, float]) -> None:
    unknown = [k for k in list(fixed) + list(fixed_std) if k not in names]
    if unknown:
        raise RobidInputError(f"fix_parameters: {unknown[0]!r} is not one of the parameters")
    extra = [k for k in fixed_std if k not in fixed]
    if extra:
        raise RobidInputError(f"fix_parameters: a tolerance is given for {extra[0]!r}, which is not held fixed")
    if not fixed:
        raise RobidInputError("fix_parameters: nothing to fix")


def _sensitivities(
    W: np.ndarray,
    names: list[str],
    keep: list[int],
    idx_fixed: list[int],
    est: EstimationResult,
    fixed_std: dict[str, float],
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``d theta_r / d v_i = -(A_r^T A_r)^-1 A_r^T a_i`` with the estimator's final joint weights, and the
    covariance of the remaining parameters plus ``s_i^2 (d theta_r/d v_i)(d theta_r/d v_i)^T`` per tolerance."""
    A = weighted_regressor(W[:, :, keep], est.weights)
    sens: dict[str, np.ndarray] = {}
    cov = np.array(est.covariance, dtype=float)
    for i in idx_fixed:
        a = weighted_regressor(W[:, :, [i]], est.weights)[:, 0]
        s = -np.linalg.lstsq(A, a, rcond=None)[0]
        sens[names[i]] = s
        if names[i] in fixed_std:
            cov = cov + fixed_std[names[i]] ** 2 * np.outer(s, s)
    return sens, cov


def _notes(
    names: list[str], fixed: dict[str, float], fixed_std: dict[str, float], free: EstimationResult, method: str
) -> tuple[str, ...]:
    notes = [
        f"held fixed: {', '.join(f'{k} = {val:.6g}' for k, val in fixed.items())}; their columns times the values "
        f"moved to the torque side, the others re-estimated by {method}"
    ]
    for n in fixed:
        i = names.index(n)
        if free.std[i] > 0 and np.isfinite(free.std[i]):
            d = (fixed[n] - free.values[i]) / free.std[i]
            notes.append(
                f"{n}: the free estimate {free.values[i]:.6g} +- {free.std[i]:.3g} is {abs(d):.2g} of its standard "
                f"deviations from the held value {fixed[n]:.6g}"
                + (" (data and datasheet disagree, or the free estimate is confounded)" if abs(d) > 3 else "")
            )
    if fixed_std:
        notes.append("covariance includes the datasheet tolerances: " + ", ".join(
            f"{k} +- {s:.3g}" for k, s in fixed_std.items()))
    return tuple(notes)
