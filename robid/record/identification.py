"""The identification record: everything ``robid identify`` found, as frozen dataclasses; RESULT.json is its JSON.

One record holds the base parameters (value, uncertainty, identifiability class, nominal value, references), the
class of every standard parameter, the estimator's summary and covariance, torque fit metrics, one
:class:`RunRecord` per identification and validation run (how the signal stage processed it, the torque fit on
it, its ranges, and decimated series and a residual spectrum for figures), the physical-consistency check, the
compensator collinearity report and the processing options needed to treat further files the same way.

The report, the CLI summaries, ``predict`` and campaigns read the record's attributes; nothing re-processes
measurements to show a result. Schema versions are ``MAJOR.MINOR``: a minor version only adds keys, so a reader
accepts every minor version of the major versions it knows (1 and 2) and refuses any other (:func:`check_schema`).

JSON layout (docs/interfaces.md section 5 and robid's extensions), the keys in the order written: ``robid`` (1),
``schema``, ``robot``, ``robot_source``, ``terms``, ``joints``, ``method``, ``base_parameters``,
``standard_parameters``, ``correlated_pairs``, ``covariance``, ``estimation``, ``metrics``, ``thresholds``,
``identifiability_notes``, ``processing``, ``compensator``, ``notes``, ``physical_consistency`` and
``consistent_estimate`` when they exist, ``reference_labels``, ``data`` (identification runs),
``validation_data`` (validation runs), and ``validation`` (the validation runs' metrics, derived from
``validation_data``). docs/identification.md describes every key.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.record.codec import dumps, finite, from_plain, loads, to_plain
from robid.record.estimator_comparison import EstimatorComparison
from robid.record.friction_models import FrictionModels
from robid.record.held_friction import HeldFriction
from robid.record.runs import RunRecord, TorqueFit

#: 1.1: motor_joints (the elastic layout); 1.2: the runs' display.deflection_* (elastic) and
#: processing.motor_encoders_only; 1.3: the runs' reference-model fits (references) and processing.references;
#: 1.4: friction_models (nonlinear-friction model selection), estimator_comparison, processing.friction_models and
#: processing.compare_methods; 2.0: the runs' guard (the signal stage's choice per joint between its processing
#: and the plain recipe, robid.signals.guard), friction_models.models, .adopted and .fit (the chosen friction models
#: as the record's model), choices (what identification chose by default, and why). A new major version: the base values
#: of a record that adopted a nonlinear friction model assume it, so a 1.x reader, which would evaluate them with the
#: linear friction alone, must refuse the file; this reader reads 1.x files too (no adopted model). 2.1:
#: model_error_std (every run's prediction band counts the model error). 2.2: held_friction (standstill model).
SCHEMA_VERSION = "2.2"
SCHEMA_MAJOR = 2
#: major versions this reader reads
READABLE_MAJORS = (1, 2)


# ---- parameters ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseParameter:
    """One base parameter: named after the standard parameter it is grouped on (docs/interfaces.md 1.3).

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
class ParameterCorrelation:
    """Two base parameters whose estimates correlate beyond the threshold (``correlation`` in [-1, 1])."""

    first: str
    second: str
    correlation: float | None


@dataclass(frozen=True)
class EstimatedParameter:
    """One parameter of the unconstrained estimate."""

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


# ---- checks -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MovedParameter:
    """A parameter the nearest physically consistent set moves: its estimate and its consistent value."""

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
class CompensatorPartner:
    """A gravity, offset or compensator parameter whose estimate correlates with a compensator parameter's."""

    name: str
    kind: str
    correlation: float | None
    flagged: bool


