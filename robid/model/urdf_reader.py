"""Reader for URDF serial chains (interfaces.md section 1).

The chain runs from the root link to the single leaf reached through movable joints. Fixed joints are folded
into the next movable joint's constant transform A (docs/model.md) and the inertia of the links they carry is
merged into the body they are fixed to. A fixed joint from a link named ``world`` to the base rotates gravity
into the base frame (wall or ceiling mounting). Inertia is taken about the link's <inertial> origin and
rotated into the link frame: I = R I' R^T.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_text
from robid.model.robot_model import (
    Friction,
    Joint,
    JointGeometry,
    Limits,
    Link,
    RobotModel,
)
from robid.model.validation import check_link

_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def read_robot_urdf(path: str | Path, gravity_world=(0.0, 0.0, -9.81)) -> RobotModel:
    path = Path(path)
    text = read_text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise RobidInputError(f"{path}: malformed XML ({exc})") from None
    if root.tag != "robot":
        raise RobidInputError(f"{path}: root element must be <robot>, got <{root.tag}>")
    where = str(path)
    links = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise RobidInputError(f"{where}: <link> without a name")
        links[name] = _inertial(el, f"{where}: link {name!r}")
        mass, _, inertia = links[name]
        check_link(
            Link(mass=mass, inertia_com=(inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2],
                                          inertia[1, 2])),
            f"{where}: link {name!r} <inertial>",
        )
    joints = {}
    children: dict[str, list[str]] = {}
    for el in root.findall("joint"):
        name = el.get("name")
        if not name:
            raise RobidInputError(f"{where}: <joint> without a name")
        jw = f"{where}: joint {name!r}"
        jtype = el.get("type")
        if jtype not in ("revolute", "continuous", "prismatic", "fixed"):
            raise RobidInputError(f"{jw}: joint type {jtype!r} is not supported in a serial chain")
        parent = _child_attr(el, "parent", "link", jw)
        child = _child_attr(el, "child", "link", jw)
        for ln in (parent, child):
            if ln not in links:
                raise RobidInputError(f"{jw}: refers to unknown link {ln!r}")
        joints[name] = (el, jtype, parent, child)
        children.setdefault(parent, []).append(name)
    child_links = {j[3] for j in joints.values()}
    roots = [n for n in links if n not in child_links]
    if len(roots) != 1:
        raise RobidInputError(f"{where}: expected one root link, found {roots}")
    root_link = roots[0]

    gravity = np.asarray(gravity_world, dtype=float)
    if root_link == "world":
        mounts = children.get("world", [])
        if len(mounts) != 1 or joints[mounts[0]][1] != "fixed":
            raise RobidInputError(f"{where}: link 'world' must have exactly one fixed joint to the robot base")
        el = joints[mounts[0]][0]
        rot, _ = _origin(el, f"{where}: joint {mounts[0]!r}")
        gravity = _snap(rot).T @ gravity
        root_link = joints[mounts[0]][3]

    def has_movable(link: str) -> bool:
        return any(joints[j][1] != "fixed" or has_movable(joints[j][3]) for j in children.get(link, []))

    out_joints: list[Joint] = []
    # body inertia accumulated in the current body frame: list of (mass, com, inertia_com) parts
    current_parts: list[tuple[float, np.ndarray, np.ndarray]] = []
    pending = np.eye(4)  # fixed transform from the current body frame to the link being visited
    link = root_link
    current = None  # (jtype, name, geometry, limits, friction) of the current movable joint
    while True:
        _merge_fixed_subtrees(link, pending, joints, children, links, has_movable, current_parts, where)
        mass, com, inertia = links[link]
        if mass > 0 or np.any(inertia):
            current_parts.append(_transformed(mass, com, inertia, pending))
        nexts = [j for j in children.get(link, []) if joints[j][1] != "fixed" or has_movable(joints[j][3])]
        if len(nexts) > 1:
            raise RobidInputError(f"{where}: link {link!r} branches into {nexts}: not a serial chain")
        if current is not None and (not nexts or joints[nexts[0]][1] != "fixed"):
            out_joints.append(_finish(current, current_parts, where))
            current = None
        if not nexts:
            break
        el, jtype, _, child = joints[nexts[0]]
        jw = f"{where}: joint {nexts[0]!r}"
        rot, trans = _origin(el, jw)
        origin = np.eye(4)
        origin[:3, :3] = rot
        origin[:3, 3] = trans
        if jtype == "fixed":
            pending = pending @ origin
        else:
            a = pending @ origin
            current = (jtype, nexts[0], a, _axis(el, jw), _limits(el, jw, jtype), _dynamics(el, jw))
            current_parts = []
            pending = np.eye(4)
        link = child
    if not out_joints:
        raise RobidInputError(f"{where}: no movable joint found")
    return RobotModel(
        name=root.get("name", path.stem),
        joints=tuple(out_joints),
        gravity=tuple(float(g) for g in gravity),
        kinematics="urdf",
        source=where,
    )


def _merge_fixed_subtrees(link, pending, joints, children, links, has_movable, parts, where):
    """Side branches of fixed joints without movable joints below them belong to the current body."""
    for j in children.get(link, []):
        el, jtype, _, child = joints[j]
        if jtype == "fixed" and not has_movable(child):
            rot, trans = _origin(el, f"{where}: joint {j!r}")
            origin = np.eye(4)
            origin[:3, :3] = rot
            origin[:3, 3] = trans
            t = pending @ origin
            mass, com, inertia = links[child]
            if mass > 0 or np.any(inertia):
                parts.append(_transformed(mass, com, inertia, t))
            _merge_fixed_subtrees(child, t, joints, children, links, has_movable, parts, where)


def _finish(current, parts, where) -> Joint:
    jtype, name, a, axis, limits, friction = current
    mass = sum(p[0] for p in parts)
    if mass > 0:
        com = sum(p[0] * p[1] for p in parts) / mass
    else:
        com = np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, c, i_c in parts:
        r = c - com
        inertia += i_c + m * (r @ r * np.eye(3) - np.outer(r, r))
    link = Link(
        mass=float(mass),
        com=tuple(float(x) for x in com),
        inertia_com=(
            float(inertia[0, 0]), float(inertia[1, 1]), float(inertia[2, 2]),
            float(inertia[0, 1]), float(inertia[0, 2]), float(inertia[1, 2]),
        ),
    )
    check_link(link, f"{where}: link of joint {name!r}")
    geometry = JointGeometry(
        a_rotation=tuple(tuple(float(x) for x in row) for row in _snap(a[:3, :3])),
        a_translation=tuple(float(x) for x in a[:3, 3]),
        axis=tuple(float(x) for x in axis),
        b_rotation=_IDENTITY,
        b_translation=(0.0, 0.0, 0.0),
    )
    return Joint(
        name=_identifier(name),
        type="revolute" if jtype in ("revolute", "continuous") else "prismatic",
        geometry=geometry,
        link=link,
        limits=limits,
        friction=friction,
    )


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name)


#: rotation entries and axis components this close to 0 or +-1 are snapped to them: URDF files round pi/2
#: (1.57079632679 gives cos = 5e-12), and exact zeros keep the symbolic model sparse and the grouping exact.
SNAP_TOLERANCE = 1e-9


def _snap(r: np.ndarray) -> np.ndarray:
    """Round entries within SNAP_TOLERANCE of 0 or +-1 to those values (exact structural zeros)."""
    out = r.copy()
    for target in (0.0, 1.0, -1.0):
        out[np.abs(out - target) < SNAP_TOLERANCE] = target
    return out


def _transformed(mass, com, inertia, t):
    rot = t[:3, :3]
    return mass, rot @ com + t[:3, 3], rot @ inertia @ rot.T


def _inertial(el, where):
    inertial = el.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    mass_el = inertial.find("mass")
    mass = _float(mass_el.get("value") if mass_el is not None else "0", f"{where} <mass value>")
    if mass < 0:
        raise RobidInputError(f"{where} <mass value>: must be >= 0, got {mass}")
    rot, com = _origin(inertial, where)
    ie = inertial.find("inertia")
    vals = {}
    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        vals[key] = _float(ie.get(key, "0") if ie is not None else "0", f"{where} <inertia {key}>")
    i_local = np.array(
        [
            [vals["ixx"], vals["ixy"], vals["ixz"]],
            [vals["ixy"], vals["iyy"], vals["iyz"]],
            [vals["ixz"], vals["iyz"], vals["izz"]],
        ]
    )
    return mass, com, rot @ i_local @ rot.T


def _origin(el, where):
    o = el.find("origin")
    xyz = _floats(o.get("xyz", "0 0 0") if o is not None else "0 0 0", 3, f"{where} <origin xyz>")
    rpy = _floats(o.get("rpy", "0 0 0") if o is not None else "0 0 0", 3, f"{where} <origin rpy>")
    return _snap(_rpy_matrix(*rpy)), np.array(xyz)


def _rpy_matrix(roll, pitch, yaw):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _axis(el, where):
    a = el.find("axis")
    xyz = np.array(_floats(a.get("xyz", "1 0 0") if a is not None else "1 0 0", 3, f"{where} <axis xyz>"))
    norm = np.linalg.norm(xyz)
    if norm < 1e-12:
        raise RobidInputError(f"{where} <axis xyz>: must not be zero")
    return _snap_vector(xyz / norm)


def _snap_vector(v):
    return _snap(v)


def _limits(el, where, jtype) -> Limits:
    lim = el.find("limit")
    if lim is None:
        return Limits()
    position = None
    if jtype != "continuous" and lim.get("lower") is not None and lim.get("upper") is not None:
        lo = _float(lim.get("lower"), f"{where} <limit lower>")
        hi = _float(lim.get("upper"), f"{where} <limit upper>")
        if lo < hi:
            position = (lo, hi)
    vel = _float(lim.get("velocity"), f"{where} <limit velocity>") if lim.get("velocity") else None
    eff = _float(lim.get("effort"), f"{where} <limit effort>") if lim.get("effort") else None
    return Limits(
        position=position,
        velocity=vel if vel and vel > 0 else None,
        torque=eff if eff and eff > 0 else None,
    )


def _dynamics(el, where) -> Friction:
    dyn = el.find("dynamics")
    if dyn is None:
        return Friction()
    return Friction(
        viscous=_float(dyn.get("damping", "0"), f"{where} <dynamics damping>"),
        coulomb=_float(dyn.get("friction", "0"), f"{where} <dynamics friction>"),
    )


def _child_attr(el, tag, attr, where):
    c = el.find(tag)
    if c is None or not c.get(attr):
        raise RobidInputError(f"{where}: missing <{tag} {attr}=...>")
    return c.get(attr)


def _float(text, where) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        raise RobidInputError(f"{where}: not a number: {text!r}") from None
    if not math.isfinite(x):
        raise RobidInputError(f"{where}: must be finite, got {text!r}")
    return x


def _floats(text, n, where):
    parts = text.split()
    if len(parts) != n:
        raise RobidInputError(f"{where}: expected {n} numbers, got {text!r}")
    return [_float(p, where) for p in parts]
