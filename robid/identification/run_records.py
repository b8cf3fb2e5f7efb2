"""The record of one run (robid.record.RunRecord): what the identified model predicts for a data set and how it
fits, computed once, on every sample, so that a report only has to draw it.

* **Prediction** by the identified model (robid.identification.identified_model): ``tau_pred = W beta`` (W the
  filtered base regressor of the run) plus, where the record adopted a nonlinear friction model, what that model
  adds, through the same filter.
* **Prediction band**: ``tau_pred +- 1.96 sqrt(w^T C w + sigma_j^2 + e_j^2)``, C the covariance of the estimate
  (the parameter uncertainty along the regressor row w, robid.estimation.prediction_std), ``sigma_j`` the noise std
  of the run's own processed torque, estimated by the signal stage (``noise.tau_std_processed``), and ``e_j`` the
  model error of joint j (:func:`model_error_std`): what the identification runs' residuals hold beyond their
  noise and the parameter uncertainty -- unmodelled dynamics that no amount of data averages away. About 95 % of
  the used samples of a run fall inside it when the model predicts the run as well as it fits the identification
  data; far fewer means the run holds errors the identification data did not show. The run's own noise is used,
  not the identification fit's residual std: runs averaged over different numbers of periods have different noise
  levels.
* **Fit**: robid.estimation.torque_metrics over the rows the data selection kept, the share of those rows inside
  the band, and the mean model std.
* **Ranges** of the processed motion, **display series** (every ``step``-th sample, 6 significant digits), and
  the **residual spectrum** (robid.signals.spectrum).
* **Deflection** (elastic layout only): the recorded deflection theta - q of every elastic joint and the one the
  identified springs predict from the link rows (:func:`elastic_deflection`), on the display samples.

A validation file given after identification (``robid report --validate``) goes through :func:`held_out_run`:
processed with the options and screening the record stores, it is recorded exactly as identification records
its validation runs.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
from scipy.signal import lfilter, lfilter_zi

from robid.errors import RobidInputError
from robid.estimation import band_coverage, torque_metrics
from robid.estimation.metrics import K95
from robid.identification.datasets import DataSet, elastic_rows
from robid.model.terms import standalone_parameters
from robid.record.codec import finite
from robid.record.runs import (
    PERIODIC_MODES,
    DisplaySeries,
    JointFit,
    JointRange,
    ReferenceFit,
    ResidualSpectrum,
    RunRecord,
    Series,
    TorqueFit,
)
from robid.signals.processing_summary import processing_summary
from robid.signals.spectrum import amplitude_spectrum, merge_bins

DISPLAY_POINTS = 2000  # samples per run kept for figures
SPECTRUM_BINS = 2000  # frequency bins per run kept for figures
DIGITS = 6  # significant digits of figure series


@dataclasses.dataclass(frozen=True, eq=False)
class RunPrediction:
    """Prediction of one data set with the reported values: mean and parameter-uncertainty std (N, dof), the
    noise std per joint of the run's processed torque and the model error std per joint (:func:`model_error_std`;
    zero until estimated): the parts of the prediction band."""

    mean: np.ndarray
    std_model: np.ndarray
    noise: np.ndarray
    model_error: np.ndarray | None = None

    @property
    def std_total(self) -> np.ndarray:
        error = np.zeros_like(self.noise) if self.model_error is None else self.model_error
        return np.sqrt(self.std_model**2 + self.noise[None, :] ** 2 + error[None, :] ** 2)

    def with_model_error(self, model_error) -> RunPrediction:
        return dataclasses.replace(self, model_error=np.asarray(model_error, dtype=float))


def predict_dataset(robot, dataset: DataSet, model, model_error=None) -> RunPrediction:
    """The prediction of the measured (drive) torque of every joint (DataSet.drive_view) by the identified
    ``model`` (robid.identification.identified_model.IdentifiedModel); ``model_error``: its std per joint
    (:func:`model_error_std`), part of the band."""
    dataset = dataset.drive_view()
    noise = np.array([np.nan if s is None else s for s in dataset.processed.noise.tau_std_processed], dtype=float)
    mean, std = model.dataset_torque(robot, dataset)
    mean = _at_rest(robot, dataset, model, mean)
    error = None if model_error is None else np.array([0.0 if e is None else e for e in model_error], dtype=float)
    return RunPrediction(mean, std, noise, error)


def _at_rest(robot, dataset: DataSet, model, mean: np.ndarray) -> np.ndarray:
    """``mean`` with the rows where a joint is held still predicted at rest with the model's held friction
    (robid.identification.held_friction.rest_grid; unfiltered: a hold is 0.5 s or more of nearly constant torque),
    for the torque figures; the data selection leaves those rows out of every fit metric."""
    if getattr(model, "held", None) is None or dataset.drive_rows is not None:
        return mean
    from robid.identification.friction_fit import held_still_rows
    from robid.identification.held_friction import rest_grid

    # only rows the data selection left out: the fit metrics and bands of the kept rows stay the identified model's
    held = held_still_rows(dataset.processed, model.coulomb) & ~np.asarray(dataset.processed.keep, dtype=bool)
    rows = held.any(axis=1)
    if not rows.any() or held.shape != mean.shape:
        return mean
    grid, _, _ = rest_grid(model, robot, dataset.processed, model.coulomb, rows)
    out = np.array(mean, dtype=float)
    out[rows] = np.where(held[rows], grid, out[rows])
    return out


def model_error_std(datasets, predictions) -> np.ndarray:
    """Per joint, the std e_j of the model error: the identification runs' residual variance beyond their noise
    and the parameter uncertainty, pooled over their used rows,

        e_j^2 = max(0, mean_n r_nj^2 - mean_n (sigma_j(run n)^2 + w_nj^T C w_nj)),

    r = measured - predicted drive torque, sigma_j(run) the noise std of the run's processed torque. It is what a
    new run's residual holds besides its own noise when the model predicts it as well as it fits the identification
    data: the prediction band counts it, so that about 95 % of such a run's samples fall inside. A joint without
    used rows or noise estimate gets 0 (its band is the noise's alone)."""
    total = used_rows = excess = 0.0
    for dataset, pred in zip(datasets, predictions, strict=True):
        view = dataset.drive_view()
        used = np.asarray(view.processed.keep, dtype=bool)
        explained = pred.std_model**2 + np.nan_to_num(pred.noise, nan=0.0)[None, :] ** 2
        residual = (view.tau - pred.mean) ** 2
        ok = used & np.isfinite(explained) & np.isfinite(residual)
        total = total + np.sum(np.where(ok, residual, 0.0), axis=0)
        excess = excess + np.sum(np.where(ok, explained, 0.0), axis=0)
        used_rows = used_rows + ok.sum(axis=0)
    n = np.maximum(used_rows, 1)
    return np.sqrt(np.clip((np.asarray(total) - np.asarray(excess)) / n, 0.0, None))


def run_record(robot, dataset: DataSet, role: str, model, pred: RunPrediction | None = None, *,
               references=()) -> RunRecord:
    """The record of one run (module docstring), predicted with the identified ``model`` (``pred``: that
    prediction when already made), with the fits of the ``references`` (ReferenceModel) on its samples."""
    pred = pred if pred is not None else predict_dataset(robot, dataset, model)
    dataset = dataset.drive_view()
    p = dataset.processed
    summary = processing_summary(p)
    return RunRecord(
        **{f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)} | {"notes": dataset.notes},
        file=dataset.source,
        role=role,
        rows_used=dataset.rows_used,
        fit=torque_fit(dataset.tau, pred.mean, pred.std_model, pred.std_total, p.keep, robot.joint_names),
        ranges=_ranges(p, robot.joint_names),
        display=_display(robot, dataset, model, pred),
        spectrum=_spectrum(dataset, pred),
        references=tuple(reference_fit(r, dataset, robot.joint_names) for r in references),
    )


