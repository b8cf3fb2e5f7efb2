"""The sections of a joint entry in a robot file (docs/robot-file.md; design source docs/interfaces.md section 1.1):
link, limits, drive, friction, elasticity, controller and compensator, each checked field by field; every error
names the file and field. The allowed keys come from the typed definition :mod:`robid.schemas.robot`."""

from __future__ import annotations

import logging
from typing import Any

from robid.errors import RobidInputError
from robid.io.keys import check_keys
from robid.model.checks import check_link
from robid.model.robot_model import (
    Compensator,
    Controller,
    Drive,
    DriveCoupling,
    Elasticity,
    Friction,
    FrictionRipple,
    FrictionSigmoid,
    Limits,
    Link,
)
from robid.model.units import parse_quantity
from robid.schemas import robot as schema

_log = logging.getLogger(__name__)

__all__ = [
    "check_drive_couplings", "check_keys", "parse_compensator", "parse_controller", "parse_drive",
    "parse_elasticity", "parse_friction", "parse_limits", "parse_link", "parse_vector",
]

LINK_KEYS = schema.LINK.keys()
LIMIT_KEYS = schema.LIMITS.keys()
DRIVE_KEYS = schema.DRIVE.keys()
COUPLING_KEYS = schema.COUPLING.keys()
SIGMOID_KEYS = schema.SIGMOID.keys()
RIPPLE_KEYS = schema.RIPPLE.keys()
ELASTICITY_KEYS = schema.ELASTICITY.keys()
CONTROLLER_KEYS = schema.CONTROLLER.keys()


def parse_link(ld: Any, where: str) -> Link:
    if not isinstance(ld, dict):
        raise RobidInputError(f"{where}: expected a mapping with mass, com, inertia")
    check_keys(ld, LINK_KEYS, where)
    if "mass" not in ld:  # a plausibility warning (docs/security.md): a forgotten mass changes every torque
        _log.warning(f"{where}: no mass given: the body is taken as massless (write mass: 0 to say so)")
    mass = parse_quantity(ld.get("mass", 0.0), f"{where}.mass")
    com = parse_vector(ld.get("com", [0.0, 0.0, 0.0]), f"{where}.com", "length")
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


