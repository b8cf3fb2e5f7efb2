"""Measurement mappings: how a file that is not in the canonical layout becomes the canonical measurement.

A mapping is a small YAML file (docs/mapping-file.md, docs/signals.md section 2) that says where each signal is
(file, ``.mat`` variable, column), in which unit, on which side of the gears, and how currents become torques.
This module only parses and checks the mapping; :mod:`robid.io.measurement_file` applies it. The canonical CSV
of docs/interfaces.md section 3 is read through the same machinery, with a mapping built from its header
(:func:`canonical_mapping`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robid.errors import RobidInputError, RobidOptionError
from robid.io.files import read_yaml
from robid.io.keys import check_field_types
from robid.io.keys import check_keys as _check_keys
from robid.io.mapping_files import design_file, scale_current_gains
from robid.model.units import parse_quantity
from robid.schemas import mapping as schema

#: Signal groups a mapping may define, and the canonical channel prefix of each.
GROUP_PREFIX = {
    "positions": "q",
    "velocities": "qd",
    "accelerations": "qdd",
    "torques": "tau",
    "currents": "i",
    "motor_positions": "theta",
}

#: Unit factors to SI, per kind of signal.
UNITS: dict[str, dict[str, float]] = {
    "time": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
    "positions": {"rad": 1.0, "deg": math.pi / 180.0, "rev": 2.0 * math.pi, "m": 1.0, "mm": 1e-3},
    "velocities": {
        "rad/s": 1.0,
        "deg/s": math.pi / 180.0,
        "rpm": 2.0 * math.pi / 60.0,
        "m/s": 1.0,
        "mm/s": 1e-3,
    },
    "accelerations": {"rad/s^2": 1.0, "deg/s^2": math.pi / 180.0, "m/s^2": 1.0, "mm/s^2": 1e-3},
    "torques": {"Nm": 1.0, "mNm": 1e-3, "kNm": 1e3, "N": 1.0, "kN": 1e3},
    "currents": {"A": 1.0, "mA": 1e-3},
}
UNITS["motor_positions"] = UNITS["positions"]
DEFAULT_UNIT = {
    "time": "s",
    "positions": "rad",
    "motor_positions": "rad",
    "velocities": "rad/s",
    "accelerations": "rad/s^2",
    "torques": "Nm",
    "currents": "A",
}

# the allowed keys, from the typed definition robid.schemas.mapping
_FORMATS = schema.MAPPING.child("format").enum
_READ_KEYS = schema.READ_KEYS
_PART_KEYS = schema.PART_KEYS
_GROUP_KEYS = schema.GROUP_KEYS
_TIME_KEYS = schema.TIME_KEYS
_TOP_KEYS = schema.MAPPING.keys()
_TRANSMISSION_KEYS = schema.TRANSMISSION.keys()


@dataclass(frozen=True)
class ReadOptions:
    """How to read one file. ``format``: csv (delimited), text (whitespace separated) or mat (MATLAB v5)."""

    format: str | None = None  # None: from the file suffix (.mat -> mat, .csv -> csv, else text)
    delimiter: str = ","
    header: bool | None = None  # None: True for csv, False for text
    skip_rows: int = 0
    comment: str | None = None
    values_per_sample: int | None = None  # a flat list of numbers, reshaped (-1, values_per_sample)


@dataclass(frozen=True)
class Part:
    """Some channels of one group, all from one file (or one .mat variable)."""

    columns: tuple[int | str, ...] | None  # 1-based indices or header names; None = every column
    units: tuple[str, ...] | str
    scale: tuple[float, ...] | None = None
    file: str | None = None  # None = the measurement file itself
    variable: str | None = None  # .mat: dotted path, e.g. "rec.act_pos_se_deg"
    read: ReadOptions = ReadOptions()


@dataclass(frozen=True)
class Group:
    """One signal of the canonical form (positions, torques, ...), possibly assembled from several parts."""

    name: str
    parts: tuple[Part, ...]
    side: str = "joint"  # joint | motor
    offset: tuple[float, ...] | None = None
    #: s, how late the recorded channels are (one for all, or one per joint); undone when read (``delay`` field)
    delay: float | tuple[float, ...] = 0.0
    gains: tuple[float, ...] | None = None  # currents: joint torque = gain * current (N m/A, joint side)
    torque_constants: tuple[float, ...] | str | None = None  # currents: motor torque = k_T * current; "robot"
    gain_scale: str | None = None  # currents: the drive-gain file that scaled the gains (robid.io.mapping_files)


@dataclass(frozen=True)
class Transmission:
    """Motor-to-joint transmission theta_motor = N q (+ const); joint torque tau = N^T tau_motor.

    ``gear_ratios`` (diagonal of N) or ``"robot"`` (the robot file's drive gear ratios); ``coupling`` adds
    off-diagonal entries (motor, joint, ratio), 1-based; ``matrix`` gives N whole.
    """

    gear_ratios: tuple[float, ...] | str = "robot"
    coupling: tuple[tuple[int, int, float], ...] = ()
    matrix: tuple[tuple[float, ...], ...] | None = None


@dataclass(frozen=True)
class ChannelMapping:
    """A parsed mapping file (or the mapping implied by a canonical CSV header)."""

    source: str
    groups: dict[str, Group]
    time: Part | None
    rate: float | None = None
    start: float = 0.0
    transmission: Transmission = Transmission()
    allow_constant: tuple[str, ...] = ()
    allow_saturated: tuple[str, ...] = ()
    dof: int | None = None
    read: ReadOptions = ReadOptions()
    description: str = ""
    design: str | None = None  # a published design the record executes once (.mat), relative paths resolved
    topic: str | None = None  # ROS 2 bags: the JointState topic (None: the bag's only one)
    joint_names: dict[str, str] | None = None  # ROS 2 bags: bag joint name -> robot joint name


def read_mapping(path: str | Path) -> ChannelMapping:
    """Parse a mapping file; every error names the file and the key at fault."""
    data = read_yaml(path, "mapping")
    return mapping_from_dict(data, str(path))


def mapping_from_dict(data: Any, where: str) -> ChannelMapping:
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: a mapping file is a YAML mapping with keys robid_mapping, time, ...")
    _check_keys(data, _TOP_KEYS, where)
    check_field_types(data, schema.MAPPING, where)
    if data.get("robid_mapping") != 1:
        raise RobidInputError(f"{where}: robid_mapping: schema version must be 1, got {data.get('robid_mapping')!r}")
    top_read = _read_options(data, where, ReadOptions())
    bag = "topic" in data or "joint_names" in data
    time_spec = data.get("time", {"column": "t"} if bag else None)
    if not isinstance(time_spec, dict):
        raise RobidInputError(f"{where}: time: required, either {{column: ..., unit: s}} or {{rate: HZ}}")
    _check_keys(time_spec, _TIME_KEYS, f"{where}: time")
    rate = None
    time_part = None
    start = 0.0
    if "rate" in time_spec:
        rate = _positive(time_spec["rate"], f"{where}: time.rate")
        start = _number(time_spec.get("start", 0.0), f"{where}: time.start")
        if any(k in time_spec for k in ("column", "columns", "variable")):
            raise RobidInputError(f"{where}: time: give either rate or a time column, not both")
    else:
        if not any(k in time_spec for k in ("column", "columns", "variable")):
            raise RobidInputError(f"{where}: time: give a column (or variable) holding the time, or rate: HZ")
        time_part = _part(time_spec, "time", f"{where}: time", top_read)
        n = None if time_part.columns is None else len(time_part.columns)
        if n not in (None, 1):
            raise RobidInputError(f"{where}: time: exactly one column expected, got {n}")
    groups = {}
    for name in GROUP_PREFIX:
        if name in data and data[name] is not None:
            groups[name] = _group(data[name], name, f"{where}: {name}", top_read)
    if "positions" not in groups and not (bag and not groups):
        raise RobidInputError(f"{where}: positions: required (the link-side joint positions)")
    if "torques" not in groups and "currents" not in groups and not (bag and not groups):
        raise RobidInputError(f"{where}: torques or currents: one of them is required")
    if "torques" in groups and "currents" in groups:
        raise RobidInputError(f"{where}: give torques or currents, not both")
    groups = scale_current_gains(groups, where)
    dof = data.get("dof")
    if dof is not None and (not isinstance(dof, int) or isinstance(dof, bool) or dof < 1):
        raise RobidInputError(f"{where}: dof: expected a positive integer, got {dof!r}")
    return ChannelMapping(
        source=where,
        groups=groups,
        time=time_part,
        rate=rate,
        start=start,
        transmission=_transmission(data.get("transmission"), f"{where}: transmission"),
        allow_constant=_names(data.get("allow_constant", []), f"{where}: allow_constant"),
        allow_saturated=_names(data.get("allow_saturated", []), f"{where}: allow_saturated"),
        dof=dof,
        read=top_read,
        description=str(data.get("description", "")),
        design=design_file(data.get("design"), where),
        topic=_optional_text(data, "topic", "a topic name such as /joint_states", where),
        joint_names=_renames(data.get("joint_names"), f"{where}: joint_names"),
    )


def _renames(raw: Any, where: str) -> dict[str, str] | None:
    """``joint_names:`` {bag joint name: robot joint name}."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise RobidInputError(f"{where}: expected a mapping {{bag joint name: robot joint name}}, got {raw!r}")
    return dict(raw)


_CANONICAL = re.compile(r"^(t|q|qd|qdd|tau|i|theta)(\d+)?$")


def canonical_mapping(names: list[str], dof: int, where: str) -> tuple[ChannelMapping, list[str]]:
    """The mapping implied by a canonical CSV header (docs/interfaces.md section 3).

    Returns the mapping and the list of header columns it does not use (reported as a note, not an error).
    """
    present = {name.strip(): k for k, name in enumerate(names)}
    if "t" not in present:
        raise RobidOptionError(None,
            f"{where}: row 1: no column 't' in the header ({', '.join(names[:8])}"
            f"{', ...' if len(names) > 8 else ''}); the canonical layout needs t, q1..q{dof}, tau1..tau{dof} "
            "(or i1..), or read it with {mapping}"
        )
    used = {"t"}
    groups: dict[str, Group] = {}
    for group, prefix in GROUP_PREFIX.items():
        cols = [f"{prefix}{j}" for j in range(1, dof + 1)]
        have = [c for c in cols if c in present]
        if not have:
            continue
        if len(have) != dof:
            missing = [c for c in cols if c not in present]
            raise RobidInputError(
                f"{where}: row 1: header has {', '.join(have)} but not {', '.join(missing)} "
                f"(the robot has {dof} joints)"
            )
        used.update(cols)
        part = Part(columns=tuple(cols), units=DEFAULT_UNIT[group])
        extra = {"torque_constants": "robot"} if group == "currents" else {}
        groups[group] = Group(name=group, parts=(part,), **extra)
    if "positions" not in groups:
        raise RobidInputError(f"{where}: row 1: header has no q1..q{dof} (joint positions, rad)")
    if "torques" not in groups and "currents" not in groups:
        raise RobidInputError(f"{where}: row 1: header has neither tau1..tau{dof} nor i1..i{dof}")
    notes: list[str] = []
    if "torques" in groups and "currents" in groups:
        del groups["currents"]
        notes.append(f"{where}: currents i1..i{dof} ignored: torques tau1..tau{dof} are used")
    if "motor_positions" in groups:
        groups["motor_positions"] = Group(name="motor_positions", parts=groups["motor_positions"].parts, side="joint")
    unused = [n for n in names if n.strip() not in used]
    mapping = ChannelMapping(
        source="canonical CSV header",
        groups=groups,
        time=Part(columns=("t",), units="s"),
        read=ReadOptions(format="csv", header=True),
    )
    if unused:
        notes.append(f"{where}: columns not used: {', '.join(unused)}")
    return mapping, notes


# ----------------------------------------------------------------------------------------------- helpers
def _read_options(data: dict, where: str, base: ReadOptions) -> ReadOptions:
    fmt = data.get("format", base.format)
    if fmt is not None and fmt not in _FORMATS:
        raise RobidInputError(f"{where}: format: unknown {fmt!r} (expected one of {', '.join(_FORMATS)})")
    delimiter = data.get("delimiter", base.delimiter)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise RobidInputError(f"{where}: delimiter: expected one character, got {delimiter!r}")
    header = data.get("header", base.header)
    if header is not None and not isinstance(header, bool):
        raise RobidInputError(f"{where}: header: expected true or false, got {header!r}")
    skip = data.get("skip_rows", base.skip_rows)
    if not isinstance(skip, int) or isinstance(skip, bool) or skip < 0:
        raise RobidInputError(f"{where}: skip_rows: expected a non-negative integer, got {skip!r}")
    comment = data.get("comment", base.comment)
    if comment is not None and (not isinstance(comment, str) or not comment):
        raise RobidInputError(f"{where}: comment: expected a non-empty string, got {comment!r}")
    vps = data.get("values_per_sample", base.values_per_sample)
    if vps is not None and (not isinstance(vps, int) or isinstance(vps, bool) or vps < 1):
        raise RobidInputError(f"{where}: values_per_sample: expected a positive integer, got {vps!r}")
    return ReadOptions(fmt, delimiter, header, skip, comment, vps)


def _part(spec: dict, group: str, where: str, top_read: ReadOptions) -> Part:
    _check_keys(spec, _TIME_KEYS if group == "time" else _PART_KEYS, where)
    if "column" in spec and "columns" in spec:
        raise RobidInputError(f"{where}: give column or columns, not both")
    cols = spec.get("columns", spec.get("column"))
    columns: tuple[int | str, ...] | None
    if cols is None or cols == "all":
        columns = None
    else:
        items = cols if isinstance(cols, list) else [cols]
        if not items:
            raise RobidInputError(f"{where}: columns: empty list")
        out: list[int | str] = []
        for k, c in enumerate(items):
            if isinstance(c, bool) or not isinstance(c, int | str):
                raise RobidInputError(f"{where}: columns[{k}]: expected a 1-based index or a name, got {c!r}")
            if isinstance(c, int) and c < 1:
                raise RobidInputError(f"{where}: columns[{k}]: indices are 1-based, got {c}")
            out.append(c)
        columns = tuple(out)
    known = UNITS[group]
    unit_spec = spec.get("unit", DEFAULT_UNIT[group])
    unit_list = unit_spec if isinstance(unit_spec, list) else [unit_spec]
    for u in unit_list:
        if u not in known:
            raise RobidInputError(f"{where}: unit: unknown {u!r} for {group} (known: {', '.join(known)})")
    if isinstance(unit_spec, list) and columns is not None and len(unit_spec) != len(columns):
        raise RobidInputError(f"{where}: unit: {len(unit_spec)} units for {len(columns)} columns")
    units: tuple[str, ...] | str = tuple(unit_spec) if isinstance(unit_spec, list) else unit_spec
    scale = None
    if "scale" in spec:
        scale = _numbers(spec["scale"], f"{where}: scale", None if columns is None else len(columns))
    return Part(
        columns=columns,
        units=units,
        scale=scale,
        file=_optional_text(spec, "file", "a path", where),
        variable=_optional_text(spec, "variable", "a dotted name", where),
        read=_read_options(spec, where, top_read),
    )


def _optional_text(spec: dict, key: str, what: str, where: str) -> str | None:
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise RobidInputError(f"{where}: {key}: expected {what}, got {value!r}")
    return value


def _group(spec: Any, name: str, where: str, top_read: ReadOptions) -> Group:
    if not isinstance(spec, dict):
        raise RobidInputError(f"{where}: expected a mapping with columns, unit, ...")
    group_keys = {k: spec[k] for k in _GROUP_KEYS if k in spec}
    if "parts" in spec:
        _check_keys(spec, _GROUP_KEYS, where)
        if not isinstance(spec["parts"], list) or not spec["parts"]:
            raise RobidInputError(f"{where}: parts: expected a non-empty list")
        parts = []
        for k, p in enumerate(spec["parts"]):
            if not isinstance(p, dict):
                raise RobidInputError(f"{where}: parts[{k}]: expected a mapping")
            parts.append(_part(p, name, f"{where}: parts[{k}]", top_read))
    else:
        _check_keys(spec, _PART_KEYS | _GROUP_KEYS, where)
        part_spec = {k: v for k, v in spec.items() if k not in _GROUP_KEYS}
        parts = [_part(part_spec, name, where, top_read)]
    side = group_keys.get("side", "joint")
    if side not in ("joint", "motor"):
        raise RobidInputError(f"{where}: side: expected 'joint' or 'motor', got {side!r}")
    if name == "currents":
        if side == "motor":
            raise RobidInputError(f"{where}: side: currents are always motor currents; use gains or torque_constants")
        if ("gains" in group_keys) == ("torque_constants" in group_keys):
            raise RobidInputError(
                f"{where}: give exactly one of gains (joint torque per ampere, e.g. identified drive gains) "
                "or torque_constants (list or 'robot'; motor torque per ampere, then the transmission)"
            )
    elif "gains" in group_keys or "torque_constants" in group_keys:
        raise RobidInputError(f"{where}: gains and torque_constants belong to currents only")
    if "offset" in group_keys and name not in ("positions", "motor_positions"):
        raise RobidInputError(f"{where}: offset: only positions and motor_positions take an offset")
    offset = None
    if "offset" in group_keys:
        raw = group_keys["offset"]
        if not isinstance(raw, list):
            raise RobidInputError(f"{where}: offset: expected a list, one value per joint")
        offset = tuple(parse_quantity(v, f"{where}: offset[{k}]") for k, v in enumerate(raw))
    gains = None
    if "gains" in group_keys:
        gains = _numbers(group_keys["gains"], f"{where}: gains", None)
    kt: tuple[float, ...] | str | None = None
    if "torque_constants" in group_keys:
        raw = group_keys["torque_constants"]
        kt = "robot" if raw == "robot" else _numbers(raw, f"{where}: torque_constants", None)
    delay = _delay(group_keys["delay"], f"{where}: delay") if "delay" in group_keys else 0.0
    return Group(name=name, parts=tuple(parts), side=side, offset=offset, delay=delay, gains=gains,
                 torque_constants=kt, gain_scale=group_keys.get("gain_scale"))


def _delay(raw: Any, where: str) -> float | tuple[float, ...]:
    """``delay:`` one time (a number in s, or '3.06ms', '3060 us', '0.00306 s') or a list with one per joint."""
    if isinstance(raw, list):
        if not raw:
            raise RobidInputError(f"{where}: expected a time or a list with one per joint, got an empty list")
        return tuple(_time(v, f"{where}[{k}]") for k, v in enumerate(raw))
    return _time(raw, where)


_TIME = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-z]+)?\s*$")


