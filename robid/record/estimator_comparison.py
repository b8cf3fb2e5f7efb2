"""The record of an estimator comparison (schema 1.4, JSON ``estimator_comparison``): the same identification
runs estimated by several methods (e.g. wls, idim-iv, didim), each scored per joint by the NRMSE of the measured
drive torque on the validation runs -- or, without any, on the identification runs, where no choice is made (the
least-squares methods minimise that error by construction). The record's values stay those of its ``method``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EstimatorScore:
    """One method: NRMSE [%] per joint over the scored runs' used rows, their mean, whether it is the chosen one
    (lowest mean held-out NRMSE), and why it could not be computed when it failed (``error``)."""

    method: str
    nrmse_percent: tuple[float | None, ...]
    mean_nrmse_percent: float | None
    chosen: bool
    error: str | None = None


@dataclass(frozen=True)
class EstimatorComparison:
    """``criterion``: "validation" (held-out runs; the lowest mean NRMSE is chosen) or "identification" (no
    held-out run: scores shown, nothing chosen)."""

    criterion: str
    joints: tuple[str, ...]
    scores: tuple[EstimatorScore, ...]
    chosen: str | None
