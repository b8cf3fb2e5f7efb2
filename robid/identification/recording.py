"""Building the identification record from an identification's working data (robid.record).

Everything a report shows is computed here, once, on every sample: the torque fit per run (robid.estimation
metrics over the rows the data selection kept), the share of samples inside the 95 % prediction band
(``pred +- 1.96 sqrt(w^T C w + sigma_j^2)``, Gautier's prediction error with the parameter covariance C and the
residual std sigma_j of the identification fit), the motion ranges, the residual spectrum; and decimated series
for figures. A run is recorded the same way whether it was fitted (identification) or held out (validation),
and a validation file given after identification (``robid report --validate``) goes through :func:`held_out_run`,
processed with the options the record stores.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from robid.estimation import band_coverage, prediction_std, torque_metrics
from robid.estimation.metrics import TorqueMetrics
from robid.identification.datasets import DataSet, load_dataset
from robid.model.terms import standalone_parameters
from robid.record.codec import finite, finite_tuple, from_plain
from robid.record.identification import (
    BalancerCollinearity,
    BaseParameter,
    ClassThresholds,
    ConsistentEstimateSummary,
    EstimatorSummary,
    IdentificationRecord,
    MovedParameter,
    ParameterCorrelation,
    PhysicalConsistency,
    ProcessingSettings,
    StandardParameter,
)
from robid.record.runs import DisplaySeries, JointFit, JointRange, ResidualSpectrum, RunRecord, TorqueFit
from robid.signals import ProcessingOptions
from robid.signals.processing_summary import processing_summary
from robid.signals.spectrum import amplitude_spectrum, merge_bins

K95 = 1.96
DISPLAY_POINTS = 2000  # samples per run kept for figures
SPECTRUM_BINS = 2000  # frequency bins per run kept for figures
DIGITS = 6  # significant digits of figure series


# ---- runs ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class RunPrediction:
    """Prediction of one data set with the reported values: mean and parameter-uncertainty std (N, dof), and the
    residual std per joint of the identification fit (the noise part of the prediction band)."""

    mean: np.ndarray
    std_model: np.ndarray
    sigma: np.ndarray

    @property
    def std_total(self) -> np.ndarray:
        return np.sqrt(self.std_model**2 + self.sigma[None, :] ** 2)


def predict_dataset(dataset: DataSet, values: np.ndarray, covariance: np.ndarray, sigma: np.ndarray) -> RunPrediction:
    return RunPrediction(dataset.W @ values, prediction_std(dataset.W, covariance), np.asarray(sigma, dtype=float))


def run_record(robot, dataset: DataSet, role: str, values, covariance, sigma) -> RunRecord:
    """The record of one run (module docstring), predicted with ``values`` (covariance, residual ``sigma``)."""
    values = np.asarray(values, dtype=float)
    pred = predict_dataset(dataset, values, covariance, sigma)
    p = dataset.processed
    summary = processing_summary(p)
    return RunRecord(
        **{f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)} | {"notes": dataset.notes},
        file=dataset.source,
        role=role,
        rows_used=dataset.rows_used,
        fit=torque_fit(dataset.tau, pred, p.keep, robot.joint_names),
        ranges=_ranges(p, robot.joint_names),
        display=_display(robot, dataset, values, pred),
        spectrum=_spectrum(dataset, pred),
    )


def torque_fit(tau: np.ndarray, pred: RunPrediction, used: np.ndarray, joints) -> TorqueFit:
    """Metrics (robid.estimation.metrics) plus band coverage and mean model std, over the used rows."""
    used = np.asarray(used, dtype=bool)
    metrics = torque_metrics(tau, pred.mean, joints, used)
    std = pred.std_total
    inside = band_coverage(tau, pred.mean - K95 * std, pred.mean + K95 * std, used)
    mean_std = np.sum(np.where(used, pred.std_model, 0.0), axis=0) / np.maximum(used.sum(axis=0), 1)
    return _fit(metrics, inside, mean_std)


def _fit(metrics: TorqueMetrics, inside: np.ndarray, mean_std: np.ndarray) -> TorqueFit:
    per = tuple(
        JointFit(
            joint=m.joint,
            rms=finite(m.rms),
            nrmse_percent=finite(m.nrmse_percent),
            max_error=finite(m.max_error),
            measured_rms=finite(m.measured_rms),
            relative_error_percent=finite(m.nrmse_percent),
            inside_band_percent=finite(inside[j]),
            mean_model_std=finite(mean_std[j]),
        )
        for j, m in enumerate(metrics.per_joint)
    )
    return TorqueFit(per, finite(metrics.relative_error_norm_percent), int(metrics.samples))


def _ranges(p, joints) -> tuple[JointRange, ...]:
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (p.q, p.qd, p.qdd, p.tau))
    return tuple(
        JointRange(
            joint=name,
            q_min=float(q[:, j].min()),
            q_max=float(q[:, j].max()),
            q_mean=float(q[:, j].mean()),
            qd_peak=float(np.abs(qd[:, j]).max()),
            qdd_peak=float(np.abs(qdd[:, j]).max()),
            tau_peak=float(np.abs(tau[:, j]).max()),
        )
        for j, name in enumerate(joints)
    )


def _rounded(x: np.ndarray) -> tuple[float, ...]:
    return tuple(float(f"{v:.{DIGITS}g}") for v in np.asarray(x, dtype=float).ravel())


def _columns(x: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(_rounded(x[:, j]) for j in range(x.shape[1]))


def _display(robot, dataset: DataSet, values: np.ndarray, pred: RunPrediction) -> DisplaySeries:
    p = dataset.processed
    step = max(1, -(-p.n_samples // DISPLAY_POINTS))
    pick = slice(None, None, step)
    base = robot.base_parameters()

    def part(kind: str) -> tuple[tuple[float, ...] | None, ...]:
        out = []
        for j, joint in enumerate(robot.joint_names):
            idx = standalone_parameters(base.names, base.expressions, joint, kind)
            out.append(_rounded(dataset.W[pick, j, idx] @ values[idx]) if idx else None)
        return tuple(out)

    return DisplaySeries(
        step=step,
        t=_rounded(p.t[pick]),
        q=_columns(p.q[pick]),
        qd=_columns(p.qd[pick]),
        tau_measured=_columns(dataset.tau[pick]),
        tau_predicted=_columns(pred.mean[pick]),
        tau_std_model=_columns(pred.std_model[pick]),
        tau_friction=part("friction"),
        tau_compensator=part("balancer"),
        used=tuple(tuple(bool(v) for v in col) for col in np.asarray(p.keep, dtype=bool)[pick].T),
    )


def _spectrum(dataset: DataSet, pred: RunPrediction) -> ResidualSpectrum:
    """Spectra of the measured torque and of the residual (unused rows count as zero): up to the Nyquist frequency
    on a periodic grid (the torque keeps the harmonics the processing kept; removed ones are exactly zero), up to
    twice the low-pass cut-off on a filtered record."""
    p = dataset.processed
    used = np.asarray(p.keep, dtype=bool)
    periodic = p.mode in ("periodic", "rest-to-rest") and p.period is not None
    freq, residual = amplitude_spectrum(np.where(used, dataset.tau - pred.mean, 0.0), p.sample_rate, periodic)
    _, measured = amplitude_spectrum(np.where(used, dataset.tau, 0.0), p.sample_rate, periodic)
    fmax = 2.0 * p.cutoff_hz if p.cutoff_hz and not periodic else float(freq[-1])
    keep = (freq > 0) & (freq <= fmax)
    f, meas = merge_bins(freq[keep], measured[keep], SPECTRUM_BINS)
    _, res = merge_bins(freq[keep], residual[keep], SPECTRUM_BINS)
    return ResidualSpectrum(_rounded(f), _columns(meas), _columns(res), float(fmax))


def held_out_run(robot, record: IdentificationRecord, path: str | Path, *, mapping=None, policy=None) -> RunRecord:
    """A validation run for a file given after identification, processed with the options the record stores
    (the file's own if it had any, else the common ones) and predicted with the record's values."""
    options = processing_options(record.processing, str(path))
    stored_mapping = record.processing.per_file_mapping.get(str(path), record.processing.mapping)
    dataset = load_dataset(
        robot, path, mapping=mapping if mapping is not None else stored_mapping, options=options, policy=policy
    )
    return run_record(robot, dataset, "validation", record.values, record.covariance_matrix, record.sigma)


# ---- processing settings ------------------------------------------------------------------------------------


def _plain_options(options: ProcessingOptions) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(options).items()}


def processing_settings(o) -> ProcessingSettings:
    """What it takes to process other files like the identification data (IdentificationOptions ``o``)."""
    return ProcessingSettings(
        options=_plain_options(o.processing),
        per_file={str(f): _plain_options(p) for f, p in o.file_processing.items()},
        per_file_mapping={str(f): str(m) for f, m in o.file_mapping.items() if m},
        mapping=str(o.mapping) if o.mapping else None,
    )


def processing_options(settings: ProcessingSettings, file: str | None = None) -> ProcessingOptions:
    """ProcessingOptions stored in a record for ``file`` (its own if recorded, else the common ones)."""
    stored = settings.options_for(file)
    fields = {f.name for f in dataclasses.fields(ProcessingOptions)}
    return ProcessingOptions(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in stored.items() if k in fields})


# ---- the whole record ---------------------------------------------------------------------------------------


def identification_record(work) -> IdentificationRecord:
    """The record of an identification (a robid.identification.identify.Identification: its working data)."""
    from robid.identification.balancer_analysis import compensator_report

    robot, est, ident, values = work.robot, work.estimate, work.identifiability, work.values
    cov, sigma = np.asarray(est.covariance, dtype=float), np.asarray(est.sigma, dtype=float)
    runs = tuple(run_record(robot, d, "identification", values, cov, sigma) for d in work.datasets)
    held_out = tuple(run_record(robot, d, "validation", values, cov, sigma) for d in work.validation_sets)
    return IdentificationRecord(
        robot=robot.name,
        robot_source=robot.model.source,
        terms=tuple(robot.terms),
        joints=tuple(robot.joint_names),
        method=work.values_method,
        base_parameters=_base_rows(robot, est, ident, values, work.values_method),
        standard_parameters=_standard_rows(robot, ident, work.consistent),
        correlated_pairs=tuple(
            ParameterCorrelation(c.first, c.second, finite(c.correlation)) for c in ident.correlated_pairs
        ),
        covariance=tuple(finite_tuple(row) for row in cov),
        estimation=_estimator_summary(est),
        metrics=_stacked_fit(robot, work.datasets, values, cov, sigma),
        data=runs,
        validation_data=held_out,
        thresholds=ClassThresholds(
            ident.thresholds.poor_relative_std_percent, ident.thresholds.correlation_threshold
        ),
        identifiability_notes=tuple(ident.notes),
        processing=processing_settings(work.options),
        compensator=balancer_summary(compensator_report(work)),
        notes=tuple(work.notes),
        physical_consistency=_physical(est, work.physical),
        consistent_estimate=_consistent(work.consistent),
    )


def _base_rows(robot, est, ident, values, values_method) -> tuple[BaseParameter, ...]:
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
                std=finite(est.std[k]),
                relative_std_percent=finite(rel[k]),
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
    return from_plain(EstimatorSummary, est.to_dict(), "estimation")


def _stacked_fit(robot, datasets, values, cov, sigma) -> TorqueFit:
    """The fit over all identification runs together (the stacked least-squares problem)."""
    preds = [predict_dataset(d, values, cov, sigma) for d in datasets]
    tau = np.concatenate([d.tau for d in datasets])
    used = np.concatenate([np.asarray(d.processed.keep, dtype=bool) for d in datasets])
    pred = RunPrediction(
        np.concatenate([p.mean for p in preds]), np.concatenate([p.std_model for p in preds]), np.asarray(sigma)
    )
    return torque_fit(tau, pred, used, robot.joint_names)


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


def balancer_summary(report) -> BalancerCollinearity | None:
    """The record of a balancer collinearity report (robid.estimation), None without a balancer."""
    return None if report is None else from_plain(BalancerCollinearity, report.to_dict(), "compensator")