def _time(value: Any, where: str) -> float:
    if isinstance(value, str):
        match = _TIME.match(value)
        unit = match.group(2) if match else None
        if not match or (unit is not None and unit not in UNITS["time"]):
            raise RobidInputError(
                f"{where}: cannot read {value!r} as a time (a number in s, or with a unit: {', '.join(UNITS['time'])})"
            )
        return float(match.group(1)) * UNITS["time"][unit or "s"]
    return _number(value, where)


def _transmission(spec: Any, where: str) -> Transmission:
    if spec is None:
        return Transmission()
    if not isinstance(spec, dict):
        raise RobidInputError(f"{where}: expected a mapping with gear_ratios, coupling or matrix")
    _check_keys(spec, _TRANSMISSION_KEYS, where)
    if "matrix" in spec:
        if "gear_ratios" in spec or "coupling" in spec:
            raise RobidInputError(f"{where}: give matrix alone, or gear_ratios with optional coupling")
        rows = spec["matrix"]
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
            raise RobidInputError(f"{where}: matrix: expected a square list of lists")
        n = len(rows)
        matrix = tuple(_numbers(r, f"{where}: matrix[{k}]", n) for k, r in enumerate(rows))
        return Transmission(gear_ratios="matrix", matrix=matrix)
    raw = spec.get("gear_ratios", "robot")
    ratios = "robot" if raw == "robot" else _numbers(raw, f"{where}: gear_ratios", None)
    if isinstance(ratios, tuple) and any(r == 0 for r in ratios):
        raise RobidInputError(f"{where}: gear_ratios: a gear ratio cannot be 0")
    coupling = []
    for k, entry in enumerate(spec.get("coupling", []) or []):
        ok = isinstance(entry, list) and len(entry) == 3
        if ok:
            m, j, r = entry
            ok = all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in (m, j))
        if not ok:
            raise RobidInputError(f"{where}: coupling[{k}]: expected [motor, joint, ratio] with 1-based indices")
        coupling.append((m, j, _number(r, f"{where}: coupling[{k}]")))
    return Transmission(gear_ratios=ratios, coupling=tuple(coupling))