def reference_fit(reference, dataset: DataSet, joints) -> ReferenceFit:
    """The fit of a reference model (robid.identification.references) on the run's processed samples, over the
    rows robid's fit uses (``dataset`` in its drive view)."""
    from robid.identification.references import reference_torque

    p = dataset.processed
    if dataset.reconstructed_link:
        raise RobidInputError(f"reference {reference.label!r}: the link states of {dataset.source} are reconstructed "
                              "from the identified springs; a reference model cannot be scored on them")
    tau_ref = reference_torque(reference, p)
    used = np.asarray(p.keep, dtype=bool)
    metrics = torque_metrics(dataset.tau, tau_ref, joints, used)
    per = tuple(
        JointFit(joint=m.joint, rms=finite(m.rms), nrmse_percent=finite(m.nrmse_percent),
                 max_error=finite(m.max_error), measured_rms=finite(m.measured_rms),
                 relative_error_percent=finite(m.nrmse_percent))
        for m in metrics.per_joint
    )
    return ReferenceFit(reference.label, TorqueFit(per, finite(metrics.relative_error_norm_percent),
                                                   int(metrics.samples)))


def torque_fit(tau, mean, std_model, std_total, used, joints) -> TorqueFit:
    """Metrics (robid.estimation.metrics) plus band coverage and mean model std, over the used rows; a joint
    whose band is not available (a parameter the data never excited) has no coverage."""
    used = np.asarray(used, dtype=bool)
    metrics = torque_metrics(tau, mean, joints, used)
    inside = band_coverage(tau, mean - K95 * std_total, mean + K95 * std_total, used)
    known = np.all(np.isfinite(std_total) | ~used, axis=0)
    count = np.maximum(used.sum(axis=0), 1)
    mean_std = np.sum(np.where(used, std_model, 0.0), axis=0) / count
    per = tuple(
        JointFit(
            joint=m.joint,
            rms=finite(m.rms),
            nrmse_percent=finite(m.nrmse_percent),
            max_error=finite(m.max_error),
            measured_rms=finite(m.measured_rms),
            relative_error_percent=finite(m.nrmse_percent),
            inside_band_percent=finite(inside[j]) if known[j] else None,
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


def _rounded(x: np.ndarray) -> tuple[float | None, ...]:
    """DIGITS significant digits; None for a value that is not a finite number."""
    return tuple(float(f"{v:.{DIGITS}g}") if math.isfinite(v) else None
                 for v in np.asarray(x, dtype=float).ravel().tolist())  # Python floats: 5x faster than numpy's


def _columns(x: np.ndarray) -> tuple[tuple[float | None, ...], ...]:
    return tuple(_rounded(x[:, j]) for j in range(x.shape[1]))


def _display(robot, dataset: DataSet, model, pred: RunPrediction) -> DisplaySeries:
    p = dataset.processed
    step = max(1, -(-p.n_samples // DISPLAY_POINTS))
    pick = slice(None, None, step)
    base = robot.base_parameters()
    values = np.asarray(model.values, dtype=float)
    excess = _friction_excess(robot, dataset, model)

    def part(kind: str) -> tuple[tuple[float | None, ...] | None, ...]:
        out = []
        for j, joint in enumerate(robot.joint_names):
            idx = standalone_parameters(base.names, base.expressions, joint, kind)
            if not idx:
                out.append(None)
                continue
            column = dataset.W[pick, j, idx] @ values[idx]
            out.append(_rounded(column + excess[pick, j] if kind == "friction" and excess is not None else column))
        return tuple(out)

    deflection = {}
    if robot.motor_joints and not dataset.reconstructed_link:  # link encoders: a recorded deflection
        measured, predicted = elastic_deflection(robot, p, values, dataset.source)
        deflection = {"deflection_measured": _elastic_columns(robot, measured[pick]),
                      "deflection_predicted": _elastic_columns(robot, predicted[pick])}
    t = np.asarray(p.t, dtype=float)
    return DisplaySeries(
        step=step,
        t0=float(t[0]),
        t=tuple(float(f"{v:.{DIGITS}g}") for v in t[pick] - t[0]),
        q=_columns(p.q[pick]),
        qd=_columns(p.qd[pick]),
        tau_measured=_columns(dataset.tau[pick]),
        tau_predicted=_columns(pred.mean[pick]),
        tau_std_model=_columns(pred.std_model[pick]),
        tau_friction=part("friction"),
        tau_compensator=part("compensator"),
        used=tuple(tuple(bool(v) for v in col) for col in np.asarray(p.keep, dtype=bool)[pick].T),
        **deflection,
    )


def _friction_excess(robot, dataset: DataSet, model) -> np.ndarray | None:
    """(N, dof) what the model's nonlinear friction adds to the linear friction columns on the run's filtered
    rows (the prediction minus the base regressor times the base values); None for a linear model."""
    if model.is_linear:
        return None
    mean, _ = model.dataset_torque(robot, dataset)
    return mean - dataset.W @ np.asarray(model.values, dtype=float)


def _elastic_columns(robot, x: np.ndarray) -> tuple[Series | None, ...]:
    """The columns of the elastic joints (robot.motor_joints); None for the others."""
    return tuple(_rounded(x[:, j]) if j in robot.motor_joints else None for j in range(robot.dof))


def elastic_deflection(robot, processed, values: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray]:
    """Recorded and predicted deflection delta_J = theta_J - q_J of a run in the elastic layout, (N, dof) each on the
    processed grid, joint units; NaN columns for the joints that are not elastic.

    Recorded: the processed motor position minus the processed link position. Predicted: link row J of the elastic
    layout (docs/elastic.md section 2), 0 = L_J beta' + k_J (q_J - theta_J) + d_J (qd_J - thetad_J), where
    L_J beta' is the row times the reported ``values`` without k_J and d_J, evaluated unfiltered at the processed
    states (robid.identification.datasets.elastic_rows): the spring torque the link side needs. Then
    k_J delta_J + d_J delta_J' = L_J beta' (:func:`deflection_of_spring_torque`): damping included, not the
    quasi-static L_J beta' / k_J. A negative identified damping (noise about zero) counts as zero, for which the
    equation has a stable solution; without a positive identified stiffness nothing is predicted (NaN)."""
    from robid.elastic.motor_encoders_only import spring_parameters

    W, _, _ = elastic_rows(robot, processed, source)
    measured = np.full(np.shape(processed.q), np.nan)
    predicted = np.full(np.shape(processed.q), np.nan)
    for j, (k_index, d_index) in spring_parameters(robot).items():
        spring = [k_index] if d_index is None else [k_index, d_index]  # d: with the term damping
        stiffness = float(values[k_index])
        damping = 0.0 if d_index is None else max(float(values[d_index]), 0.0)
        measured[:, j] = np.asarray(processed.theta)[:, j] - np.asarray(processed.q)[:, j]
        if stiffness > 0:
            spring_torque = np.delete(W[:, j], spring, axis=1) @ np.delete(values, spring)
            predicted[:, j] = deflection_of_spring_torque(spring_torque, stiffness, damping, processed.sample_rate)
    return measured, predicted


def deflection_of_spring_torque(torque: np.ndarray, stiffness: float, damping: float, rate: float) -> np.ndarray:
    """The deflection delta with stiffness delta + damping delta' = torque on a uniform grid of ``rate`` Hz: the
    first-order low-pass 1 / (stiffness + i w damping) per harmonic, time constant damping / stiffness, integrated
    by the trapezoidal rule (bilinear transform) from the quasi-static value torque / stiffness at the first
    sample. On a periodic grid this start transient decays within a few time constants, after which the result is
    the periodic solution of every harmonic up to the bilinear frequency warping (1e-5 of the peak on the test's
    harmonics, tests/test_elastic_report_deflection.py); with zero damping it is torque / stiffness."""
    numerator = np.array([0.5, 0.5])
    denominator = np.array([0.5 * stiffness + damping * rate, 0.5 * stiffness - damping * rate])
    torque = np.asarray(torque, dtype=float)
    delta, _ = lfilter(numerator, denominator, torque, zi=lfilter_zi(numerator, denominator) * torque[0])
    return delta


def _spectrum(dataset: DataSet, pred: RunPrediction) -> ResidualSpectrum:
    """Spectra of the measured torque and of the residual (unused rows count as zero): up to the Nyquist frequency
    on a periodic grid (the torque keeps the harmonics the processing kept; removed ones are exactly zero), up to
    twice the low-pass cut-off on a filtered record."""
    p = dataset.processed
    used = np.asarray(p.keep, dtype=bool)
    periodic = p.mode in PERIODIC_MODES and p.period is not None
    freq, residual = amplitude_spectrum(np.where(used, dataset.tau - pred.mean, 0.0), p.sample_rate, periodic)
    _, measured = amplitude_spectrum(np.where(used, dataset.tau, 0.0), p.sample_rate, periodic)
    fmax = 2.0 * p.cutoff_hz if p.cutoff_hz and not periodic else float(freq[-1])
    keep = (freq > 0) & (freq <= fmax)
    f, meas = merge_bins(freq[keep], measured[keep], SPECTRUM_BINS)
    _, res = merge_bins(freq[keep], residual[keep], SPECTRUM_BINS)
    return ResidualSpectrum(_rounded(f), _columns(meas), _columns(res), float(fmax))


def held_out_run(robot, record, path: str | Path, *, mapping=None, policy=None) -> RunRecord:
    """A validation run for a file given after identification (module docstring), processed with the options
    the record stores for it (robid.identification.stored_options.options_for_file); ``mapping``/``policy`` override
    the stored mapping and screening. The run's notes say which options were used when they are not the file's
    own."""
    from robid.identification.datasets import load_dataset
    from robid.identification.identified_model import IdentifiedModel
    from robid.identification.stored_options import options_for_file, references_of, stored_screening_policy

    options, stored_mapping, notes = options_for_file(record, str(path))
    dataset = load_dataset(
        robot,
        path,
        mapping=mapping if mapping is not None else stored_mapping,
        options=options,
        policy=policy if policy is not None else stored_screening_policy(record.processing),
        coulomb=record.processing.coulomb,
        static_deflection=record.processing.static_deflection,
    )
    if notes:
        dataset = dataclasses.replace(dataset, notes=(*dataset.notes, *notes))
    model = IdentifiedModel.of_record(record)
    pred = predict_dataset(robot, dataset, model, record.model_error_std or None)
    return run_record(robot, dataset, "validation", model, pred, references=references_of(record.processing))
