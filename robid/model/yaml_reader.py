"""Reader for robid robot files (YAML, schema version 1, interfaces.md section 1.1)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_yaml
from robid.model.robot_model import (
    Compensator,
    Controller,
    Drive,
    Elasticity,
    Friction,
    Joint,
    JointGeometry,
    Limits,
    Link,
    RobotModel,
)
from robid.model.units import parse_quantity
from robid.model.validation import check_link

_TOP_KEYS = {"robid", "name", "gravity", "kinematics", "joints", "description"}
_JOINT_KEYS = {
    "name", "type", "a", "alpha", "d", "offset", "theta", "limits", "link", "drive", "friction",
    "elasticity", "controller", "compensator",
}
_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def read_robot_yaml(path: str | Path, text: str | None = None) -> RobotModel:
    """Parse and validate a robot file; every error names the file and the field."""
    return robot_from_dict(read_yaml(path, text=text), str(path))


def robot_from_dict(data: Any, where: str) -> RobotModel:
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: expected a mapping with keys robid, name, kinematics, joints")
    _check_keys(data, _TOP_KEYS, where)
    version = data.get("robid")
    if version != 1:
        raise RobidInputError(f"{where}: robid: schema version must be 1, got {version!r}")
    kinematics = data.get("kinematics", "dh")
    if kinematics not in ("dh", "mdh"):
        raise RobidInputError(f"{where}: kinematics: unknown keyword {kinematics!r} (expected 'dh' or 'mdh')")
    gravity = _vector(data.get("gravity", [0.0, 0.0, -9.81]), f"{where}: gravity")
    joints_data = data.get("joints")
    if not isinstance(joints_data, list) or not joints_data:
        raise RobidInputError(f"{where}: joints: expected a non-empty list")
    joints = []
    names: set[str] = set()
    for k, jd in enumerate(joints_data):
        jw = f"{where}: joints[{k}]"
        joint = _joint(jd, jw, kinematics)
        if joint.name in names:
            raise RobidInputError(f"{jw}.name: duplicate joint name {joint.name!r}")
        names.add(joint.name)
        joints.append(joint)
    return RobotModel(
        name=str(data.get("name", Path(where).stem)),
        joints=tuple(joints),
        gravity=tuple(gravity),
        kinematics=kinematics,
        source=where,
    )


def _joint(jd: Any, where: str, kinematics: str) -> Joint:
    if not isinstance(jd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    _check_keys(jd, _JOINT_KEYS, where)
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
    link = _link(jd.get("link", {}), f"{where}.link")
    return Joint(
        name=name,
        type=jtype,
        geometry=geometry,
        link=link,
        limits=_limits(jd.get("limits", {}), f"{where}.limits", jtype),
        drive=_drive(jd["drive"], f"{where}.drive") if jd.get("drive") is not None else None,
        friction=_friction(jd.get("friction", {}), f"{where}.friction"),
        elasticity=_elasticity(jd["elasticity"], f"{where}.elasticity") if jd.get("elasticity") else None,
        controller=_controller(jd["controller"], f"{where}.controller") if jd.get("controller") else None,
        compensator=_compensator(jd["compensator"], f"{where}.compensator") if jd.get("compensator") else None,
    )


def dh_geometry(
    kinematics: str, jtype: str, a: float, alpha: float, d: float, offset: float, theta: float
) -> JointGeometry:
    """A/axis/B of docs/model.md for standard DH (Rz Tz Tx Rx) and modified DH (Rx Tx Rz Tz)."""
    rx = _rot_x(alpha)
    z = (0.0, 0.0, 1.0)
    if kinematics == "dh":
        if jtype == "revolute":
            return JointGeometry(_IDENTITY, (0.0, 0.0, 0.0), z, rx, (a, 0.0, d), angle_offset=offset)
        return JointGeometry(_rot_z(theta), (0.0, 0.0, 0.0), z, rx, (a, 0.0, 0.0), displacement_offset=d)
    if jtype == "revolute":
        return JointGeometry(rx, (a, 0.0, 0.0), z, _IDENTITY, (0.0, 0.0, d), angle_offset=offset)
    rxz = tuple(tuple(r) for r in (np.array(rx) @ np.array(_rot_z(theta))).tolist())
    return JointGeometry(rxz, (a, 0.0, 0.0), z, _IDENTITY, (0.0, 0.0, 0.0), displacement_offset=d)


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


def _link(ld: Any, where: str) -> Link:
    if not isinstance(ld, dict):
        raise RobidInputError(f"{where}: expected a mapping with mass, com, inertia")
    _check_keys(ld, {"mass", "com", "inertia", "inertia_check"}, where)
    mass = parse_quantity(ld.get("mass", 0.0), f"{where}.mass")
    com = _vector(ld.get("com", [0.0, 0.0, 0.0]), f"{where}.com", "length")
    inertia = ld.get("inertia", [0.0] * 6)
    if not isinstance(inertia, list) or len(inertia) != 6:
        raise RobidInputError(f"{where}.inertia: expected 6 numbers [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]")
    values = tuple(parse_quantity(v, f"{where}.inertia[{k}]") for k, v in enumerate(inertia))
    link = Link(mass=mass, com=tuple(com), inertia_com=values)
    check = ld.get("inertia_check", True)
    if not isinstance(check, bool):
        raise RobidInputError(f"{where}.inertia_check: expected true or false, got {check!r}")
    if check:
        check_link(link, where)
    elif link.mass < 0:
        raise RobidInputError(f"{where}.mass: must be >= 0, got {link.mass}")
    return link


def _limits(ld: Any, where: str, jtype: str) -> Limits:
    if not isinstance(ld, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    _check_keys(ld, {"position", "velocity", "acceleration", "jerk", "torque"}, where)
    position = None
    if ld.get("position") is not None:
        p = ld["position"]
        if not isinstance(p, list) or len(p) != 2:
            raise RobidInputError(f"{where}.position: expected [min, max]")
        lo = parse_quantity(p[0], f"{where}.position[0]")
        hi = parse_quantity(p[1], f"{where}.position[1]")
        if not lo < hi:
            raise RobidInputError(f"{where}.position: min {lo} must be below max {hi}")
        position = (lo, hi)
    values = {}
    for key in ("velocity", "acceleration", "jerk", "torque"):
        if ld.get(key) is not None:
            v = parse_quantity(ld[key], f"{where}.{key}")
            if v <= 0:
                raise RobidInputError(f"{where}.{key}: must be > 0, got {v}")
            values[key] = v
    return Limits(position=position, **values)


def _drive(dd: Any, where: str) -> Drive:
    if not isinstance(dd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    _check_keys(dd, {"gear_ratio", "rotor_inertia", "torque_constant"}, where)
    ratio = parse_quantity(dd.get("gear_ratio", 1.0), f"{where}.gear_ratio")
    if ratio == 0:
        raise RobidInputError(f"{where}.gear_ratio: must not be 0")
    rotor = parse_quantity(dd.get("rotor_inertia", 0.0), f"{where}.rotor_inertia")
    if rotor < 0:
        raise RobidInputError(f"{where}.rotor_inertia: must be >= 0, got {rotor}")
    kt = dd.get("torque_constant")
    kt_value = parse_quantity(kt, f"{where}.torque_constant") if kt is not None else None
    if kt_value is not None and kt_value == 0:
        raise RobidInputError(f"{where}.torque_constant: must not be 0")
    return Drive(gear_ratio=ratio, rotor_inertia=rotor, torque_constant=kt_value)


def _friction(fd: Any, where: str) -> Friction:
    if not isinstance(fd, dict):
        raise RobidInputError(f"{where}: expected a mapping with viscous, coulomb, offset")
    _check_keys(fd, {"viscous", "coulomb", "offset"}, where)
    fv = parse_quantity(fd.get("viscous", 0.0), f"{where}.viscous")
    fc = parse_quantity(fd.get("coulomb", 0.0), f"{where}.coulomb")
    for key, v in (("viscous", fv), ("coulomb", fc)):
        if v < 0:
            raise RobidInputError(f"{where}.{key}: must be >= 0, got {v}")
    return Friction(viscous=fv, coulomb=fc, offset=parse_quantity(fd.get("offset", 0.0), f"{where}.offset"))


def _elasticity(ed: Any, where: str) -> Elasticity:
    if not isinstance(ed, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    _check_keys(ed, {"stiffness", "damping", "link_viscous"}, where)
    if "stiffness" not in ed:
        raise RobidInputError(f"{where}.stiffness: required for an elastic joint")
    k = parse_quantity(ed["stiffness"], f"{where}.stiffness")
    if k <= 0:
        raise RobidInputError(f"{where}.stiffness: must be > 0, got {k}")
    d = parse_quantity(ed.get("damping", 0.0), f"{where}.damping")
    lv = parse_quantity(ed.get("link_viscous", 0.0), f"{where}.link_viscous")
    for key, v in (("damping", d), ("link_viscous", lv)):
        if v < 0:
            raise RobidInputError(f"{where}.{key}: must be >= 0, got {v}")
    return Elasticity(stiffness=k, damping=d, link_viscous=lv)


def _controller(cd: Any, where: str) -> Controller:
    if not isinstance(cd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    _check_keys(cd, {"position_gain", "velocity_gain"}, where)
    for key in ("position_gain", "velocity_gain"):
        if key not in cd:
            raise RobidInputError(f"{where}.{key}: required")
    kp = parse_quantity(cd["position_gain"], f"{where}.position_gain")
    kd = parse_quantity(cd["velocity_gain"], f"{where}.velocity_gain")
    if kp <= 0 or kd < 0:
        raise RobidInputError(f"{where}: position_gain must be > 0 and velocity_gain >= 0")
    return Controller(position_gain=kp, velocity_gain=kd)


_SPRING_KEYS = {"stiffness", "free_length"}
_GAS_KEYS = {"area", "p0", "l0", "v0", "n"}
_FOURIER_KEYS = {"order", "symmetry_angle", "coefficients"}


def _compensator(cd: Any, where: str) -> Compensator:
    if not isinstance(cd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    ctype = cd.get("type")
    if ctype not in ("spring", "gas", "fourier"):
        raise RobidInputError(f"{where}.type: unknown compensator type {ctype!r} (expected spring, gas or fourier)")
    if ctype == "fourier":
        return _fourier_compensator(cd, where)
    required = _SPRING_KEYS if ctype == "spring" else _GAS_KEYS
    _check_keys(cd, {"type", "base_point", "link_point"} | required, where)
    for key in sorted(required | {"base_point", "link_point"}):
        if key not in cd and not (key == "n"):
            raise RobidInputError(f"{where}.{key}: required for a {ctype} compensator")
    values = {k: parse_quantity(cd[k], f"{where}.{k}") for k in required if k in cd}
    if ctype == "gas":
        values.setdefault("n", 1.0)
    for k, v in values.items():
        if k != "p0" and v <= 0:
            raise RobidInputError(f"{where}.{k}: must be > 0, got {v}")
    return Compensator(
        type=ctype,
        base_point=tuple(_vector(cd["base_point"], f"{where}.base_point", "length")),
        link_point=tuple(_vector(cd["link_point"], f"{where}.link_point", "length")),
        **values,
    )


def _fourier_compensator(cd: dict, where: str) -> Compensator:
    _check_keys(cd, {"type"} | _FOURIER_KEYS, where)
    order = cd.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= 12:
        raise RobidInputError(f"{where}.order: expected an integer from 1 to 12, got {order!r}")
    angle = parse_quantity(cd.get("symmetry_angle", 0.0), f"{where}.symmetry_angle")
    coeffs = cd.get("coefficients", [0.0] * order)
    if not isinstance(coeffs, list) or len(coeffs) != order:
        raise RobidInputError(f"{where}.coefficients: expected a list of {order} numbers (N m)")
    values = tuple(parse_quantity(c, f"{where}.coefficients[{k}]") for k, c in enumerate(coeffs))
    return Compensator(type="fourier", order=order, symmetry_angle=angle, coefficients=values)


def _vector(value: Any, where: str, kind: str | None = None) -> list[float]:
    if not isinstance(value, list) or len(value) != 3:
        raise RobidInputError(f"{where}: expected a list of 3 numbers, got {value!r}")
    return [parse_quantity(v, f"{where}[{k}]", kind) for k, v in enumerate(value)]


def _check_keys(data: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise RobidInputError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