def _names(raw: Any, where: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [s.strip() for s in raw.split(",") if s.strip()]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise RobidInputError(f"{where}: expected a list of channel names such as q4, tau2")
    for x in raw:
        if not _CANONICAL.match(x) or x == "t":
            raise RobidInputError(f"{where}: {x!r} is not a channel name (q1, qd1, tau1, i1, theta1, ...)")
    return tuple(raw)


def _number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise RobidInputError(f"{where}: expected a finite number, got {v!r}")
    return float(v)


def _positive(v: Any, where: str) -> float:
    x = _number(v, where)
    if x <= 0:
        raise RobidInputError(f"{where}: must be positive, got {v!r}")
    return x


def _numbers(raw: Any, where: str, n: int | None) -> tuple[float, ...]:
    if not isinstance(raw, list):
        raise RobidInputError(f"{where}: expected a list of numbers")
    if n is not None and len(raw) != n:
        raise RobidInputError(f"{where}: expected {n} numbers, got {len(raw)}")
    return tuple(_number(v, f"{where}[{k}]") for k, v in enumerate(raw))


def parse_channel_list(text: str | None, where: str) -> tuple[str, ...]:
    """Comma-separated channel names from a command-line option (``q4,q5``)."""
    if not text:
        return ()
    return _names(text, where)
