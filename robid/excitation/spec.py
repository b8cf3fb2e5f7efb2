"""The design SPEC file (YAML) of ``robid design``; see docs/excitation.md for the reference.

Numbers are SI (rad, rad/s, ...); strings may carry a unit as in robot files ("-90deg", "180deg/s").
Limits not written in the SPEC come from the robot file; position, velocity and acceleration limits must be
known one way or the other. Every error names the SPEC file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.cartesian import CartesianLimit
from robid.excitation.constraints import JointLimitSet
from robid.excitation.criteria import CRITERIA, DEFAULT_CRITERION
from robid.excitation.fourier import minimum_harmonics
from robid.excitation.velocity_floor import DEFAULT_MIN_RMS_VELOCITY
from robid.io.files import read_yaml
from robid.io.keys import check_field_types, check_keys
from robid.model.robot_model import RobotModel
from robid.model.units import parse_quantity
from robid.schemas import excitation as schema

#: the allowed keys, from the typed definition robid.schemas.excitation (docs/excitation-spec.md)
_KEYS = schema.SPEC.keys()
_LIMIT_KEYS = schema.LIMITS.keys()
_CART_KEYS = schema.CARTESIAN.keys()


@dataclass(frozen=True, eq=False)
class DesignSpec:
    harmonics: int
    period: float
    center: list[float] | None = None  # None: middle of the position range
    rest_to_rest: bool = True
    rest_order: int = 4
    criterion: str = DEFAULT_CRITERION
    limits: dict[str, Any] = field(default_factory=dict)  # quantity -> list per joint (SI), as written
    seed: int = 0
    margin: float = 0.05
    starts: int = 4
    grid_points: int = 250
    max_iterations: int = 150
    cartesian: list[dict] = field(default_factory=list)
    raw_weight: float = 1.0
    source: str = "spec"
    raw: dict = field(default_factory=dict)
    min_rms_velocity: float = DEFAULT_MIN_RMS_VELOCITY
    #: the collision section as written (robid.excitation.collision; empty: none)
    collision: dict = field(default_factory=dict)


def read_design_spec(path: str | Path) -> DesignSpec:
    data = read_yaml(path)
    return spec_from_dict(data, str(path))


def _int(data: dict, key: str, where: str, default: int | None, minimum: int) -> int:
    value = data.get(key, default)
    if value is None:
        raise RobidInputError(f"{where}: {key}: missing (an integer >= {minimum})")
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RobidInputError(f"{where}: {key}: expected an integer >= {minimum}, got {value!r}")
    return value


def spec_from_dict(data: Any, where: str = "spec") -> DesignSpec:
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: expected a mapping with at least harmonics, period, limits")
    check_keys(data, _KEYS, where)
    check_field_types(data, schema.SPEC, where)
    harmonics = _int(data, "harmonics", where, None, 1)
    if "period" not in data:
        raise RobidInputError(f"{where}: period: missing (seconds)")
    period = parse_quantity(data["period"], f"{where}: period")
    if period <= 0:
        raise RobidInputError(f"{where}: period: must be positive, got {data['period']!r}")
    rest = data.get("rest_to_rest", True)
    if not isinstance(rest, bool):
        raise RobidInputError(f"{where}: rest_to_rest: expected true or false, got {rest!r}")
    rest_order = _int(data, "rest_order", where, 4, 2)
    if rest and harmonics < minimum_harmonics(rest_order):
        raise RobidInputError(
            f"{where}: harmonics: rest_to_rest of order {rest_order} needs at least "
            f"{minimum_harmonics(rest_order)} harmonics, got {harmonics}"
        )
    criterion = data.get("criterion", DEFAULT_CRITERION)
    if criterion not in CRITERIA:
        raise RobidInputError(f"{where}: criterion: expected one of {', '.join(CRITERIA)}, got {criterion!r}")
    center = _center(data.get("center"), where)
    margin = data.get("margin", 0.05)
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0.0 <= margin < 0.5:
        raise RobidInputError(f"{where}: margin: expected a fraction in [0, 0.5), got {margin!r}")
    seed = _int(data, "seed", where, 0, 0)
    starts = _int(data, "starts", where, 4, 1)
    grid = _int(data, "grid_points", where, 250, 8)
    max_it = _int(data, "max_iterations", where, 150, 1)
    raw_weight = data.get("raw_weight", 1.0)
    if isinstance(raw_weight, bool) or not isinstance(raw_weight, int | float) or not raw_weight > 0:
        raise RobidInputError(f"{where}: raw_weight: expected a positive number, got {raw_weight!r}")
    floor = data.get("min_rms_velocity", DEFAULT_MIN_RMS_VELOCITY)
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0.0 <= floor < 1.0:
        raise RobidInputError(
            f"{where}: min_rms_velocity: expected a fraction of the reachable speed in [0, 1), got {floor!r}"
        )
    limits = _limits(data.get("limits", {}), f"{where}: limits")
    cart = _cartesian(data.get("cartesian", []) or [], where)
    collision = _collision_section(data.get("collision"), f"{where}: collision")
    return DesignSpec(harmonics, period, center, rest, rest_order, criterion, limits, seed, float(margin), starts, grid,
                      max_it, cart, float(raw_weight), where, dict(data), float(floor), collision)


def _center(center: Any, where: str) -> list[float] | None:
    """The spec's ``center`` (one position per joint, units allowed), or None."""
    if center is None:
        return None
    if not isinstance(center, list) or not center:
        raise RobidInputError(f"{where}: center: expected a list with one value per joint")
    return [parse_quantity(v, f"{where}: center[{i}]") for i, v in enumerate(center)]


