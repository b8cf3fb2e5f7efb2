"""Reference values for a result's parameter table (e.g. the virtual robot's truth), from code or from a file.

References are base-parameter values by label, aligned with the base parameters of the result; a parameter
without a reference value is NaN."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_json


def normalise_references(reference, names: Sequence[str], where: str = "reference") -> dict[str, np.ndarray]:
    """``{label: base values}`` with each value a sequence aligned with ``names`` or a mapping name -> value
    (missing names become NaN). Also accepted: ``{"label": ..., "base_values": [...]}`` (RESULT.json style)."""
    if reference is None:
        return {}
    if not isinstance(reference, Mapping):
        raise RobidInputError(f"{where}: expected a mapping label -> base values")
    if "base_values" in reference and "label" in reference:
        reference = {str(reference["label"]): reference["base_values"]}
    out: dict[str, np.ndarray] = {}
    for label, values in reference.items():
        if isinstance(values, Mapping):
            unknown = sorted(set(values) - set(names))
            if unknown:
                raise RobidInputError(f"{where}: {label}: not base parameters of this result: {', '.join(unknown[:5])}")
            arr = np.array([_float(values.get(n), f"{where}: {label}: {n}") for n in names], dtype=float)
        else:
            try:
                arr = np.array([np.nan if v is None else v for v in values], dtype=float).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise RobidInputError(f"{where}: {label}: expected numbers ({exc})") from None
            if arr.shape[0] != len(names):
                raise RobidInputError(f"{where}: {label}: {arr.shape[0]} values for {len(names)} base parameters")
        out[str(label)] = arr
    return out


def _float(v, where: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise RobidInputError(f"{where}: expected a number, got {v!r}")
    return float(v)


def read_truth_file(path: str | Path, robot) -> dict[str, np.ndarray]:
    """A reference file for the parameter table, label ``truth``. Accepted layouts (JSON):

    * the virtual robot's truth (``robid simulate --truth``): ``{"parameters": {standard name: value}}`` --
      converted to base values with the robot's grouping;
    * ``{"base_parameters": {base name: value}}`` or ``[{"name": ..., "value": ...}]``;
    * ``{"label": ..., "base_values": [...]}`` aligned with the base parameters.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise RobidInputError(f"{path}: expected a JSON object")
    base = robot.base_parameters()
    label = str(data.get("label") or "truth")
    if label.startswith("truth"):
        label = "truth"
    if "base_values" in data:
        return normalise_references({label: data["base_values"]}, base.names, str(path))
    if "base_parameters" in data:
        bp = data["base_parameters"]
        if isinstance(bp, list):
            try:
                bp = {p["name"]: p["value"] for p in bp}
            except (KeyError, TypeError):
                raise RobidInputError(f"{path}: base_parameters: expected entries with name and value") from None
        return normalise_references({label: bp}, base.names, str(path))
    if isinstance(data.get("parameters"), dict):
        from robid.simulation.truth import parameters_for

        truth = data["parameters"]
        for k, v in truth.items():
            _float(v, f"{path}: parameters: {k}")
        try:
            standard = parameters_for(robot.parameter_names, truth)
        except KeyError as exc:
            raise RobidInputError(f"{path}: parameters: {exc.args[0]}") from None
        return {label: base.values(standard)}
    raise RobidInputError(f"{path}: no parameters, base_parameters or base_values: not a truth/reference file")
