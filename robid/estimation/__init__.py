"""Estimation: estimators with honest uncertainty, physical consistency, identifiability, validation metrics.

Works on arrays only (no file reading, no plotting). Stacking convention: regressor ``W`` (N, dof, nb), torque
``tau`` (N, dof), one weight per joint. See docs/estimation.md.
"""

from robid.estimation.base_consistency import BaseConsistencyReport, check_base_consistency
from robid.estimation.consistent import ConsistentResult, consistent_estimate, consistent_from_base
from robid.estimation.drive_gains import DriveGainResult, identify_drive_gains
from robid.estimation.estimators import estimate, irls, ols, wls
from robid.estimation.identifiability import (
    EssentialResult,
    IdentifiabilityReport,
    Thresholds,
    classify,
    essential_parameters,
)
from robid.estimation.metrics import PredictionBands, ValidationMetrics, predict, prediction_bands, validation_metrics
from robid.estimation.physical_consistency import ConsistencyReport, check_physical_consistency, pseudo_inertia
from robid.estimation.results import EstimationResult
from robid.estimation.statistics import correlated_pairs, correlation_matrix

__all__ = [
    "BaseConsistencyReport",
    "ConsistencyReport",
    "ConsistentResult",
    "DriveGainResult",
    "EssentialResult",
    "EstimationResult",
    "IdentifiabilityReport",
    "PredictionBands",
    "Thresholds",
    "ValidationMetrics",
    "check_base_consistency",
    "check_physical_consistency",
    "classify",
    "consistent_estimate",
    "consistent_from_base",
    "correlated_pairs",
    "correlation_matrix",
    "essential_parameters",
    "estimate",
    "identify_drive_gains",
    "irls",
    "ols",
    "predict",
    "prediction_bands",
    "pseudo_inertia",
    "validation_metrics",
    "wls",
]
