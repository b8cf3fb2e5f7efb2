"""The drive-gain file (GAINS.yaml) of ``robid payload calibrate-gains``: written atomically, read back with
one-line errors naming the file and the field (docs/payload.md "Drive-gain calibration").

    robid_gains: 1
    robot: ur10e
    joints: [q1, q2, q3, q4, q5, q6]
    scale: [1.0, 1.147, 1.207, 1.108, 1.061, 1.006]      # true torque = scale * measured torque
    std: [null, 0.0013, 0.0015, 0.0024, 0.0025, 0.0018]  # statistical; null: joint not calibrated
    calibrated: [false, true, true, true, true, true]
    mapping_gains: [10.0, 12.27, ...]   # the mapping's current gains times the scale, when it has them
    provenance: {method: ..., loaded: ..., unloaded: ..., mass: 2.805, com: null, data_modified: ..., ...}

``mapping_gains`` are what a user puts into the mapping's ``currents: gains:`` to use the calibration everywhere
(identify, predict, payload identify without --gains); ``scale`` is what ``payload identify --gains`` applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from robid.errors import RobidInputError
from robid.io.files import read_yaml, write_atomic

FORMAT_VERSION = 1


@dataclass(frozen=True)
class GainsFile:
    """A read gains file: ``robot``, ``joints``, ``scale`` (one per joint, positive), ``calibrated``,
    ``provenance`` (a mapping, free-form)."""

    path: str
    robot: str
    joints: tuple[str, ...]
    scale: tuple[float, ...]
    calibrated: tuple[bool, ...]
    provenance: dict


def gains_document(calibration, robot: str, provenance: dict, mapping_gains=None) -> dict:
    """The YAML document of a robid.payload.gains.GainCalibration."""
    doc = {
        "robid_gains": FORMAT_VERSION,
        "robot": str(robot),
        "joints": list(calibration.joint_names),
        "scale": [round(float(x), 6) for x in calibration.scale],
        "std": [None if not ok else round(float(s), 6) for s, ok in zip(calibration.std, calibration.calibrated,
                                                                      strict=True)],
        "calibrated": [bool(x) for x in calibration.calibrated],
    }
    if mapping_gains is not None:
        doc["mapping_gains"] = [round(float(k) * float(g), 6) for k, g in zip(mapping_gains, calibration.scale,
                                                                            strict=True)]
    doc["provenance"] = provenance
    return doc


def write_gains(path: str | Path, document: dict) -> Path:
    """GAINS.yaml, atomically, with a comment line on what the scale means."""
    text = ("# robid drive-gain calibration (robid payload calibrate-gains; docs/payload.md): true joint torque = "
            "scale * measured torque\n" + yaml.safe_dump(document, sort_keys=False, default_flow_style=None,
                                                          width=120))
    return write_atomic(path, text)


def read_gains(path: str | Path, joint_names=None) -> GainsFile:
    """The gains file ``path``; with ``joint_names``, its joints must be the robot's (same order)."""
    where = str(path)
    data = read_yaml(path, "gains file")
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: not a robid gains file (expected a mapping with robid_gains: 1)")
    if data.get("robid_gains") != FORMAT_VERSION:
        raise RobidInputError(f"{where}: robid_gains: expected {FORMAT_VERSION}, got {data.get('robid_gains')!r} "
                              "(is this a file written by robid payload calibrate-gains?)")
    joints = data.get("joints")
    if not isinstance(joints, list) or not joints or not all(isinstance(j, str) for j in joints):
        raise RobidInputError(f"{where}: joints: expected a list of joint names")
    scale = _numbers(data.get("scale"), len(joints), f"{where}: scale")
    calibrated = data.get("calibrated", [True] * len(joints))
    if not isinstance(calibrated, list) or len(calibrated) != len(joints) or not all(
            isinstance(c, bool) for c in calibrated):
        raise RobidInputError(f"{where}: calibrated: expected {len(joints)} true/false values")
    if joint_names is not None and list(joints) != list(joint_names):
        raise RobidInputError(f"{where}: joints: {joints} are not the robot's joints {list(joint_names)}")
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        raise RobidInputError(f"{where}: provenance: expected a mapping")
    return GainsFile(where, str(data.get("robot", "")), tuple(joints), scale, tuple(calibrated), provenance)


def _numbers(values, count: int, where: str) -> tuple[float, ...]:
    """``count`` finite positive numbers."""
    if not isinstance(values, list) or len(values) != count:
        raise RobidInputError(f"{where}: expected a list of {count} numbers (one per joint)")
    out = []
    for k, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise RobidInputError(f"{where}[{k + 1}]: expected a positive number, got {v!r}")
        out.append(float(v))
    return tuple(out)