def _cartesian(cart: Any, where: str) -> list:
    """The spec's ``cartesian`` points, each checked."""
    if not isinstance(cart, list):
        raise RobidInputError(f"{where}: cartesian: expected a list of points")
    for i, c in enumerate(cart):
        _check_cartesian(c, f"{where}: cartesian[{i}]")
    return cart


def _collision_section(data: Any, where: str) -> dict:
    """The collision section, its keys checked (the values: robid.excitation.collision, against the robot)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: expected a mapping (clearance, tool, links, obstacles, self_collision)")
    check_keys(data, schema.COLLISION.keys(), where)
    capsule = schema.CAPSULE.keys()
    if isinstance(data.get("tool"), dict):
        check_keys(data["tool"], capsule, f"{where}.tool")
    for key, keys in (("links", capsule), ("obstacles", schema.OBSTACLE.keys())):
        items = data.get(key) or []
        if not isinstance(items, list):
            raise RobidInputError(f"{where}.{key}: expected a list")
        for k, item in enumerate(items):
            if isinstance(item, dict):
                check_keys(item, keys, f"{where}.{key}[{k}]")
    if not isinstance(data.get("self_collision", False), bool):
        raise RobidInputError(f"{where}.self_collision: expected true or false")
    return dict(data)


def _limits(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RobidInputError(f"{where}: expected a mapping with position, velocity, acceleration")
    check_keys(data, _LIMIT_KEYS, where)
    out: dict[str, Any] = {}
    if "position" in data:
        pos = data["position"]
        if not isinstance(pos, list) or not pos:
            raise RobidInputError(f"{where}.position: expected [[min, max], ...] per joint")
        rows = []
        for i, row in enumerate(pos):
            if not isinstance(row, list) or len(row) != 2:
                raise RobidInputError(f"{where}.position[{i}]: expected [min, max]")
            lo, hi = (parse_quantity(v, f"{where}.position[{i}]") for v in row)
            if not lo < hi:
                raise RobidInputError(f"{where}.position[{i}]: min must be below max, got {row!r}")
            rows.append((lo, hi))
        out["position"] = rows
    for key in ("velocity", "acceleration", "jerk", "torque"):
        if key not in data:
            continue
        value = data[key]
        values = value if isinstance(value, list) else [value]
        parsed = [parse_quantity(v, f"{where}.{key}[{i}]") for i, v in enumerate(values)]
        for i, v in enumerate(parsed):
            if v <= 0:
                raise RobidInputError(f"{where}.{key}[{i}]: must be positive, got {values[i]!r}")
        out[key] = parsed if isinstance(value, list) else parsed[0]
    return out


def _check_cartesian(c: Any, where: str) -> None:
    if not isinstance(c, dict):
        raise RobidInputError(f"{where}: expected a mapping with body, point and box/floor/planes")
    check_keys(c, _CART_KEYS, where)
    if "body" not in c:
        raise RobidInputError(f"{where}.body: missing (joint name or 1-based joint index)")
    if not any(k in c for k in ("box", "floor", "planes")):
        raise RobidInputError(f"{where}: give at least one of box, floor, planes")


def _vector3(value: Any, where: str, allow_none: bool = False) -> list[float]:
    if not isinstance(value, list) or len(value) != 3:
        raise RobidInputError(f"{where}: expected 3 numbers")
    out = []
    for i, v in enumerate(value):
        if v is None and allow_none:
            out.append(np.nan)
        else:
            out.append(parse_quantity(v, f"{where}[{i}]"))
    return out


def cartesian_limits(spec: DesignSpec, model: RobotModel) -> list[CartesianLimit]:
    out = []
    names = model.joint_names
    for i, c in enumerate(spec.cartesian):
        where = f"{spec.source}: cartesian[{i}]"
        body = c["body"]
        if isinstance(body, str):
            if body not in names:
                raise RobidInputError(f"{where}.body: no joint named {body!r} (joints: {', '.join(names)})")
            index = names.index(body)
        elif isinstance(body, int) and not isinstance(body, bool) and 1 <= body <= model.dof:
            index = body - 1
        else:
            raise RobidInputError(f"{where}.body: expected a joint name or an index 1..{model.dof}, got {body!r}")
        point = _vector3(c.get("point", [0, 0, 0]), f"{where}.point")
        lo = hi = None
        if "box" in c:
            box = c["box"]
            if not isinstance(box, dict) or not set(box) <= {"min", "max"}:
                raise RobidInputError(f"{where}.box: expected a mapping with min and/or max")
            if "min" in box:
                lo = [(-np.inf if np.isnan(v) else v) for v in _vector3(box["min"], f"{where}.box.min", True)]
            if "max" in box:
                hi = [(np.inf if np.isnan(v) else v) for v in _vector3(box["max"], f"{where}.box.max", True)]
        planes = []
        if "floor" in c:
            planes.append((np.array([0.0, 0.0, 1.0]), parse_quantity(c["floor"], f"{where}.floor")))
        for k, p in enumerate(c.get("planes") or []):
            if not isinstance(p, dict) or "normal" not in p or "offset" not in p:
                raise RobidInputError(f"{where}.planes[{k}]: expected {{normal: [x, y, z], offset: d}} (n.p >= d)")
            n = np.array(_vector3(p["normal"], f"{where}.planes[{k}].normal"))
            if np.linalg.norm(n) == 0:
                raise RobidInputError(f"{where}.planes[{k}].normal: must not be zero")
            planes.append((n, parse_quantity(p["offset"], f"{where}.planes[{k}].offset")))
        name = str(c.get("name", f"{names[index]}-point{i + 1}"))
        out.append(CartesianLimit.from_box_and_planes(name, index, point, lo, hi, planes))
    return out


def resolve_limits(spec: DesignSpec, model: RobotModel) -> JointLimitSet:
    """Spec limits where given, else the robot file's; position, velocity and acceleration are required."""
    dof = model.dof
    from_model = JointLimitSet.from_model(model)
    where = f"{spec.source}: limits"

    def per_joint(key: str) -> np.ndarray | None:
        if key not in spec.limits:
            return None
        value = spec.limits[key]
        if isinstance(value, list):
            if len(value) != dof:
                raise RobidInputError(f"{where}.{key}: expected {dof} values (one per joint), got {len(value)}")
            return np.array(value, dtype=float)
        return np.full(dof, float(value))

    if "position" in spec.limits:
        pos = np.array(spec.limits["position"], dtype=float)
        if pos.shape[0] != dof:
            raise RobidInputError(f"{where}.position: expected {dof} [min, max] pairs, got {pos.shape[0]}")
    else:
        pos = from_model.position
    values = {}
    for key in ("velocity", "acceleration", "jerk", "torque"):
        v = per_joint(key)
        values[key] = getattr(from_model, key) if v is None else v
    limits = JointLimitSet(pos, values["velocity"], values["acceleration"], values["jerk"], values["torque"])
    for key in ("position", "velocity", "acceleration"):
        arr = limits.position if key == "position" else getattr(limits, key)
        missing = [model.joint_names[j] for j in range(dof) if not np.all(np.isfinite(arr[j]))]
        if missing:
            raise RobidInputError(
                f"{where}.{key}: not given in the spec nor in the robot file for joint(s) {', '.join(missing)}"
            )
    return limits


def resolve_center(spec: DesignSpec, limits: JointLimitSet, model: RobotModel) -> np.ndarray:
    if spec.center is None:
        return limits.position.mean(axis=1)
    if len(spec.center) != model.dof:
        raise RobidInputError(f"{spec.source}: center: expected {model.dof} values, got {len(spec.center)}")
    center = np.array(spec.center)
    shrunk = limits.with_margin(spec.margin).position
    for j in range(model.dof):
        if not shrunk[j, 0] <= center[j] <= shrunk[j, 1]:
            raise RobidInputError(
                f"{spec.source}: center[{j}]: {center[j]:.6g} is outside the position limits of joint "
                f"{model.joint_names[j]} narrowed by the margin [{shrunk[j, 0]:.6g}, {shrunk[j, 1]:.6g}]"
            )
    return center
