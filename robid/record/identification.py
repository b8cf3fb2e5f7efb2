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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.record.codec import finite, from_plain, to_plain
from robid.record.runs import RunRecord, TorqueFit

SCHEMA_VERSION = "1.0"
SCHEMA_MAJOR = 1


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
class BalancerPartner:
    """A gravity, offset or balancer parameter whose estimate correlates with a balancer parameter's."""

    name: str
    kind: str
    correlation: float | None
    flagged: bool


@dataclass(frozen=True)
class WellIdentifiedCombination:
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
    combined: WellIdentifiedCombination | None
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
    correlated_pairs: tuple[ParameterCorrelation, ...]
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
