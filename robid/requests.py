"""Requests: what a user asked for, as a plain mapping from any front end, turned into the library's options.

The front ends -- the command line (``robid process``, ``identify``, ``predict``, ``payload identify``), campaign
files, the Python :class:`robid.Campaign` API and fleets (which run campaigns) -- each hold what the user gave as
plain values. This module is the one place that turns them into :class:`robid.signals.ProcessingOptions` and
:class:`robid.io.screening.ScreeningPolicy`: it applies every front-end default once (``PROCESSING_DEFAULTS``,
``SCREENING_DEFAULTS``; the command line shows them in its help), checks each value's type, and words every
error as the front end does, through a :class:`Where` (``--min-speed`` on the command line,
``campaign.yaml: processing.min_speed`` in a campaign file). A default changed here changes every front end alike
(tests/test_requests.py holds one test per front end).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from robid.defaults import DEFAULT_MIN_SPEED, DEFAULT_TORQUE_BAND
from robid.errors import RobidInputError

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


@dataclass(frozen=True)
class Where:
    """How a front end names a field in its messages: ``label(field)``."""

    label: Callable[[str], str]

    @classmethod
    def command_line(cls) -> Where:
        """``--min-speed`` for ``min_speed`` (CLI_FLAGS where the option's name is not the field's)."""
        return cls(lambda field: CLI_FLAGS.get(field, "--" + field.replace("_", "-")))

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
