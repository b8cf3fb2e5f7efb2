"""Estimation: estimators with honest uncertainty, physical consistency, identifiability, torque fit metrics.

Works on arrays only (no file reading, no plotting). Stacking convention: regressor ``W`` (N, dof, nb), torque
``tau`` (N, dof), one weight per joint. See docs/estimation.md.
"""

from robid.estimation.base_consistency import BaseConsistencyReport, check_base_consistency
from robid.estimation.consistent import ConsistentResult, consistent_estimate, consistent_from_base
from robid.estimation.drive_gains import DriveGainResult, identify_drive_gains
from robid.estimation.estimators import estimate, irls, ols, wls
from robid.estimation.identifiability import (
    ClassificationThresholds,
    EssentialResult,
    IdentifiabilityReport,
    classify,
    essential_parameters,
)
from robid.estimation.metrics import (
    PredictionBands,
    TorqueMetrics,
    band_coverage,
    predict,
    prediction_bands,
    prediction_std,
    torque_metrics,
)
from robid.estimation.physical_consistency import ConsistencyReport, check_physical_consistency, pseudo_inertia
from robid.estimation.results import EstimationResult
from robid.estimation.statistics import correlated_pairs, correlation_matrix

__all__ = [
    "BaseConsistencyReport",
    "ClassificationThresholds",
    "ConsistencyReport",
    "ConsistentResult",
    "DriveGainResult",
    "EssentialResult",
    "EstimationResult",
    "IdentifiabilityReport",
    "PredictionBands",
    "TorqueMetrics",
    "band_coverage",
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
    "prediction_std",
    "pseudo_inertia",
    "torque_metrics",
    "wls",
]