@dataclass(frozen=True)
class WellIdentifiedCombination:
    """The well-identified combination of a compensator parameter with its collinear partners (docs/compensator.md)."""

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
class CompensatorEntry:
    """Collinearity of one compensator parameter with the gravity-related parameters of its joint; ``summary`` is
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
    partners: tuple[CompensatorPartner, ...]
    group: tuple[str, ...]
    combined: WellIdentifiedCombination | None
    summary: str


@dataclass(frozen=True)
class CompensatorReport:
    """The compensator report of RESULT.json (JSON ``compensator``)."""

    threshold: float
    flagged: bool
    entries: tuple[CompensatorEntry, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReferenceSettings:
    """A reference model as identification loaded it (robid.identification.references): its robot file or
    built-in name, terms, the parameter values that replaced the file's nominal ones, and the armature; what it
    takes to score the reference on another file (schema 1.3)."""

    label: str
    robot: str
    terms: tuple[str, ...]
    parameters: dict[str, float] = field(default_factory=dict)
    armature: tuple[float, ...] = ()
    #: phi1, phi2, phi3 per joint of a sigmoid joint friction (Gaz et al. 2019), or empty
    sigmoid_friction: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True)
class ProcessingSettings:
    """The signal-stage options identification used (``robid.signals.ProcessingOptions`` fields as JSON values),
    per file where a file had its own (keyed by the path as given to identification), the mappings, the row
    screening (``robid.io.screening.ScreeningPolicy`` fields) and the Coulomb columns (``"noise"``: expected sign
    given the velocity noise, or ``"sign"``): what it takes to process another file the same way
    (robid.identification.held_out_run, robid.identification.predict)."""

    options: dict[str, Any]
    per_file: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_file_mapping: dict[str, str] = field(default_factory=dict)
    mapping: str | None = None
    screening: dict[str, Any] = field(default_factory=dict)
    coulomb: str = "noise"
    #: positions read as motor-side and corrected by the static deflection (robid.elastic.static_deflection; 1.1)
    static_deflection: bool = False
    #: positions read as the motor encoders' and link states reconstructed with the identified springs
    #: (robid.elastic.motor_encoders_only; 1.2)
    motor_encoders_only: bool = False
    #: reference models scored on every run (robid.identification.references; 1.3; left out when none)
    references: tuple[ReferenceSettings, ...] = field(default=(), metadata={"omit_empty": True})
    #: candidate friction models compared per joint (1.4; left out when none)
    friction_models: tuple[str, ...] = field(default=(), metadata={"omit_empty": True})
    #: other estimators compared on the validation runs (1.4; left out when none)
    compare_methods: tuple[str, ...] = field(default=(), metadata={"omit_empty": True})


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
    #: elastic layout: the joints that have a motor row after the link rows (docs/elastic.md); empty when rigid
    motor_joints: tuple[str, ...] = ()
    method: str
    base_parameters: tuple[BaseParameter, ...]
    standard_parameters: tuple[StandardParameter, ...]
    correlated_pairs: tuple[ParameterCorrelation, ...]
    covariance: tuple[tuple[float | None, ...], ...]
    estimation: EstimatorSummary
    metrics: TorqueFit
    #: the model error std per joint (drive torque units): what the identification runs' residuals hold beyond their
    #: noise and the parameter uncertainty; every run's prediction band and its inside_band_percent count it
    #: (robid.identification.run_records.model_error_std; 2.1; empty in an older record, whose bands do not)
    model_error_std: tuple[float | None, ...] = field(default=(), metadata={"omit_empty": True})
    thresholds: ClassThresholds
    identifiability_notes: tuple[str, ...] = ()
    processing: ProcessingSettings
    compensator: CompensatorReport | None = None
    notes: tuple[str, ...] = ()
    physical_consistency: PhysicalConsistency | None = field(default=None, metadata={"omit_none": True})
    consistent_estimate: ConsistentEstimateSummary | None = field(default=None, metadata={"omit_none": True})
    #: nonlinear-friction model selection (robid.identification.friction_selection; 1.4; left out when not run)
    friction_models: FrictionModels | None = field(default=None, metadata={"omit_none": True})
    #: the standstill (held) friction per joint (robid.identification.held_friction; 2.2; left out when not run)
    held_friction: HeldFriction | None = field(default=None, metadata={"omit_none": True})
    #: several estimators scored on the validation runs (robid.identification.estimator_comparison; 1.4)
    estimator_comparison: EstimatorComparison | None = field(default=None, metadata={"omit_none": True})
    #: what identification chose where the caller left it open (layout, method, friction models), one line each,
    #: with the reason (2.0; left out when none)
    choices: tuple[str, ...] = field(default=(), metadata={"omit_empty": True})
    reference_labels: tuple[str, ...] = ()
    data: tuple[RunRecord, ...]
    validation_data: tuple[RunRecord, ...] = ()

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
    def sigma_rows(self) -> np.ndarray:
        """Residual std per row of the identification fit (joints, then the motor rows of the elastic layout)."""
        return np.array([np.nan if s is None else s for s in self.estimation.sigma_per_joint], dtype=float)

    @property
    def drive_rows(self) -> list[int]:
        """Per joint, the row that carries its measured drive torque: the motor row of an elastic joint."""
        n = len(self.joints)
        return [n + self.motor_joints.index(j) if j in self.motor_joints else k for k, j in enumerate(self.joints)]

    @property
    def sigma(self) -> np.ndarray:
        """Residual std per joint of the identification fit on its drive torque (NaN where not available)."""
        return self.sigma_rows[self.drive_rows]

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
        """Reference values by label (``reference_labels``), aligned with the base parameters (NaN where a
        parameter has none)."""
        out = {}
        for label in self.reference_labels:
            column = [dict(p.references).get(label) for p in self.base_parameters]
            out[label] = np.array([np.nan if v is None else v for v in column], dtype=float)
        return out

    def with_references(self, label: str, values) -> IdentificationRecord:
        """The record with a reference column ``label`` (values aligned with the base parameters), e.g. the
        virtual robot's ``truth``; written as a key of every base-parameter entry and listed in
        ``reference_labels``. A label may not be one of the entry's own keys."""
        if label in _BASE_PARAMETER_KEYS or not label:
            raise RobidInputError(f"reference label {label!r}: a key of the base-parameter entries; choose another")
        values = list(values)
        if len(values) != len(self.base_parameters):
            raise RobidInputError(f"reference {label}: {len(values)} values for {len(self.base_parameters)} parameters")
        rows = tuple(
            dataclasses.replace(p, references=(*((k, v) for k, v in p.references if k != label), (label, finite(x))))
            for p, x in zip(self.base_parameters, values, strict=True)
        )
        labels = (*(k for k in self.reference_labels if k != label), label)
        return dataclasses.replace(self, base_parameters=rows, reference_labels=labels)

    def with_validation(self, runs) -> IdentificationRecord:
        """The record with ``runs`` (RunRecords of role validation) in place of its validation runs."""
        return dataclasses.replace(self, validation_data=tuple(runs))

    # -- notebooks -----------------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        """Jupyter's view of the record: a compact, self-contained HTML summary (robid.record._html)."""
        from robid.record._html import record_html

        return record_html(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text view (stored next to the HTML one): one line, not the dataclass repr of every series."""
        printer.text(f"<IdentificationRecord robot {self.robot!r}, method {self.method}, "
                     f"{len(self.base_parameters)} base parameters, {len(self.data)} identification and "
                     f"{len(self.validation_data)} validation run(s)>")

    def to_frame(self, what: str = "parameters"):
        """A pandas DataFrame of one part of the record (pandas imported here, so that reading a record stays
        light). ``what``:

        * ``"parameters"``: one row per base parameter: name, expression, grouped, value, std,
          relative_std_percent, class, nominal, correlated_with (tuple), unconstrained_value, then one column per
          reference label (e.g. ``truth``);
        * ``"standard"``: one row per standard parameter: name, structural_class, numerical_class,
          base_parameters (tuple), nominal, consistent_value;
        * ``"fit"``: one row per run and joint: run (position in ``runs``), file, role, joint, rms,
          nrmse_percent, max_error, measured_rms, relative_error_percent, inside_band_percent, mean_model_std;
        * ``"runs"``: one row per run: run, file, role, mode, samples_read, samples, sample_rate_hz, period_s,
          period_source, n_periods, rejected_periods, harmonics (count), cutoff_hz, rows_used, dropped_rows,
          unused_rows, fit_samples, relative_error_norm_percent;
        * ``"friction"``: one row per joint and friction parameter of the identified model: joint, model (linear,
          stribeck, sigmoid; the adopted one), name, value, std, nonlinear.

        A value the record does not hold (``None``) is NaN in a float column (``<NA>`` for the harmonics count)."""
        from robid.record.frames import record_frame

        return record_frame(self, what)

    # -- JSON ----------------------------------------------------------------------------------------------
    def _derived_plain(self) -> dict:
        return {
            "validation": [
                {"file": r.file, **to_plain(r.fit, f"validation_data.{r.file}.fit")} for r in self.validation_data
            ]
        }

    def to_dict(self) -> dict:
        return to_plain(self)

    def to_json(self) -> str:
        """RESULT.json text: objects indented, every list of numbers on one line (robid.record.codec.dumps)."""
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, where: str = "RESULT.json") -> IdentificationRecord:
        """The record of a parsed RESULT.json: schema checked, entries typed and checked against each other
        (robid.record.checks), keys of later minor versions ignored; what is read is a schema-SCHEMA_VERSION
        record and is stamped so."""
        from robid.record.checks import check_record

        check_schema(data, where)
        record = from_plain(cls, data, where)
        labels = set(record.reference_labels)
        rows = tuple(
            dataclasses.replace(p, references=tuple((k, v) for k, v in p.references if k in labels))
            for p in record.base_parameters
        )
        record = dataclasses.replace(record, base_parameters=rows, schema=SCHEMA_VERSION)
        check_record(record, where)
        return record

    @classmethod
    def from_json(cls, text: str, where: str = "RESULT.json") -> IdentificationRecord:
        return cls.from_dict(loads(text, where), where)


_BASE_PARAMETER_KEYS = frozenset(
    f.metadata.get("json", f.name) for f in dataclasses.fields(BaseParameter) if not f.metadata.get("extra")
)


def check_schema(data: Any, where: str) -> None:
    """Refuse what is not a robid RESULT.json of a known major schema version, with one line naming the file."""
    if not isinstance(data, dict) or type(data.get("robid")) is not int or data.get("robid") != 1:
        raise RobidInputError(f"{where}: not a robid RESULT.json (key robid: 1 missing)")
    if "base_parameters" not in data:  # another robid file: a trajectory, a truth file, a design
        keys = ", ".join(sorted(str(k) for k in data)[:6])
        raise RobidInputError(f"{where}: not an identification result (RESULT.json of robid identify has "
                              f"base_parameters; this file has {keys})")
    schema = data.get("schema")
    if schema is None:
        raise RobidInputError(
            f"{where}: no schema version: written by a robid older than the typed record (schema "
            f"{SCHEMA_VERSION}); run robid identify again"
        )
    match = re.fullmatch(r"([1-9][0-9]*)\.(0|[1-9][0-9]*)", schema) if isinstance(schema, str) else None
    if match is None:
        raise RobidInputError(f"{where}: schema {schema!r}: expected a version MAJOR.MINOR such as {SCHEMA_VERSION!r}")
    if int(match.group(1)) not in READABLE_MAJORS:
        raise RobidInputError(
            f"{where}: schema {schema!r} is not readable by this robid (it reads schemas "
            f"{' and '.join(f'{m}.x' for m in READABLE_MAJORS)})"
        )
