"""The identification record: everything ``robid identify`` found, as frozen dataclasses; RESULT.json is its JSON.

One record holds the base parameters (value, uncertainty, identifiability class, nominal value, references), the
class of every standard parameter, the estimator's summary and covariance, torque fit metrics, one
:class:`RunRecord` per identification and validation run (how the signal stage processed it, the torque fit on
it, its ranges, and decimated series and a residual spectrum for figures), the physical-consistency check, the
balancer collinearity report and the processing options needed to treat further files the same way.

The report, the CLI summaries, ``predict`` and campaigns read the record's attributes; nothing re-processes
measurements to show a result. Schema versions are ``MAJOR.MINOR``: a minor version only adds keys, so a reader
accepts every minor version of its major version and refuses any other (:func:`check_schema`).

JSON layout (interfaces.md section 5 and robid's extensions), the keys in the order written: ``robid`` (1),
``schema``, ``robot``, ``robot_source``, ``terms``, ``joints``, ``method``, ``base_parameters``,
``standard_parameters``, ``correlated_pairs``, ``covariance``, ``estimation``, ``metrics``, ``data``
(identification runs), ``validation_data`` (validation runs), ``thresholds``, ``identifiability_notes``,
``processing``, ``compensator``, ``notes``, then ``physical_consistency`` and ``consistent_estimate`` when they
exist, and ``validation`` (the validation runs' metrics, derived from ``validation_data``). docs/identification.md
describes every key.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.record.codec import from_plain, to_plain

SCHEMA_VERSION = "1.0"
SCHEMA_MAJOR = 1


def finite(x: Any) -> float | None:
    """``float(x)``, or None when it is missing, NaN or infinite (a record holds no non-finite number)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def finite_tuple(values: Any) -> tuple[float | None, ...]:
    return tuple(finite(v) for v in np.asarray(values, dtype=float).ravel())


# ---- parameters ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseParameter:
    """One base parameter: named after the standard parameter it is grouped on (interfaces.md 1.3).

    ``identifiability`` (JSON ``class``): ``well-identified``, ``poorly-identified`` or ``barely-excited``
    (docs/estimation.md). ``unconstrained_value``: the unconstrained estimate when the reported ``value`` comes
    from another estimator (the physically consistent one). ``references``: other values to compare with, by
    label (e.g. ``truth`` of the virtual robot), written as extra keys of the JSON entry.
    """

    name: str
    expression: str
    value: float
    std: float | None
    relative_std_percent: float | None
    identifiability: str = field(metadata={"json": "class"})
    nominal: float | None
    correlated_with: tuple[str, ...] = ()
    unconstrained_value: float | None = field(default=None, metadata={"omit_none": True})
    references: tuple[tuple[str, float | None], ...] = field(default=(), metadata={"extra": True})

    @property
    def grouped(self) -> bool:
        """True when the base parameter stands for more than its own standard parameter."""
        return "".join(self.expression.split()) != self.name


@dataclass(frozen=True)
class StandardParameter:
    """Class of one standard parameter: structural (``unidentifiable`` / ``grouped`` / ``identifiable``) and,
    unless unidentifiable, the worst numerical class of the base parameters it enters."""

    name: str
    structural_class: str
    numerical_class: str | None
    base_parameters: tuple[str, ...]
    nominal: float | None
    consistent_value: float | None = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True)
class CorrelatedPair:
    first: str
    second: str
    correlation: float | None


@dataclass(frozen=True)
class EstimatedParameter:
    name: str
    value: float | None
    std: float | None
    relative_std_percent: float | None


@dataclass(frozen=True)
class EstimatorSummary:
    """The unconstrained estimator's numbers (JSON ``estimation``): ``sigma_per_joint`` is the residual standard
    deviation per joint (the noise of the prediction bands), ``weights_per_joint`` the row weights used."""

    method: str
    parameters: tuple[EstimatedParameter, ...]
    sigma_per_joint: tuple[float | None, ...]
    weights_per_joint: tuple[float | None, ...]
    condition_number: float | None
    condition_number_scaled: float | None
    dof_residual: int
    converged: bool
    iterations: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassThresholds:
    """The thresholds the identifiability classes were decided with (JSON ``thresholds``)."""

    poor_relative_std_percent: float
    correlation: float