def parse_limits(ld: Any, where: str, jtype: str) -> Limits:
    if not isinstance(ld, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    check_keys(ld, LIMIT_KEYS, where)
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


def parse_drive(dd: Any, where: str) -> Drive:
    if not isinstance(dd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    check_keys(dd, DRIVE_KEYS, where)
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
    coupling = parse_drive_coupling(dd["coupling"], f"{where}.coupling") if dd.get("coupling") is not None else None
    return Drive(gear_ratio=ratio, rotor_inertia=rotor, torque_constant=kt_value, coupling=coupling)


def parse_drive_coupling(cd: Any, where: str) -> DriveCoupling:
    """``coupling: {joint: K, ratio: r, viscous: fvm, coulomb: fcm}`` of a drive whose motor angle is
    r_J q_J + r q_K (coupled wrist). That K names another joint of the robot is checked with the whole chain
    (:func:`check_drive_couplings`)."""
    if not isinstance(cd, dict):
        raise RobidInputError(f"{where}: expected a mapping with joint, ratio (and optionally viscous, coulomb)")
    check_keys(cd, COUPLING_KEYS, where)
    for key in ("joint", "ratio"):
        if key not in cd:
            raise RobidInputError(f"{where}.{key}: required for a coupled drive")
    joint = cd["joint"]
    if not isinstance(joint, str) or not joint:
        raise RobidInputError(f"{where}.joint: expected the name of another joint, got {joint!r}")
    ratio = parse_quantity(cd["ratio"], f"{where}.ratio")
    if ratio == 0:
        raise RobidInputError(f"{where}.ratio: must not be 0 (leave the coupling out instead)")
    values = {}
    for key in ("viscous", "coulomb"):
        v = parse_quantity(cd.get(key, 0.0), f"{where}.{key}")
        if v < 0:
            raise RobidInputError(f"{where}.{key}: must be >= 0, got {v}")
        values[key] = v
    return DriveCoupling(joint=joint, ratio=ratio, **values)


def check_drive_couplings(joints, where: str, entries: dict[str, str] | None = None) -> None:
    """Every coupled drive names another joint of the chain (``where``: the file, for the messages; ``entries``:
    the field of each joint's entry by joint name where it is not ``joints[k]`` of the chain, as in a file with
    ``urdf``)."""
    names = [j.name for j in joints]
    for k, joint in enumerate(joints):
        coupling = joint.drive.coupling if joint.drive is not None else None
        if coupling is None:
            continue
        entry = entries.get(joint.name, f"joints[{k}]") if entries is not None else f"joints[{k}]"
        field = f"{where}: {entry}.drive.coupling.joint"
        if coupling.joint == joint.name:
            raise RobidInputError(f"{field}: a drive cannot be coupled to its own joint {joint.name!r}")
        if coupling.joint not in names:
            raise RobidInputError(f"{field}: no joint named {coupling.joint!r} (joints: {', '.join(names)})")


#: the fields of each friction model (``model`` and ``ripple`` belong to all); docs/model.md, "Joint friction"
_FRICTION_FIELDS = {
    model: tuple(k for k in schema.FRICTION.ordered_keys(model) if k not in ("model", "ripple"))
    for model in schema.FRICTION.child("model").enum
}


def parse_friction(fd: Any, where: str) -> Friction:
    """``friction: {model, ...}`` of a joint: ``linear`` (default; viscous, coulomb, offset), ``stribeck`` (also
    static, stribeck_velocity), ``sigmoid`` (viscous, sigmoids, offset), each with an optional ``ripple``
    (:class:`robid.model.robot_model.Friction`)."""
    if not isinstance(fd, dict):
        raise RobidInputError(f"{where}: expected a mapping with viscous, coulomb, offset")
    model = fd.get("model", "linear")
    if model not in _FRICTION_FIELDS:
        raise RobidInputError(f"{where}.model: unknown friction model {model!r} (expected linear, stribeck or sigmoid)")
    every = {k for keys in _FRICTION_FIELDS.values() for k in keys}
    allowed = set(_FRICTION_FIELDS[model]) | {"model", "ripple"}
    for key in fd:
        if key in every and key not in allowed:
            models = [m for m, keys in _FRICTION_FIELDS.items() if key in keys]
            raise RobidInputError(f"{where}.{key}: not a field of the {model} friction model (only of "
                                  f"{', '.join(models)}; the {model} model has {', '.join(_FRICTION_FIELDS[model])})")
    check_keys(fd, allowed, where)
    values = {key: parse_quantity(fd.get(key, 0.0), f"{where}.{key}") for key in ("viscous", "coulomb", "offset")}
    for key in ("viscous", "coulomb"):
        if values[key] < 0:
            raise RobidInputError(f"{where}.{key}: must be >= 0, got {values[key]}")
    extra: dict[str, Any] = {}
    if model == "stribeck":
        for key in ("static", "stribeck_velocity"):
            if key not in fd:
                raise RobidInputError(f"{where}.{key}: required for the stribeck friction model")
        extra["static"] = parse_quantity(fd["static"], f"{where}.static")
        if extra["static"] < 0:
            raise RobidInputError(f"{where}.static: must be >= 0, got {extra['static']}")
        extra["stribeck_velocity"] = parse_quantity(fd["stribeck_velocity"], f"{where}.stribeck_velocity")
        if extra["stribeck_velocity"] <= 0:
            raise RobidInputError(f"{where}.stribeck_velocity: must be > 0 (rad/s or m/s), got "
                                  f"{extra['stribeck_velocity']}")
    elif model == "sigmoid":
        extra["sigmoids"] = _parse_sigmoids(fd.get("sigmoids"), f"{where}.sigmoids")
    if fd.get("ripple") is not None:
        extra["ripple"] = _parse_ripple(fd["ripple"], f"{where}.ripple")
    return Friction(model=model, **values, **extra)


def _parse_sigmoids(sd: Any, where: str) -> tuple[FrictionSigmoid, ...]:
    """``sigmoids: [{amplitude, slope, offset}, ...]`` (Gaz et al. 2019 eq. 3: phi1 N m, phi2 s/rad, phi3 rad/s)."""
    if not isinstance(sd, list) or not sd:
        raise RobidInputError(f"{where}: required for the sigmoid friction model: a list of one or more "
                              "{amplitude, slope, offset}")
    out = []
    for k, item in enumerate(sd):
        at = f"{where}[{k}]"
        if not isinstance(item, dict):
            raise RobidInputError(f"{at}: expected a mapping with amplitude, slope, offset")
        check_keys(item, SIGMOID_KEYS, at)
        for key in ("amplitude", "slope"):
            if key not in item:
                raise RobidInputError(f"{at}.{key}: required")
        amplitude = parse_quantity(item["amplitude"], f"{at}.amplitude")
        slope = item["slope"]
        if isinstance(slope, bool) or not isinstance(slope, int | float):
            raise RobidInputError(f"{at}.slope: expected a number in s/rad (s/m), got {slope!r}")
        slope = parse_quantity(slope, f"{at}.slope")
        if amplitude < 0:
            raise RobidInputError(f"{at}.amplitude: must be >= 0, got {amplitude}")
        if slope <= 0:
            raise RobidInputError(f"{at}.slope: must be > 0 (s/rad), got {slope}")
        out.append(FrictionSigmoid(amplitude, slope, parse_quantity(item.get("offset", 0.0), f"{at}.offset")))
    return tuple(out)


def _parse_ripple(rd: Any, where: str) -> FrictionRipple:
    """``ripple: {harmonics: [1, 2], cos: [...], sin: [...]}``, the Coulomb level's harmonics of the joint position
    (N m; cos and sin default to zeros)."""
    if not isinstance(rd, dict):
        raise RobidInputError(f"{where}: expected a mapping with harmonics, cos, sin")
    check_keys(rd, RIPPLE_KEYS, where)
    harmonics = rd.get("harmonics")
    if (not isinstance(harmonics, list) or not harmonics
            or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in harmonics)):
        raise RobidInputError(f"{where}.harmonics: expected a list of positive integers, got {harmonics!r}")
    if len(set(harmonics)) != len(harmonics):
        raise RobidInputError(f"{where}.harmonics: each harmonic once, got {harmonics!r}")
    coefficients = {}
    for key in ("cos", "sin"):
        value = rd.get(key, [0.0] * len(harmonics))
        if not isinstance(value, list) or len(value) != len(harmonics):
            raise RobidInputError(f"{where}.{key}: expected {len(harmonics)} numbers (N m), one per harmonic")
        coefficients[key] = tuple(parse_quantity(v, f"{where}.{key}[{k}]") for k, v in enumerate(value))
    return FrictionRipple(tuple(harmonics), coefficients["cos"], coefficients["sin"])


def parse_elasticity(ed: Any, where: str) -> Elasticity:
    if not isinstance(ed, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    check_keys(ed, ELASTICITY_KEYS, where)
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


def parse_controller(cd: Any, where: str) -> Controller:
    if not isinstance(cd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    check_keys(cd, CONTROLLER_KEYS, where)
    for key in ("position_gain", "velocity_gain"):
        if key not in cd:
            raise RobidInputError(f"{where}.{key}: required")
    kp = parse_quantity(cd["position_gain"], f"{where}.position_gain")
    kd = parse_quantity(cd["velocity_gain"], f"{where}.velocity_gain")
    if kp <= 0 or kd < 0:
        raise RobidInputError(f"{where}: position_gain must be > 0 and velocity_gain >= 0")
    return Controller(position_gain=kp, velocity_gain=kd)


#: the fields of each compensator type beyond type, base_point and link_point
_GEOMETRY = {"type", "base_point", "link_point"}
_SPRING_KEYS = schema.COMPENSATOR.keys("spring") - _GEOMETRY
_GAS_KEYS = schema.COMPENSATOR.keys("gas") - _GEOMETRY
_FOURIER_KEYS = schema.COMPENSATOR.keys("fourier") - {"type"}


def parse_compensator(cd: Any, where: str) -> Compensator:
    if not isinstance(cd, dict):
        raise RobidInputError(f"{where}: expected a mapping")
    ctype = cd.get("type")
    if ctype not in ("spring", "gas", "fourier"):
        raise RobidInputError(f"{where}.type: unknown compensator type {ctype!r} (expected spring, gas or fourier)")
    if ctype == "fourier":
        return _fourier_compensator(cd, where)
    required = _SPRING_KEYS if ctype == "spring" else _GAS_KEYS
    check_keys(cd, _GEOMETRY | required, where)
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
        base_point=tuple(parse_vector(cd["base_point"], f"{where}.base_point", "length")),
        link_point=tuple(parse_vector(cd["link_point"], f"{where}.link_point", "length")),
        **values,
    )


def _fourier_compensator(cd: dict, where: str) -> Compensator:
    check_keys(cd, {"type"} | _FOURIER_KEYS, where)
    order = cd.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= 12:
        raise RobidInputError(f"{where}.order: expected an integer from 1 to 12, got {order!r}")
    angle = parse_quantity(cd.get("symmetry_angle", 0.0), f"{where}.symmetry_angle")
    coeffs = cd.get("coefficients", [0.0] * order)
    if not isinstance(coeffs, list) or len(coeffs) != order:
        raise RobidInputError(f"{where}.coefficients: expected a list of {order} numbers (N m)")
    values = tuple(parse_quantity(c, f"{where}.coefficients[{k}]") for k, c in enumerate(coeffs))
    return Compensator(type="fourier", order=order, symmetry_angle=angle, coefficients=values)


def parse_vector(value: Any, where: str, kind: str | None = None) -> list[float]:
    if not isinstance(value, list) or len(value) != 3:
        raise RobidInputError(f"{where}: expected a list of 3 numbers, got {value!r}")
    return [parse_quantity(v, f"{where}[{k}]", kind) for k, v in enumerate(value)]

