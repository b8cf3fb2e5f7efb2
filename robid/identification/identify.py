"""identify(): measurement files -> estimate with uncertainty, classes, consistency check, metrics.

Steps (docs/identification.md): every identification file is read, validated and processed by the signal
stage; the filtered base regressor and torque of all files are stacked; the chosen estimator runs (``ols``,
``wls`` two-step per-joint weights, ``irls`` robust, or ``consistent``: WLS followed by the semidefinite
programme that finds the physically consistent standard set nearest to it in the metric of its covariance);
every base parameter is classified; the unconstrained estimate is checked for physical consistency; torque
metrics are computed on the identification data and on each validation file, processed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import (
    BaseConsistencyReport,
    ConsistentResult,
    EstimationResult,
    IdentifiabilityReport,
    Thresholds,
    ValidationMetrics,
    check_base_consistency,
    classify,
    consistent_from_base,
    estimate,
    validation_metrics,
)
from robid.identification.datasets import DataSet, load_dataset, stack
from robid.io.screening import ScreeningPolicy
from robid.robot import Robot
from robid.signals import ProcessingOptions

METHODS = ("ols", "wls", "irls", "consistent")


@dataclass(frozen=True)
class IdentificationOptions:
    method: str = "wls"
    processing: ProcessingOptions = field(default_factory=ProcessingOptions)
    mapping: str | Path | None = None
    policy: ScreeningPolicy = field(default_factory=ScreeningPolicy)
    thresholds: Thresholds = field(default_factory=Thresholds)
    #: consistent method: weight of the regulariser towards the nominal standard values (0 = none)
    regularization: float = 1e-6
    check_consistency: bool = True
    #: per-file processing options (e.g. the period of each run's trajectory) and mappings, keyed by str(path)
    file_processing: dict = field(default_factory=dict)
    file_mapping: dict = field(default_factory=dict)

    def processing_for(self, path) -> ProcessingOptions:
        return self.file_processing.get(str(path), self.processing)

    def mapping_for(self, path):
        return self.file_mapping.get(str(path), self.mapping)


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    robot: Robot
    options: IdentificationOptions
    datasets: tuple[DataSet, ...]
    estimate: EstimationResult
    identifiability: IdentifiabilityReport
    values: np.ndarray  # the reported base values (the consistent ones for method "consistent" when solved)
    values_method: str
    consistent: ConsistentResult | None
    physical: BaseConsistencyReport | None
    metrics: ValidationMetrics
    validation: tuple[tuple[str, ValidationMetrics], ...]
    validation_sets: tuple[DataSet, ...]
    notes: tuple[str, ...]

    @property
    def base(self):
        return self.robot.base_parameters()

    def predicted(self, dataset: DataSet) -> np.ndarray:
        return dataset.W @ self.values


def identify(
    robot: Robot,
    files: list[str | Path],
    options: IdentificationOptions | None = None,
    validation_files: list[str | Path] = (),
) -> IdentificationResult:
    o = options or IdentificationOptions()
    if o.method not in METHODS:
        raise RobidInputError(f"--method: expected one of {', '.join(METHODS)}, got {o.method!r}")
    if not files:
        raise RobidInputError("identify: at least one measurement file is needed")
    sets = tuple(
        load_dataset(robot, f, mapping=o.mapping_for(f), options=o.processing_for(f), policy=o.policy) for f in files
    )
    W, tau = stack(list(sets))
    base = robot.base_parameters()
    names = base.names
    notes: list[str] = []
    if len(sets) > 1:
        notes.append(f"{len(sets)} runs stacked into one least-squares problem ({W.shape[0]} samples)")
    est = estimate(W, tau, names, method="wls" if o.method == "consistent" else o.method)
    nominal_base = base.values(robot.parameters)
    ident = classify(
        est,
        W,
        thresholds=o.thresholds,
        structural_classes=base.classes,
        grouping=base.grouping,
        standard_names=robot.parameter_names,
        reference_values=np.where(np.abs(nominal_base) > 0, nominal_base, est.values),
    )
    physical = None
    if o.check_consistency:
        try:
            physical = check_base_consistency(
                est.values, base.grouping, robot.parameter_names, base_names=names, covariance=est.covariance
            )
        except np.linalg.LinAlgError as exc:  # a covariance that is not positive definite (rank-deficient data)
            notes.append(f"physical-consistency check not done: {exc} (the estimate's covariance is singular)")
    consistent = None
    values, values_method = est.values, est.method
    if o.method == "consistent":
        consistent = consistent_from_base(
            est.values,
            est.covariance,
            base.grouping,
            robot.parameter_names,
            base_names=names,
            nominal=robot.parameters,
            regularization=o.regularization,
        )
        if consistent.solved:
            values, values_method = consistent.base_values, consistent.method
        else:
            notes.append(
                f"physically consistent estimate failed ({consistent.status}); the reported values are the "
                f"unconstrained {est.method} estimate, labelled as such"
            )
    metrics = validation_metrics(tau, W @ values, robot.joint_names)
    vsets = tuple(
        load_dataset(robot, f, mapping=o.mapping_for(f), options=o.processing_for(f), policy=o.policy)
        for f in validation_files
    )
    validation = tuple((d.source, validation_metrics(d.tau, d.W @ values, robot.joint_names)) for d in vsets)
    return IdentificationResult(
        robot=robot,
        options=o,
        datasets=sets,
        estimate=est,
        identifiability=ident,
        values=np.asarray(values, dtype=float),
        values_method=values_method,
        consistent=consistent,
        physical=physical,
        metrics=metrics,
        validation=validation,
        validation_sets=vsets,
        notes=tuple(notes),
    )
