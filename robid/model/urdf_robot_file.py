"""Robot files that start from a URDF (``urdf: PATH``; docs/robot-file.md, "Starting from a URDF") or from an MJCF
file (``mjcf: PATH``, MuJoCo; the same section).

The URDF gives the chain, the link inertias, the limits and the ``<dynamics>`` friction
(:func:`robid.model.urdf_reader.read_robot_urdf`); an MJCF file the same plus armature as a drive's rotor inertia
(:func:`robid.model.mjcf_reader.read_robot_mjcf`). The ``joints`` entries of the robot file add to the URDF's joints
by name what a URDF cannot hold -- drives (with a coupled motor), friction models, elasticity, controller gains,
compensators -- and may override limits and link inertial data field by field. Every block is read by the same
parser as in a DH file (:mod:`robid.model._yaml_sections`), with the keys of :mod:`robid.schemas.robot`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from robid.errors import RobidInputError
from robid.io.keys import check_keys, unknown_field_message
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
from robid.model.mjcf_reader import mjcf_identifier, read_robot_mjcf
from robid.model.robot_model import Joint, Limits, Link, RobotModel
from robid.model.urdf_reader import joint_identifier, read_robot_urdf
from robid.schemas.robot import DH_JOINT_FIELDS, DH_TOP_FIELDS, URDF_JOINT_FIELDS

__all__ = ["robot_from_urdf_file"]

#: how messages name the file a robot file starts from
_LABEL = {"urdf": "URDF", "mjcf": "MJCF file"}


def robot_from_urdf_file(data: dict, where: str, folder: Path) -> RobotModel:
    """The robot of a robot file with ``urdf`` or ``mjcf`` (top-level keys already checked): that file's chain with
    the ``joints`` entries applied, ``gravity`` and ``name`` of the file where given. ``folder``: where a relative
    path starts (the robot file's folder). The model's ``source`` is the robot file (``where``), so a record made
    with it reloads the drives too."""
    if "urdf" in data and "mjcf" in data:
        raise RobidInputError(f"{where}: urdf and mjcf: give one of them")
    kind = "urdf" if "urdf" in data else "mjcf"
    label = _LABEL[kind]
    for key in DH_TOP_FIELDS:
        if key in data:
            raise RobidInputError(f"{where}: {key}: not with {kind} (the {label} gives the kinematics); remove one "
                                  "of them")
    if "loops" in data:
        raise RobidInputError(f"{where}: loops: not with {kind} (robid reads a {label} as a serial chain); write the "
                              "closed chain as a DH robot file (docs/robot-file.md, \"Closed chains\")")
    urdf = _urdf_path(data[kind], f"{where}: {kind}", folder, kind)
    if kind == "urdf":
        base = read_robot_urdf(urdf)
    else:
        base = read_robot_mjcf(urdf)
    entries = data.get("joints")
    if entries is None:
        entries = []
    elif not isinstance(entries, list) or not entries:
        raise RobidInputError(f"{where}: joints: expected a non-empty list of {{name, drive, friction, ...}} "
                              "(or no joints key: the URDF alone)")
    joints = list(base.joints)
    index = {j.name: k for k, j in enumerate(joints)}
    fields: dict[str, str] = {}
    for k, entry in enumerate(entries):
        jw = f"{where}: joints[{k}]"
        name = _entry_name(entry, jw, index, urdf, kind)
        if name in fields:
            raise RobidInputError(f"{jw}.name: joint {name!r} already given in {fields[name]}")
        fields[name] = f"joints[{k}]"
        position = index[name]
        joints[position] = _apply(joints[position], entry, jw)
    check_drive_couplings(joints, where, fields)
    gravity = base.gravity
    if "gravity" in data:
        gravity = tuple(parse_vector(data["gravity"], f"{where}: gravity"))
    return RobotModel(
        name=str(data.get("name", Path(where).stem)),
        joints=tuple(joints),
        gravity=gravity,
        kinematics=base.kinematics,
        source=where,
    )


def _urdf_path(value: Any, where: str, folder: Path, kind: str = "urdf") -> Path:
    if not isinstance(value, str) or not value.strip():
        raise RobidInputError(f"{where}: expected the path of a{'n MJCF' if kind == 'mjcf' else ' URDF'} file, "
                              f"got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = folder / path
    if not path.is_file():
        raise RobidInputError(f"{where}: no such {kind.upper()} file {str(path)!r} (a relative path starts at the "
                              f"robot file's folder {str(folder)!r})")
    return path


def _entry_name(entry: Any, where: str, index: dict[str, int], urdf: Path, kind: str = "urdf") -> str:
    """The checked name of a ``joints`` entry: a movable joint of the URDF (or MJCF file), as robid names it."""
    if not isinstance(entry, dict):
        raise RobidInputError(f"{where}: expected a mapping with name and the blocks to add (drive, friction, ...)")
    for key in DH_JOINT_FIELDS:
        if key in entry:
            raise RobidInputError(f"{where}.{key}: not with {kind} (the {_LABEL[kind]} places the joint; allowed: "
                                  f"{', '.join(sorted(URDF_JOINT_FIELDS))})")
    check_keys(entry, URDF_JOINT_FIELDS, where)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise RobidInputError(f"{where}.name: expected the name of a joint of {urdf.name}, got {name!r}")
    if name in index:
        return name
    identifier = joint_identifier(name) if kind == "urdf" else mjcf_identifier(name)
    if identifier in index:
        raise RobidInputError(f"{where}.name: robid names the {kind.upper()} joint {name!r} {identifier!r} "
                              "(characters other than letters, digits and _ become _); write that")
    hint = unknown_field_message(name, index)[len(f"unknown field {name!r} "):]
    raise RobidInputError(f"{where}.name: no movable joint {name!r} in {urdf.name} {hint}")


def _apply(joint: Joint, entry: dict, where: str) -> Joint:
    """``joint`` of the URDF with the blocks of its ``joints`` entry: limits and link merged field by field,
    friction replaced, drive, elasticity, controller and compensator added."""
    changes: dict[str, Any] = {}
    if entry.get("limits") is not None:
        changes["limits"] = _merged_limits(joint.limits, entry["limits"], f"{where}.limits", joint.type)
    if entry.get("link") is not None:
        changes["link"] = _merged_link(joint.link, entry["link"], f"{where}.link")
    if entry.get("friction") is not None:
        changes["friction"] = parse_friction(entry["friction"], f"{where}.friction")
    if entry.get("drive") is not None:
        changes["drive"] = parse_drive(entry["drive"], f"{where}.drive")
    if entry.get("elasticity"):
        changes["elasticity"] = parse_elasticity(entry["elasticity"], f"{where}.elasticity")
    if entry.get("controller"):
        changes["controller"] = parse_controller(entry["controller"], f"{where}.controller")
    if entry.get("compensator"):
        changes["compensator"] = parse_compensator(entry["compensator"], f"{where}.compensator")
    return dataclasses.replace(joint, **changes)


def _merged_limits(urdf: Limits, given: Any, where: str, jtype: str) -> Limits:
    """The URDF's limits with each limit the robot file gives in its place (checked as in a DH file)."""
    parsed = parse_limits(given, where, jtype)
    return dataclasses.replace(urdf, **{f.name: getattr(parsed, f.name) for f in dataclasses.fields(Limits)
                                        if given.get(f.name) is not None})


def _merged_link(urdf: Link, given: Any, where: str) -> Link:
    """The URDF's body (mass, COM, inertia about the COM, in the joint's frame) with the fields the robot file gives
    in their place; the result is checked as a DH file's link (triangle inequalities unless inertia_check: false)."""
    if not isinstance(given, dict):
        raise RobidInputError(f"{where}: expected a mapping with mass, com, inertia")
    merged = {"mass": urdf.mass, "com": list(urdf.com), "inertia": list(urdf.inertia_com)} | given
    return parse_link(merged, where)
