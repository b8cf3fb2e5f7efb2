"""Requests: what a user asked for, as a plain mapping from any front end, turned into the library's options.

The front ends -- the command line (``robid process``, ``identify``, ``predict``, ``payload identify``), campaign
files, the Python :class:`robid.Campaign` API and fleets (which run campaigns) -- each hold what the user gave as
plain values. This module is the one place that turns them into :class:`robid.signals.ProcessingOptions`,
:class:`robid.io.screening.ScreeningPolicy` and the estimator's choices (:class:`EstimatorRequest`): it applies
every front-end default once (``PROCESSING_DEFAULTS``, ``SCREENING_DEFAULTS``, ``IDENTIFICATION_DEFAULTS``; the
command line shows them in its help), checks each value, and words every error as the front end does, through a
:class:`Where` (``--min-speed`` on the command line, ``campaign.yaml: processing.min_speed`` in a campaign file).
A default changed here changes every front end alike (tests/test_requests.py holds one test per front end).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from robid.defaults import (
    DEFAULT_FEEDFORWARD,
    DEFAULT_METHOD,
    DEFAULT_MIN_SPEED,
    DEFAULT_TORQUE_BAND,
    FEEDFORWARD_KINDS,
    FRICTION_CANDIDATES,
    FRICTION_MODELS_AUTO,
    METHODS,
)
from robid.errors import RobidInputError, RobidOptionError

#: the signal stage's defaults for every front end (ProcessingOptions fields); ``decimate`` None is automatic.
#: Fields absent here keep ProcessingOptions' own default (None: chosen from the data).
PROCESSING_DEFAULTS: dict[str, Any] = {
    "mode": "auto",
    "torque_band": DEFAULT_TORQUE_BAND,
    "snr_threshold": 20.0,
    "derivatives": 2,
    "filter_order": 4,
    "decimate": None,
    "reject_periods": True,
    "min_speed": DEFAULT_MIN_SPEED,
    "drop_standstill": False,
    "standstill_speed": 0.01,
}

#: the row checks' defaults while reading (ScreeningPolicy fields)
SCREENING_DEFAULTS: dict[str, Any] = {
    "drop_bad_rows": False,
    "max_drop_fraction": 0.05,
    "max_gap_factor": 10.0,
}

#: the command line's option of each ProcessingOptions / ScreeningPolicy field (where they differ from the field)
CLI_FLAGS = {
    "n_periods": "--periods", "cutoff_hz": "--cutoff", "snr_threshold": "--snr", "reject_periods": "--keep-all-periods",
    "max_drop_fraction": "--max-drop", "max_gap_factor": "--max-gap",
}


#: the campaign file's block of the options the library may name in an error (others: identification)
CAMPAIGN_BLOCKS = {
    **dict.fromkeys(("format", "periods", "rate", "speed_scale"), "export[]"),
    "noise": "measurements.*.simulate",
    **dict.fromkeys(PROCESSING_DEFAULTS, "processing"),
    **dict.fromkeys(SCREENING_DEFAULTS, "screening"),
}


@dataclass(frozen=True)
class Where:
    """How a front end names a field in its messages: ``label(field)`` where the message is about the field,
    ``mention(field)`` where a message about something else mentions it (default: ``label``)."""

    label: Callable[[str], str]
    mention: Callable[[str], str] | None = None

    def words(self, error: RobidOptionError) -> str:
        """The library's option error (named by fields) in this front end's words."""
        return error.worded(self.label, self.mention)

    @classmethod
    def command_line(cls) -> Where:
        """``--min-speed`` for ``min_speed`` (CLI_FLAGS where the option's name is not the field's)."""
        return cls(lambda field: CLI_FLAGS.get(field, "--" + field.replace("_", "-")))

    @classmethod
    def campaign(cls, source: object) -> Where:
        """A campaign file's block of each option the library names: ``campaign.yaml: identification.method``."""
        return cls(lambda field: f"{source}: {CAMPAIGN_BLOCKS.get(field, 'identification')}.{field}",
                   lambda field: f"{field}:")

    @classmethod
    def file(cls, source: object, block: str) -> Where:
        """``campaign.yaml: processing.min_speed``."""
        return cls(lambda field: f"{source}: {block}.{field}")


def processing_request(fields: Mapping[str, Any], where: Where) -> Any:
    """ProcessingOptions from the fields a front end was given, over PROCESSING_DEFAULTS; ``decimate: auto`` is
    the automatic decimation (None). A value of the wrong type or out of range is named in the front end's words."""
    from robid.signals import ProcessingOptions

    values = {**PROCESSING_DEFAULTS, **fields}
    if values.get("decimate") == "auto":
        values["decimate"] = None
    return _build(ProcessingOptions, values, where)


