"""Building the identification record (robid.record.IdentificationRecord) from an identification's working
data: base and standard parameter rows, the estimator's summary, the fit over all identification runs, one run
record per identification and validation run (robid.identification.run_records), the consistency checks and the
compensator report. The processing settings the record stores, and reading them back, are
robid.identification.stored_options."""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.identification.run_records import model_error_std, predict_dataset, run_record, torque_fit
from robid.identification.stored_options import processing_settings
from robid.record.codec import finite, finite_tuple, from_plain
from robid.record.identification import (
    BaseParameter,
    ClassThresholds,
    CompensatorReport,
    ConsistentEstimateSummary,
    EstimatedParameter,
    EstimatorSummary,
    IdentificationRecord,
    MovedParameter,
    ParameterCorrelation,
    PhysicalConsistency,
    StandardParameter,
)
from robid.record.runs import TorqueFit

# ---- the whole record ---------------------------------------------------------------------------------------


def identification_record(work) -> IdentificationRecord:
    """The record of an identification's working data (robid.identification.identify.Solution)."""
    from robid.identification.compensator_analysis import compensator_report

    robot, est, ident, values = work.robot, work.estimate, work.identifiability, work.values
    cov = np.asarray(est.covariance, dtype=float)
    model = work.model
    predictions = [predict_dataset(robot, d, model) for d in work.datasets]
    model_error = model_error_std(work.datasets, predictions)
    predictions = [p.with_model_error(model_error) for p in predictions]
    refs = work.options.references
    runs = tuple(run_record(robot, d, "identification", model, p, references=refs)
                 for d, p in zip(work.datasets, predictions, strict=True))
    held_out = tuple(run_record(robot, d, "validation", model, predict_dataset(robot, d, model, model_error),
                                references=refs) for d in work.validation_sets)
    return IdentificationRecord(
        robot=robot.name,
        robot_source=robot.model.source,
        terms=tuple(robot.terms),
        joints=tuple(robot.joint_names),
        # the rows of the elastic layout; a motor-encoder-only identification has one drive row per joint
        motor_joints=() if work.options.motor_encoders_only else tuple(robot.joint_names[j] for j in
                                                                        robot.motor_joints),
        method=work.values_method,
        base_parameters=_base_rows(robot, est, ident, values, work.values_method, _replaced(work)),
        standard_parameters=_standard_rows(robot, ident, work.consistent),
        correlated_pairs=tuple(
            ParameterCorrelation(c.first, c.second, finite(c.correlation)) for c in ident.correlated_pairs
        ),
        covariance=tuple(finite_tuple(row) for row in cov),
        estimation=_estimator_summary(est),
        metrics=_stacked_fit(robot, work.datasets, predictions),
        model_error_std=finite_tuple(model_error),
        data=runs,
        validation_data=held_out,
        thresholds=ClassThresholds(
            ident.thresholds.poor_relative_std_percent, ident.thresholds.correlation_threshold
        ),
        identifiability_notes=tuple(ident.notes),
        processing=processing_settings(work.options),
        compensator=compensator_summary(compensator_report(work)),
        notes=tuple(work.notes),
        physical_consistency=_physical(est, work.physical),
        consistent_estimate=_consistent(work.consistent),
        friction_models=work.friction_models,
        held_friction=work.held_friction,
        estimator_comparison=work.estimator_comparison,
        choices=tuple(work.choices),
    )


def _replaced(work) -> frozenset[str]:
    """Base parameters an adopted friction model replaced (a sigmoid joint's Coulomb level): no std of their own."""
    if work.friction is None:
        return frozenset()
    return frozenset(n for n in work.base.names if n not in work.friction.names)


def _base_rows(robot, est, ident, values, values_method, replaced=frozenset()) -> tuple[BaseParameter, ...]:
    base = robot.base_parameters()
    nominal = base.values(robot.parameters)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = 100.0 * est.std / np.maximum(np.abs(values), 1e-300)
    rows = []
    for k, name in enumerate(base.names):
        pc = ident.by_name(name)
        rows.append(
            BaseParameter(
                name=name,
                expression=base.expressions[k],
                value=float(values[k]),
                std=None if name in replaced else finite(est.std[k]),
                relative_std_percent=None if name in replaced else finite(rel[k]),
                identifiability=pc.numerical_class,
                nominal=finite(nominal[k]),
                correlated_with=tuple(pc.correlated_with),
                unconstrained_value=finite(est.values[k]) if values_method != est.method else None,
            )
        )
    return tuple(rows)


def _standard_rows(robot, ident, consistent) -> tuple[StandardParameter, ...]:
    solved = consistent is not None and consistent.solved
    return tuple(
        StandardParameter(
            name=sc.name,
            structural_class=sc.structural_class,
            numerical_class=sc.numerical_class,
            base_parameters=tuple(sc.base_parameters),
            nominal=finite(robot.parameters[k]),
            consistent_value=finite(consistent.values[k]) if solved else None,
        )
        for k, sc in enumerate(ident.standard)
    )


def _estimator_summary(est) -> EstimatorSummary:
    return EstimatorSummary(
        method=est.method,
        parameters=tuple(
            EstimatedParameter(n, finite(v), finite(s), finite(r))
            for n, v, s, r in zip(est.names, est.values, est.std, est.relative_std_percent, strict=True)
        ),
        sigma_per_joint=finite_tuple(est.sigma),
        weights_per_joint=finite_tuple(est.weights),
        condition_number=finite(est.condition_number),
        condition_number_scaled=finite(est.condition_number_scaled),
        dof_residual=int(est.dof_residual),
        converged=bool(est.converged),
        iterations=int(est.iterations),
        notes=tuple(est.notes),
    )


def _stacked_fit(robot, datasets, preds) -> TorqueFit:
    """The fit over all identification runs together (the stacked least-squares problem), each run's band with
    its own noise and the model error."""
    tau = np.concatenate([d.drive_view().tau for d in datasets])
    used = np.concatenate([np.asarray(d.processed.keep, dtype=bool) for d in datasets])
    mean, std_model, std_total = (np.concatenate([getattr(p, k) for p in preds]) for k in ("mean", "std_model",
                                                                                            "std_total"))
    return torque_fit(tau, mean, std_model, std_total, used, robot.joint_names)


def _physical(est, ph) -> PhysicalConsistency | None:
    if ph is None:
        return None
    return PhysicalConsistency(
        of=est.method,
        consistent=ph.consistent,
        solved=ph.solved,
        statistically_compatible=ph.statistically_compatible,
        mahalanobis=finite(ph.mahalanobis),
        moved=tuple(MovedParameter(n, finite(a), finite(b)) for n, a, b in ph.moved),
        notes=tuple(ph.notes),
    )


def _consistent(cons) -> ConsistentEstimateSummary | None:
    if cons is None:
        return None
    return ConsistentEstimateSummary(cons.method, cons.solved, cons.status, cons.solver, tuple(cons.notes))


def compensator_summary(report) -> CompensatorReport | None:
    """The record of a compensator collinearity report (robid.estimation), None without a compensator. Its JSON form
    (``to_dict``) is the record's by construction; a mismatch is a bug, not bad input."""
    if report is None:
        return None
    try:
        return from_plain(CompensatorReport, report.to_dict(), "compensator")
    except RobidInputError as exc:
        raise RuntimeError(f"compensator report and its record disagree: {exc}") from exc
