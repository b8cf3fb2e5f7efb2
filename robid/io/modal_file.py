"""Measured modes for the modal-data fit (robid.elastic.modal_fit): CSV or YAML files, checked field by field."""

from __future__ import annotations

from pathlib import Path

from robid.elastic.modal_fit import ModalMeasurement, check_measurements
from robid.errors import RobidInputError
from robid.io.files import read_text, read_yaml


def read_modal_measurements(path, model) -> list[ModalMeasurement]:
    """Measured modes of ``model`` (RobotModel) from a CSV or YAML file (by its suffix).

    CSV: a header row with one column per joint, named as the joint (the pose: rad or m, or with a unit such as
    ``90deg``), ``frequency_hz``, ``damping_ratio`` (a fraction) and optionally ``mode``; one row per measured
    mode; blank lines and lines starting with ``#`` are skipped. YAML: a list, or a mapping with
    ``measurements:``, of mappings with ``pose`` (a list), ``frequency_hz``, ``damping_ratio`` and optionally
    ``mode``. Every value is checked; an error names the file, the line or entry, and the field."""
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        rows = _yaml_rows(path, read_yaml(path, "modal data"), model)
    elif path.suffix.lower() == ".csv":
        rows = _csv_rows(path, read_text(path, "modal data"), model)
    else:
        raise RobidInputError(f"{path}: modal data: expected a .csv or .yaml file")
    if not rows:
        raise RobidInputError(f"{path}: no measured mode in the file")
    measured = [_measurement(where, pose, values) for where, pose, values in rows]
    return check_measurements(model, measured, [where for where, _, _ in rows])


def _measurement(where: str, pose, values: dict) -> ModalMeasurement:
    from robid.model.units import parse_quantity

    for field in ("frequency_hz", "damping_ratio"):
        if values.get(field) in (None, ""):
            raise RobidInputError(f"{where}: {field} missing")
    mode = values.get("mode")
    if mode in (None, ""):
        mode = None
    else:
        number = parse_quantity(mode, f"{where}: mode")
        if number != int(number):
            raise RobidInputError(f"{where}: mode: a whole mode number expected, got {mode!r}")
        mode = int(number)
    return ModalMeasurement(
        pose=tuple(pose),
        frequency_hz=_number(values["frequency_hz"], f"{where}: frequency_hz"),
        damping_ratio=_number(values["damping_ratio"], f"{where}: damping_ratio"),
        mode=mode,
    )


def _number(value, where: str) -> float:
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise RobidInputError(f"{where}: expected a number, got {value!r}") from None


def _csv_rows(path, text: str, model) -> list[tuple[str, list[float], dict]]:
    import csv

    from robid.model.units import parse_quantity

    lines = [(i + 1, line) for i, line in enumerate(text.splitlines())
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return []
    header_line, header = lines[0][0], [c.strip() for c in next(csv.reader([lines[0][1]]))]
    needed = [*model.joint_names, "frequency_hz", "damping_ratio"]
    missing = [c for c in needed if c not in header]
    if missing:
        raise RobidInputError(f"{path}: line {header_line}: header: missing column(s) {', '.join(missing)} "
                              f"(expected {', '.join(needed)} and optionally mode)")
    rows = []
    for number, line in lines[1:]:
        cells = [c.strip() for c in next(csv.reader([line]))]
        where = f"{path}: line {number}"
        if len(cells) != len(header):
            raise RobidInputError(f"{where}: {len(cells)} values for {len(header)} columns")
        values = dict(zip(header, cells, strict=True))
        pose = [parse_quantity(values[j], f"{where}: {j}") for j in model.joint_names]
        rows.append((where, pose, values))
    return rows


def _yaml_rows(path, doc, model) -> list[tuple[str, list[float], dict]]:
    from robid.model.units import parse_quantity

    entries = doc.get("measurements") if isinstance(doc, dict) else doc
    if not isinstance(entries, list):
        raise RobidInputError(f"{path}: expected a list of measured modes (or measurements: [...])")
    rows = []
    for i, entry in enumerate(entries):
        where = f"{path}: measurement {i + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("pose"), list):
            raise RobidInputError(f"{where}: expected a mapping with pose: [...], frequency_hz, damping_ratio")
        pose = [parse_quantity(v, f"{where}: pose value {k + 1}") for k, v in enumerate(entry["pose"])]
        rows.append((where, pose, entry))
    return rows
