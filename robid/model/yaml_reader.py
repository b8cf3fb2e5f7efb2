"""Reader for robid robot files (YAML, schema version 1: docs/robot-file.md; design source docs/interfaces.md section
1.1). The allowed keys come from the typed definition :mod:`robid.schemas.robot`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_yaml
from robid.io.keys import check_field_types, check_keys
from robid.model._yaml_loops import closed_chain_model, parse_parents
from robid.model._yaml_sections import (
    check_drive_couplings,
    parse_compensator,
    parse_controller,
    parse_drive,
    parse_elasticity,
    parse_friction,
    parse_limits,
    parse_link,
    parse_vector,
)
from robid.model.robot_model import IDENTITY_ROTATION, Joint, JointGeometry, RobotModel
from robid.model.units import parse_quantity
from robid.model.urdf_robot_file import robot_from_urdf_file
from robid.schemas.robot import JOINT, ROBOT

TOP_KEYS = ROBOT.keys()
JOINT_KEYS = JOINT.keys()


def read_robot_yaml(path: str | Path, text: str | None = None) -> RobotModel:
    """Parse and check a robot file; every error names the file and the field."""
    return robot_from_dict(read_yaml(path, text=text), str(path), Path(path).parent)


def robot_from_dict(data: Any, where: str, folder: str | Path | None = None) -> RobotModel:
    """The robot of a loaded robot file; ``where`` names it in messages; ``folder`` is where a relative ``urdf``
    path starts (default: the folder of ``where``). A file with ``urdf`` or ``mjcf`` is read by
    :func:`robid.model.urdf_robot_file.robot_from_urdf_file`."""
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: expected a mapping with keys robid, name, kinematics (or urdf), joints")
    check_keys(data, TOP_KEYS, where)
    check_field_types(data, ROBOT, where)
    version = data.get("robid")
    if version != 1:
        raise RobidInputError(f"{where}: robid: schema version must be 1, got {version!r}")
    if "urdf" in data or "mjcf" in data:
        return robot_from_urdf_file(data, where, Path(folder) if folder is not None else Path(where).parent)
    kinematics = data.get("kinematics", "dh")
    if kinematics not in ("dh", "mdh"):
        raise RobidInputError(f"{where}: kinematics: unknown keyword {kinematics!r} (expected 'dh' or 'mdh')")
    gravity = parse_vector(data.get("gravity", [0.0, 0.0, -9.81]), f"{where}: gravity")
    joints_data = data.get("joints")
    if not isinstance(joints_data, list) or not joints_data:
        raise RobidInputError(f"{where}: joints: expected a non-empty list (or urdf: a URDF file)")
    joints = []
    names: set[str] = set()
    for k, jd in enumerate(joints_data):
        jw = f"{where}: joints[{k}]"
        joint = _joint(jd, jw, kinematics)
        if joint.name in names:
            raise RobidInputError(f"{jw}.name: duplicate joint name {joint.name!r}")
        names.add(joint.name)
        joints.append(joint)
    check_drive_couplings(joints, where)
    model = RobotModel(
        name=str(data.get("name", Path(where).stem)),
        joints=tuple(joints),
        gravity=tuple(gravity),
        kinematics=kinematics,
        source=where,
    )
    parents = parse_parents(joints_data, where)
    return closed_chain_model(model, parents, data.get("loops"), joints_data, where)


def _joint(jd: Any, where: str, kinematics: str) -> Joint:
    if not isinstance(jd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    check_keys(jd, JOINT_KEYS, where)
    name = jd.get("name")
    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum():
        raise RobidInputError(f"{where}.name: expected an identifier (letters, digits, _), got {name!r}")
    jtype = jd.get("type", "revolute")
    if jtype not in ("revolute", "prismatic"):
        raise RobidInputError(f"{where}.type: unknown joint type {jtype!r} (expected revolute or prismatic)")
    a = parse_quantity(jd.get("a", 0.0), f"{where}.a", "length")
    alpha = parse_quantity(jd.get("alpha", 0.0), f"{where}.alpha", "angle")
    d = parse_quantity(jd.get("d", 0.0), f"{where}.d", "length")
    offset_kind = "angle" if jtype == "revolute" else "length"
    offset = parse_quantity(jd.get("offset", 0.0), f"{where}.offset", offset_kind)
    theta = parse_quantity(jd.get("theta", 0.0), f"{where}.theta", "angle")
    if jtype == "revolute" and "theta" in jd:
        raise RobidInputError(f"{where}.theta: only for prismatic joints (revolute joints use offset)")
    if jtype == "prismatic" and "offset" in jd:
        raise RobidInputError(f"{where}.offset: a prismatic joint's offset is the constant part of d")
    geometry = dh_geometry(kinematics, jtype, a, alpha, d, offset, theta)
    link = parse_link(jd.get("link", {}), f"{where}.link")
    return Joint(
        name=name,
        type=jtype,
        geometry=geometry,
        link=link,
        limits=parse_limits(jd.get("limits", {}), f"{where}.limits", jtype),
        drive=parse_drive(jd["drive"], f"{where}.drive") if jd.get("drive") is not None else None,
        friction=parse_friction(jd.get("friction", {}), f"{where}.friction"),
        elasticity=parse_elasticity(jd["elasticity"], f"{where}.elasticity") if jd.get("elasticity") else None,
        controller=parse_controller(jd["controller"], f"{where}.controller") if jd.get("controller") else None,
        compensator=parse_compensator(jd["compensator"], f"{where}.compensator") if jd.get("compensator") else None,
    )


def dh_geometry(
    kinematics: str, jtype: str, a: float, alpha: float, d: float, offset: float, theta: float
) -> JointGeometry:
    """A/axis/B of docs/model.md for standard DH (Rz Tz Tx Rx) and modified DH (Rx Tx Rz Tz)."""
    rx = _rot_x(alpha)
    z = (0.0, 0.0, 1.0)
    if kinematics == "dh":
        if jtype == "revolute":
            return JointGeometry(IDENTITY_ROTATION, (0.0, 0.0, 0.0), z, rx, (a, 0.0, d), angle_offset=offset)
        return JointGeometry(_rot_z(theta), (0.0, 0.0, 0.0), z, rx, (a, 0.0, 0.0), displacement_offset=d)
    if jtype == "revolute":
        return JointGeometry(rx, (a, 0.0, 0.0), z, IDENTITY_ROTATION, (0.0, 0.0, d), angle_offset=offset)
    rxz = tuple(tuple(r) for r in (np.array(rx) @ np.array(_rot_z(theta))).tolist())
    return JointGeometry(rxz, (a, 0.0, 0.0), z, IDENTITY_ROTATION, (0.0, 0.0, 0.0), displacement_offset=d)


def _rot_x(angle: float) -> tuple[tuple[float, ...], ...]:
    c, s = _cos_sin(angle)
    return ((1.0, 0.0, 0.0), (0.0, c, -s), (0.0, s, c))


def _rot_z(angle: float) -> tuple[tuple[float, ...], ...]:
    c, s = _cos_sin(angle)
    return ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0))


def _cos_sin(angle: float) -> tuple[float, float]:
    """cos and sin with exact 0 and +-1 at multiples of pi/2 (keeps structural zeros exact)."""
    quarter = angle / (math.pi / 2)
    if abs(quarter - round(quarter)) < 1e-12:
        k = int(round(quarter)) % 4
        return [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][k]
    return math.cos(angle), math.sin(angle)
