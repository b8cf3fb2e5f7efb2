"""The identification record as pandas DataFrames (:meth:`IdentificationRecord.to_frame`): one builder per part
of the record. pandas is imported only when a frame is asked for, so that reading a record stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING

from robid.errors import RobidInputError

if TYPE_CHECKING:  # pragma: no cover
    from robid.record.identification import IdentificationRecord

#: columns that hold numbers (None in the record becomes NaN)
FLOAT_COLUMNS = frozenset({
    "value", "std", "relative_std_percent", "nominal", "unconstrained_value", "consistent_value", "rms",
    "nrmse_percent", "max_error", "measured_rms", "relative_error_percent", "inside_band_percent", "mean_model_std",
    "sample_rate_hz", "period_s", "cutoff_hz", "relative_error_norm_percent",
})


def record_frame(record: IdentificationRecord, what: str = "parameters"):
    """The DataFrame of ``what`` (see :meth:`IdentificationRecord.to_frame`)."""
    import pandas as pd

    builders = {"parameters": _parameters, "standard": _standard, "fit": _fit, "runs": _runs, "friction": _friction}
    if what not in builders:
        raise RobidInputError(f"to_frame: what={what!r}: expected one of {', '.join(builders)}")
    columns, rows = builders[what](record)
    frame = pd.DataFrame(rows, columns=columns)
    types = {c: float for c in columns if c in FLOAT_COLUMNS or c in record.reference_labels}
    if "harmonics" in columns:  # a count, missing for a run that was low-passed instead
        types["harmonics"] = "Int64"
    return frame.astype(types)


def _parameters(record: IdentificationRecord) -> tuple[list[str], list[list]]:
    labels = list(record.reference_labels)
    columns = ["name", "expression", "grouped", "value", "std", "relative_std_percent", "class", "nominal",
               "correlated_with", "unconstrained_value", *labels]
    rows = [
        [p.name, p.expression, p.grouped, p.value, p.std, p.relative_std_percent, p.identifiability, p.nominal,
         p.correlated_with, p.unconstrained_value, *(dict(p.references).get(label) for label in labels)]
        for p in record.base_parameters
    ]
    return columns, rows


def _standard(record: IdentificationRecord) -> tuple[list[str], list[list]]:
    columns = ["name", "structural_class", "numerical_class", "base_parameters", "nominal", "consistent_value"]
    rows = [
        [p.name, p.structural_class, p.numerical_class, p.base_parameters, p.nominal, p.consistent_value]
        for p in record.standard_parameters
    ]
    return columns, rows


def _fit(record: IdentificationRecord) -> tuple[list[str], list[list]]:
    metrics = ["rms", "nrmse_percent", "max_error", "measured_rms", "relative_error_percent",
               "inside_band_percent", "mean_model_std"]
    rows = [
        [k, run.file, run.role, m.joint, *(getattr(m, name) for name in metrics)]
        for k, run in enumerate(record.runs)
        for m in run.fit.per_joint
    ]
    return ["run", "file", "role", "joint", *metrics], rows


def _runs(record: IdentificationRecord) -> tuple[list[str], list[list]]:
    columns = ["run", "file", "role", "mode", "samples_read", "samples", "sample_rate_hz", "period_s",
               "period_source", "n_periods", "rejected_periods", "harmonics", "cutoff_hz", "rows_used",
               "dropped_rows", "unused_rows", "fit_samples", "relative_error_norm_percent"]
    rows = [
        [k, r.file, r.role, r.mode, r.samples_read, r.samples, r.sample_rate_hz, r.period_s, r.period_source,
         r.n_periods, len(r.rejected_periods), None if r.harmonics is None else len(r.harmonics), r.cutoff_hz,
         r.rows_used, len(r.dropped_rows), sum(r.unused_rows_per_joint), r.fit.samples,
         r.fit.relative_error_norm_percent]
        for k, r in enumerate(record.runs)
    ]
    return columns, rows


def _friction(record: IdentificationRecord) -> tuple[list[str], list[list]]:
    """One row per joint and friction parameter of the identified model: the linear ones (fv, fc, f0: base
    parameters that stand alone) and, where an adopted model is not linear, its own (fs, vs, sigmoids, ripple)."""
    fm = record.friction_models
    adopted = fm is not None and fm.adopted
    models = {m.joint: m for m in fm.models} if adopted else {}
    extra = dict(zip(fm.fit.names, zip(fm.fit.values, fm.fit.nonlinear, strict=True), strict=True)) \
        if adopted and fm.fit is not None else {}
    stds = {p.name: p.std for p in fm.parameters} if adopted else {}
    by_name = {p.name: p for p in record.base_parameters}
    rows = []
    for joint in record.joints:
        m = models.get(joint)
        label = "linear" if m is None else m.model + (f" x{m.sigmoids}" if m.model == "sigmoid" and m.sigmoids > 1
                                                      else "") + (" + ripple" if m and m.ripple else "")
        for prefix in ("fv", "fc", "f0"):
            p = by_name.get(f"{prefix}_{joint}")
            if p is not None and "".join(p.expression.split()) == p.name:
                rows.append([joint, label, p.name, p.value, p.std, False])
        for name, (value, nonlinear) in extra.items():
            if name.endswith(f"_{joint}") and name not in by_name:
                rows.append([joint, label, name, value, stds.get(name), nonlinear])
    return ["joint", "model", "name", "value", "std", "nonlinear"], rows