# ---- torque fit ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JointFit:
    """Torque fit of one joint (robid.estimation.metrics): RMS error, NRMSE = 100 RMS(error) / RMS(measured)
    (``relative_error_percent`` is the same number under Mamedov's name), largest error, the measured RMS, the
    share of samples inside the 95 % prediction band and the mean parameter-uncertainty std of the prediction."""

    joint: str
    rms: float | None
    nrmse_percent: float | None
    max_error: float | None
    measured_rms: float | None = None
    relative_error_percent: float | None = None
    inside_band_percent: float | None = None
    mean_model_std: float | None = None


@dataclass(frozen=True)
class TorqueFit:
    """Fit of predicted to measured torque over ``samples`` samples; the norm ratio over all joints."""

    per_joint: tuple[JointFit, ...]
    relative_error_norm_percent: float | None
    samples: int

    def nrmse_percent(self) -> tuple[float | None, ...]:
        return tuple(m.nrmse_percent for m in self.per_joint)


# ---- runs ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseLevels:
    """Noise std per joint, per raw sample and after processing (docs/signals.md), and how it was estimated."""

    method: str
    q_std: tuple[float | None, ...]
    tau_std: tuple[float | None, ...]
    q_std_processed: tuple[float | None, ...]
    qd_std_processed: tuple[float | None, ...]
    qdd_std_processed: tuple[float | None, ...]
    tau_std_processed: tuple[float | None, ...]


@dataclass(frozen=True)
class DroppedSample:
    """A sample removed while reading: 1-based line (text files) or sample index (.mat) and the reason."""

    file: str
    row: int
    sample: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class ProcessingSummary:
    """How the signal stage processed one measurement (also the summary JSON of ``robid process``).

    ``method`` lists every decision, one line each; ``unused_rows_per_joint`` counts the (sample, joint) rows
    the data selection left out; ``segment_s`` is the time span used; ``trimmed_samples`` the filter edges."""

    robid_processed: int = 1
    mode: str
    samples: int
    sample_rate_hz: float
    period_s: float | None
    period_source: str | None
    n_periods: int
    rejected_periods: tuple[int, ...]
    harmonics: tuple[int, ...] | None
    cutoff_hz: float | None
    segment_s: tuple[float, float] | None
    trimmed_samples: tuple[int, int]
    standstill_s: tuple[tuple[float, float], ...]
    unused_rows_per_joint: tuple[int, ...]
    noise: NoiseLevels
    dropped_rows: tuple[DroppedSample, ...]
    samples_read: int
    notes: tuple[str, ...]
    method: tuple[str, ...]

    @property
    def periodic(self) -> bool:
        """True when the processed grid is one (averaged) period: its spectrum has no leakage."""
        return self.mode in ("periodic", "rest-to-rest") and self.period_s is not None


@dataclass(frozen=True)
class JointRange:
    """Range of the processed motion of one joint: position extremes and mean, peak |velocity|, |acceleration|
    and |torque| (SI), over every sample of the run."""

    joint: str
    q_min: float
    q_max: float
    q_mean: float
    qd_peak: float
    qdd_peak: float
    tau_peak: float


@dataclass(frozen=True)
class DisplaySeries:
    """A run's processed series for figures: every ``step``-th sample of the processed grid (at most a few
    thousand), 6 significant digits. Joint-indexed tuples hold one column per joint; ``tau_friction`` and
    ``tau_compensator`` are the predicted torque of the joint's own (ungrouped) friction and balancer parameters
    (None for a joint without); ``used`` marks the rows the data selection kept."""

    step: int
    t: tuple[float, ...]
    q: tuple[tuple[float, ...], ...]
    qd: tuple[tuple[float, ...], ...]
    tau_measured: tuple[tuple[float, ...], ...]
    tau_predicted: tuple[tuple[float, ...], ...]
    tau_std_model: tuple[tuple[float, ...], ...]
    tau_friction: tuple[tuple[float, ...] | None, ...]
    tau_compensator: tuple[tuple[float, ...] | None, ...]
    used: tuple[tuple[bool, ...], ...]

    def array(self, name: str) -> np.ndarray:
        """(n, dof) array of a joint-indexed series; NaN columns for joints without it."""
        columns = getattr(self, name)
        n = len(self.t)
        return np.column_stack([np.full(n, np.nan) if c is None else np.asarray(c, dtype=float) for c in columns])