def screening_request(fields: Mapping[str, Any], where: Where) -> Any:
    """ScreeningPolicy from the fields a front end was given, over SCREENING_DEFAULTS (module docstring)."""
    from robid.io.screening import ScreeningPolicy

    values = {**SCREENING_DEFAULTS, **fields}
    if not 0.0 <= float(values["max_drop_fraction"]) <= 1.0:
        raise RobidInputError(f"{where.label('max_drop_fraction')}: a share of the rows 0..1 (0..100 % on the command "
                              f"line), got {values['max_drop_fraction']!r}")
    if not float(values["max_gap_factor"]) > 1.0:
        raise RobidInputError(f"{where.label('max_gap_factor')}: more than 1 median step, got "
                              f"{values['max_gap_factor']!r}")
    return _build(ScreeningPolicy, values, where)


def _build(kind: type, values: Mapping[str, Any], where: Where) -> Any:
    """``kind(**values)``, each field's type checked as the record codec reads it (robid.record.codec.from_plain),
    an unknown field or a wrong type named by ``where``."""
    from robid.record.codec import from_plain

    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise RobidInputError(f"{where.label(unknown[0])}: not an option of {kind.__name__}")
    for name, value in values.items():
        if isinstance(value, (bool, int, float, str, list, tuple, type(None))):
            try:
                from_plain(kind, {name: _plain(value)}, "")
            except RobidInputError as e:
                raise RobidInputError(f"{where.label(name)}: {str(e).split(f'{name}: ', 1)[-1]}") from None
    return kind(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def _plain(value: Any) -> Any:
    """Tuples as the lists a file would hold (from_plain reads JSON-like values)."""
    return list(value) if isinstance(value, tuple) else value


#: the estimator's choices for every front end (robid identify, a campaign's identification block)
IDENTIFICATION_DEFAULTS: dict[str, Any] = {
    "method": DEFAULT_METHOD,
    "friction_models": FRICTION_MODELS_AUTO,
    "compare_methods": (),
    "feedforward": DEFAULT_FEEDFORWARD,
}


@dataclass(frozen=True)
class EstimatorRequest:
    """What the user chose of the estimator: ``method`` (robid.defaults.METHODS), ``friction_models`` (``auto``
    or a tuple of at least two candidates; () none), ``compare_methods`` and the closed loop's ``feedforward``."""

    method: str
    friction_models: tuple[str, ...] | str
    compare_methods: tuple[str, ...]
    feedforward: str


def estimator_request(fields: Mapping[str, Any], where: Where) -> EstimatorRequest:
    """The estimator's choices from a front end's values over IDENTIFICATION_DEFAULTS; lists may be given as
    comma-separated text (the command line) or sequences (files); each wrong value is named by ``where``."""
    values = {**IDENTIFICATION_DEFAULTS, **{k: v for k, v in fields.items() if v is not None}}
    unknown = sorted(set(values) - set(IDENTIFICATION_DEFAULTS))
    if unknown:
        raise RobidInputError(f"{where.label(unknown[0])}: not an option of the estimator")
    method = values["method"]
    if method not in METHODS:
        raise RobidInputError(f"{where.label('method')}: expected one of {', '.join(METHODS)}, got {method!r}")
    compare = _names(values["compare_methods"], where.label("compare_methods"), "method names")
    if not compare and isinstance(values["compare_methods"], str):
        raise RobidInputError(f"{where.label('compare_methods')}: name at least one method, e.g. wls,didim")
    for m in compare:
        if m not in METHODS:
            raise RobidInputError(f"{where.label('compare_methods')}: {m!r} is not one of {', '.join(METHODS)}")
    if values["feedforward"] not in FEEDFORWARD_KINDS:
        raise RobidInputError(f"{where.label('feedforward')}: expected one of {', '.join(FEEDFORWARD_KINDS)}, got "
                              f"{values['feedforward']!r}")
    return EstimatorRequest(method, _friction_models(values["friction_models"], where.label("friction_models")),
                            compare, values["feedforward"])


def _friction_models(value: Any, label: str) -> tuple[str, ...] | str:
    """``auto``; ``none`` or empty: (); else at least two of FRICTION_CANDIDATES."""
    if isinstance(value, str) and value.strip() in (FRICTION_MODELS_AUTO, "none"):
        return FRICTION_MODELS_AUTO if value.strip() == FRICTION_MODELS_AUTO else ()
    names = _names(value, label, "friction model names (or auto, none)")
    if not names:
        return ()
    unknown = [n for n in names if n not in FRICTION_CANDIDATES]
    if unknown or len(names) < 2:
        raise RobidInputError(f"{label}: expected at least two of {', '.join(FRICTION_CANDIDATES)} (or auto, none), "
                              f"got {', '.join(names)}")
    return names


def _names(value: Any, label: str, what: str) -> tuple[str, ...]:
    """A list of names given as comma-separated text or a sequence of texts."""
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value)
    raise RobidInputError(f"{label}: expected a list of {what}, got {value!r}")
