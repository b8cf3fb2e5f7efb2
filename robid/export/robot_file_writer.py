"""The identified model as a robot file (YAML, a copy of the robot's own file) or as a JSON document.

YAML (:func:`robot_file_with_model`): the robot file is read as data, every joint keeps its geometry, limits
and any field robid does not identify (a file that starts from a URDF keeps its ``urdf:`` and gets an entry per
joint whose ``link`` block overrides the URDF's), and gets the identified ``link`` (mass, COM, inertia about the COM in
the order [Ixx, Iyy, Izz, Ixy, Ixz, Iyz], docs/model.md), ``drive.rotor_inertia``, ``friction`` (viscous,
coulomb, offset), ``elasticity`` and compensator values (SI units; the file's own unit strings are replaced on
those fields). Comments of the original file are not kept; the header says where the file came from.

JSON (:func:`model_document`): the standard set by name and, per joint, the same blocks as the robot file,
plus the base parameters the set reproduces: for tools that read neither URDF nor robid's robot files.
"""

from __future__ import annotations

from typing import Any

import yaml

from robid.errors import RobidInputError
from robid.io.escaping import one_line
from robid.model.loops import tree_joints
from robid.model.robot_model import Joint, RobotModel


def _link_block(joint: Joint) -> dict[str, Any]:
    link = joint.link
    return {"mass": link.mass, "com": list(link.com), "inertia": list(link.inertia_com)}


def _joint_updates(joint: Joint) -> dict[str, Any]:
    """The identified blocks of one joint, as robot-file fields."""
    out: dict[str, Any] = {"link": _link_block(joint)}
    if joint.drive is not None:
        out["drive"] = {"rotor_inertia": joint.drive.rotor_inertia}
        if joint.drive.coupling is not None:
            out["drive"]["coupling"] = {"viscous": joint.drive.coupling.viscous,
                                        "coulomb": joint.drive.coupling.coulomb}
    out["friction"] = friction_block(joint.friction)
    if joint.elasticity is not None:
        e = joint.elasticity
        out["elasticity"] = {"stiffness": e.stiffness, "damping": e.damping, "link_viscous": e.link_viscous}
    c = joint.compensator
    if c is not None:
        if c.type == "spring":
            out["compensator"] = {"stiffness": c.stiffness, "free_length": c.free_length}
        elif c.type == "gas":
            out["compensator"] = {"p0": c.p0}
        else:
            out["compensator"] = {"coefficients": list(c.coefficients)}
    return out


def friction_block(f) -> dict[str, Any]:
    """The robot file's ``friction`` block of a joint's Friction (docs/robot-file.md): the model and its fields."""
    if f.model == "sigmoid":
        out: dict[str, Any] = {"model": "sigmoid", "viscous": f.viscous, "offset": f.offset,
                               "sigmoids": [{"amplitude": g.amplitude, "slope": g.slope, "offset": g.offset}
                                            for g in f.sigmoids]}
    else:
        out = {"viscous": f.viscous, "coulomb": f.coulomb, "offset": f.offset}
        if f.model == "stribeck":
            out = {"model": "stribeck", **out, "static": f.static, "stribeck_velocity": f.stribeck_velocity}
    if f.ripple is not None:
        out["ripple"] = {"harmonics": list(f.ripple.harmonics), "cos": list(f.ripple.cos), "sin": list(f.ripple.sin)}
    return out


#: blocks replaced whole, not merged key by key (a friction model's fields depend on the model)
_REPLACED = ("friction",)


def _merge(target: dict, updates: dict) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict) and key not in _REPLACED:
            _merge(target[key], value)
        else:
            target[key] = value


def robot_file_with_model(data: Any, model: RobotModel, header: str = "", where: str = "robot file") -> str:
    """YAML text of the robot-file ``data`` (as read) with the identified values of ``model`` (module
    docstring); ``header`` becomes the leading comment."""
    from_urdf = isinstance(data, dict) and "urdf" in data
    if not isinstance(data, dict) or not (isinstance(data.get("joints"), list) or from_urdf):
        raise RobidInputError(f"{where}: not a robot file with a joints list")
    out = dict(data)
    joints = []
    by_name = {j.name: j for j in tree_joints(model)}  # a closed chain's passive joints too
    passive = set(model.chain.passive_names) if model.chain is not None else set()
    entries = list(data.get("joints") or [])
    if from_urdf:  # a robot file on a URDF: every joint gets an entry (its link block overrides the URDF's)
        given = {jd.get("name") for jd in entries if isinstance(jd, dict)}
        entries += [{"name": j.name} for j in model.joints if j.name not in given]
    for k, jd in enumerate(entries):
        name = jd.get("name") if isinstance(jd, dict) else None
        if name not in by_name:
            raise RobidInputError(f"{where}: joints[{k}]: joint {name!r} is not in the identified model")
        entry = dict(jd)
        updates = _joint_updates(by_name[name]) if name not in passive else {"link": _link_block(by_name[name])}
        if isinstance(entry.get("link"), dict) and "inertia_check" in entry["link"]:
            updates["link"]["inertia_check"] = entry["link"]["inertia_check"]
        _merge(entry, updates)
        joints.append(entry)
    out["joints"] = joints
    body = yaml.safe_dump(out, sort_keys=False, default_flow_style=None, width=120)
    lead = "".join(f"# {one_line(line)}".rstrip() + "\n" for line in (header.split("\n") if header else []))
    return lead + body


def model_document(model: RobotModel, standard, header: dict[str, Any]) -> dict[str, Any]:
    """JSON document of the identified model: ``header`` (what, when, how well), the standard set
    (``standard``: :class:`robid.export.standard_set.ExportedStandardSet`), the joints' blocks, and the base
    values it reproduces."""
    return {
        "robid_model_export": 1,
        **header,
        "robot": model.name,
        "gravity": list(model.gravity),
        "standard_parameters": {n: float(v) for n, v in zip(standard.names, standard.values, strict=True)},
        "joints": [{"name": j.name, "type": j.type, **_joint_updates(j)} for j in model.joints],
        **_closed_chain_block(model),
        "base_parameters": {n: float(v) for n, v in zip(standard.base_names, standard.base_target, strict=True)},
    }


def _closed_chain_block(model: RobotModel) -> dict[str, Any]:
    """A closed chain's passive joints (their identified bodies), its loops and the parallelogram relation."""
    chain = model.chain
    if chain is None:
        return {}
    return {
        "passive_joints": [{"name": j.name, "type": j.type, "link": _link_block(j)} for j in chain.passive],
        "loops": [{"name": loop.name, "kind": loop.kind, "passive": list(loop.passive),
                   "close": [{"body": e.body, "xyz": list(e.xyz)} for e in loop.close]} for loop in chain.loops],
        "tree": {"order": list(chain.order), "parents": list(chain.parents)},
        "relation": None if chain.relation is None else [list(r) for r in chain.relation],
    }