@dataclass(frozen=True)
class ResidualSpectrum:
    """Single-sided amplitude spectra of the measured torque and of the residual of a run, per joint, up to
    ``max_frequency_hz`` (bins merged by their maximum where there were more than a few thousand)."""

    frequency_hz: tuple[float, ...]
    measured: tuple[tuple[float, ...], ...]
    residual: tuple[tuple[float, ...], ...]
    max_frequency_hz: float


@dataclass(frozen=True, kw_only=True)
class RunRecord(ProcessingSummary):
    """One measurement as identification used it: the processing summary (flattened into the JSON entry),
    the file, its role, the rows in the least squares, the torque fit of the reported values on it, the ranges
    of its motion, and series and a residual spectrum for figures. ``notes`` are those of reading, processing and
    forming the least-squares block."""

    file: str
    role: str  # "identification" | "validation"
    rows_used: int
    fit: TorqueFit
    ranges: tuple[JointRange, ...]
    display: DisplaySeries
    spectrum: ResidualSpectrum | None = None

    @property
    def label(self) -> str:
        return f"{self.role}: {Path(self.file).name}"


# ---- checks -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MovedParameter:
    name: str
    value: float | None
    nearest_consistent: float | None


@dataclass(frozen=True)
class PhysicalConsistency:
    """Whether the unconstrained estimate (``of``) has a physically consistent standard set, and if not, whether
    the nearest consistent one lies within its uncertainty (Mahalanobis distance; docs/estimation.md)."""

    of: str
    consistent: bool | None
    solved: bool
    statistically_compatible: bool | None
    mahalanobis: float | None
    moved: tuple[MovedParameter, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConsistentEstimateSummary:
    """The physically consistent estimate (method ``consistent``): whether the semidefinite programme solved."""

    method: str
    solved: bool
    status: str
    solver: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class BalancerPartner:
    name: str
    kind: str
    correlation: float | None
    flagged: bool


@dataclass(frozen=True)
class CombinedQuantity:
    """The well-identified combination of a balancer parameter with its collinear partners (docs/compensator.md)."""

    expression: str
    names: tuple[str, ...]
    coefficients: tuple[float | None, ...]
    value: float | None
    std: float | None
    relative_std_percent: float | None
    std_alone: float | None
    std_ratio: float | None
    multiple_correlation: float | None


@dataclass(frozen=True)
class BalancerEntry:
    """Collinearity of one balancer parameter with the gravity-related parameters of its joint; ``summary`` is
    the one line ``robid identify`` prints."""

    name: str
    joint: str | None
    value: float | None
    std: float | None
    relative_std_percent: float | None
    flagged: bool
    flagged_pairs: tuple[str, ...]
    multiple_correlation: float | None
    static_correlation: float | None
    partners: tuple[BalancerPartner, ...]
    group: tuple[str, ...]
    combined: CombinedQuantity | None
    summary: str


@dataclass(frozen=True)
class BalancerCollinearity:
    """The balancer report of RESULT.json (JSON ``compensator``)."""

    threshold: float
    flagged: bool
    entries: tuple[BalancerEntry, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProcessingSettings:
    """The signal-stage options identification used (``robid.signals.ProcessingOptions`` fields as JSON values),
    per file where a file had its own, and the mappings: what it takes to process another file the same way."""

    options: dict[str, Any]
    per_file: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_file_mapping: dict[str, str] = field(default_factory=dict)
    mapping: str | None = None

    def options_for(self, file: str | None) -> dict[str, Any]:
        """The options of ``file`` if it had its own, else the common ones."""
        return self.per_file.get(str(file), self.options) if file is not None else self.options


# ---- the record ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class IdentificationRecord:
    """The result of an identification (module docstring). ``method`` names the estimator of the reported
    ``value``s; ``estimation`` is the unconstrained estimator's summary (the same unless ``consistent``)."""

    robid: int = 1
    schema: str = SCHEMA_VERSION
    robot: str
    robot_source: str
    terms: tuple[str, ...]
    joints: tuple[str, ...]
    method: str
    base_parameters: tuple[BaseParameter, ...]
    standard_parameters: tuple[StandardParameter, ...]
    correlated_pairs: tuple[CorrelatedPair, ...]
    covariance: tuple[tuple[float | None, ...], ...]
    estimation: EstimatorSummary
    metrics: TorqueFit
    data: tuple[RunRecord, ...]
    validation_data: tuple[RunRecord, ...] = ()
    thresholds: ClassThresholds
    identifiability_notes: tuple[str, ...] = ()
    processing: ProcessingSettings
    compensator: BalancerCollinearity | None = None
    notes: tuple[str, ...] = ()
    physical_consistency: PhysicalConsistency | None = field(default=None, metadata={"omit_none": True})
    consistent_estimate: ConsistentEstimateSummary | None = field(default=None, metadata={"omit_none": True})

    _DERIVED_KEYS = ("validation",)

    # -- views ---------------------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.base_parameters)

    @property
    def values(self) -> np.ndarray:
        return np.array([p.value for p in self.base_parameters], dtype=float)

    @property
    def std(self) -> np.ndarray:
        return np.array([np.nan if p.std is None else p.std for p in self.base_parameters], dtype=float)

    @property
    def covariance_matrix(self) -> np.ndarray:
        return np.array([[np.nan if v is None else v for v in row] for row in self.covariance], dtype=float)

    @property
    def sigma(self) -> np.ndarray:
        """Residual std per joint of the identification fit (0 where not available)."""
        return np.array([0.0 if s is None else s for s in self.estimation.sigma_per_joint], dtype=float)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return self.data + self.validation_data

    def value(self, name: str) -> float:
        return self.parameter(name).value

    def parameter(self, name: str) -> BaseParameter:
        for p in self.base_parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def references(self) -> dict[str, np.ndarray]:
        """Reference values by label, aligned with the base parameters (NaN where a parameter has none)."""
        labels = list(dict.fromkeys(label for p in self.base_parameters for label, _ in p.references))
        out = {}
        for label in labels:
            column = [dict(p.references).get(label) for p in self.base_parameters]
            out[label] = np.array([np.nan if v is None else v for v in column], dtype=float)
        return out

    def with_references(self, label: str, values) -> IdentificationRecord:
        """The record with a reference column ``label`` (values aligned with the base parameters)."""
        values = list(values)
        if len(values) != len(self.base_parameters):
            raise RobidInputError(f"reference {label}: {len(values)} values for {len(self.base_parameters)} parameters")
        rows = tuple(
            dataclasses.replace(p, references=(*((k, v) for k, v in p.references if k != label), (label, finite(x))))
            for p, x in zip(self.base_parameters, values, strict=True)
        )
        return dataclasses.replace(self, base_parameters=rows)

    def with_validation(self, runs) -> IdentificationRecord:
        """The record with ``runs`` (RunRecords of role validation) in place of its validation runs."""
        return dataclasses.replace(self, validation_data=tuple(runs))

    # -- JSON ----------------------------------------------------------------------------------------------
    def _derived_plain(self) -> dict:
        return {
            "validation": [
                {"file": r.file, **to_plain(r.fit, f"validation_data.{r.file}.fit")} for r in self.validation_data
            ]
        }

    def to_dict(self) -> dict:
        return to_plain(self)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, where: str = "RESULT.json") -> IdentificationRecord:
        check_schema(data, where)
        return from_plain(cls, data, where)

    @classmethod
    def from_json(cls, text: str, where: str = "RESULT.json") -> IdentificationRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RobidInputError(f"{where}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
        return cls.from_dict(data, where)


def check_schema(data: Any, where: str) -> None:
    """Refuse what is not a robid RESULT.json of a known major schema version, with one line naming the file."""
    if not isinstance(data, dict) or data.get("robid") != 1:
        raise RobidInputError(f"{where}: not a robid RESULT.json (key robid: 1 missing)")
    schema = data.get("schema")
    if schema is None:
        raise RobidInputError(
            f"{where}: no schema version: written by a robid older than the typed record (schema "
            f"{SCHEMA_VERSION}); run robid identify again"
        )
    major = str(schema).split(".", 1)[0]
    if not major.isdigit() or int(major) != SCHEMA_MAJOR:
        raise RobidInputError(
            f"{where}: schema {schema!r} is not readable by this robid (it reads schema {SCHEMA_MAJOR}.x)"
        )
