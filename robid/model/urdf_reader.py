"""Reader for URDF serial chains (docs/interfaces.md section 1).

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_text
from robid.model.checks import check_link
from robid.model.robot_model import IDENTITY_ROTATION, Friction, Joint, JointGeometry, Limits, Link, RobotModel


@dataclass(frozen=True, eq=False)
class _Tree:
    """The links and joints of a URDF file: ``links`` name -> (mass, com, inertia about the COM, link frame);
    ``joints`` name -> (element, type, parent, child); ``children`` link -> names of the joints it is parent of."""

    where: str
    links: dict[str, tuple[float, np.ndarray, np.ndarray]]
    joints: dict[str, tuple[ET.Element, str, str, str]]
    children: dict[str, list[str]]

    def has_movable(self, link: str) -> bool:
        """Whether a movable joint lies anywhere below ``link``."""
        return any(
            self.joints[j][1] != "fixed" or self.has_movable(self.joints[j][3]) for j in self.children.get(link, [])
        )

    def chain_joints(self, link: str) -> list[str]:
        """The joints below ``link`` that the chain goes on through: movable ones and fixed ones with a movable
        joint further down (a serial chain has at most one)."""
        return [
            j
            for j in self.children.get(link, [])
            if self.joints[j][1] != "fixed" or self.has_movable(self.joints[j][3])
        ]

    def origin(self, joint: str) -> np.ndarray:
        """The 4x4 transform of the joint's <origin> (parent link frame to joint frame)."""
        rot, trans = _origin(self.joints[joint][0], f"{self.where}: joint {joint!r}")
        t = np.eye(4)
        t[:3, :3] = rot
        t[:3, 3] = trans
        return t


def read_robot_urdf(path: str | Path, gravity_world=(0.0, 0.0, -9.81)) -> RobotModel:
    """The serial chain of a URDF file (module docstring); ``gravity_world`` in the frame of a ``world`` link."""
    path = Path(path)
    try:
        root = ET.fromstring(read_text(path))
    except ET.ParseError as exc:
        raise RobidInputError(f"{path}: malformed XML ({exc})") from None
    if root.tag != "robot":
        raise RobidInputError(f"{path}: root element must be <robot>, got <{root.tag}>")
    tree = _read_tree(root, str(path))
    base, gravity = _base_and_gravity(tree, np.asarray(gravity_world, dtype=float))
    joints = _serial_chain(tree, base)
    if not joints:
        raise RobidInputError(f"{tree.where}: no movable joint found")
    names = [j.name for j in joints]
    for name in names:
        if names.count(name) > 1:
            raise RobidInputError(f"{tree.where}: two movable joints are both named {name!r} by robid (characters "
                                  "other than letters, digits and _ become _); rename one")
    return RobotModel(
        name=root.get("name", path.stem),
        joints=tuple(joints),
        gravity=tuple(float(g) for g in gravity),
        kinematics="urdf",
        source=tree.where,
    )


def _read_tree(root: ET.Element, where: str) -> _Tree:
    links = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise RobidInputError(f"{where}: <link> without a name")
        links[name] = _inertial(el, f"{where}: link {name!r}")
        mass, _, inertia = links[name]
        check_link(Link(mass=mass, inertia_com=_inertia_com(inertia)), f"{where}: link {name!r} <inertial>")
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
    return _Tree(where, links, joints, children)


def _base_and_gravity(tree: _Tree, gravity: np.ndarray) -> tuple[str, np.ndarray]:
    """The robot's base link and gravity in its frame: a fixed joint from ``world`` rotates gravity (R^T g)."""
    child_links = {j[3] for j in tree.joints.values()}
    roots = [n for n in tree.links if n not in child_links]
    if len(roots) != 1:
        raise RobidInputError(f"{tree.where}: expected one root link, found {roots}")
    if roots[0] != "world":
        return roots[0], gravity
    mounts = tree.children.get("world", [])
    if len(mounts) != 1 or tree.joints[mounts[0]][1] != "fixed":
        raise RobidInputError(f"{tree.where}: link 'world' must have exactly one fixed joint to the robot base")
    rot = tree.origin(mounts[0])[:3, :3]
    return tree.joints[mounts[0]][3], _snap(rot).T @ gravity


def _serial_chain(tree: _Tree, base: str) -> list[Joint]:
    """Walk from the base to the leaf: fixed joints fold into the next movable joint's A, and the inertia of the
    links they carry is merged into the body of the current movable joint."""
    out_joints: list[Joint] = []
    # body inertia accumulated in the current body frame: list of (mass, com, inertia_com) parts
    current_parts: list[tuple[float, np.ndarray, np.ndarray]] = []
    pending = np.eye(4)  # fixed transform from the current body frame to the link being visited
    link = base
    current = None  # (jtype, name, A, axis, limits, friction) of the current movable joint
    while True:
        _merge_fixed_subtrees(tree, link, pending, current_parts)
        mass, com, inertia = tree.links[link]
        if mass > 0 or np.any(inertia):
            current_parts.append(_transformed(mass, com, inertia, pending))
        nexts = tree.chain_joints(link)
        if len(nexts) > 1:
            raise RobidInputError(f"{tree.where}: link {link!r} branches into {nexts}: not a serial chain")
        if current is not None and (not nexts or tree.joints[nexts[0]][1] != "fixed"):
            out_joints.append(_finish(current, current_parts, tree.where))
            current = None
        if not nexts:
            return out_joints
        el, jtype, _, child = tree.joints[nexts[0]]
        jw = f"{tree.where}: joint {nexts[0]!r}"
        origin = tree.origin(nexts[0])
        if jtype == "fixed":
            pending = pending @ origin
        else:
            a = pending @ origin
            current = (jtype, nexts[0], a, _axis(el, jw), _limits(el, jw, jtype), _dynamics(el, jw))
            current_parts = []
            pending = np.eye(4)
        link = child


def _merge_fixed_subtrees(tree: _Tree, link: str, pending: np.ndarray, parts: list) -> None:
    """Side branches of fixed joints without movable joints below them belong to the current body."""
    for j in tree.children.get(link, []):
        _, jtype, _, child = tree.joints[j]
        if jtype == "fixed" and not tree.has_movable(child):
            t = pending @ tree.origin(j)
            mass, com, inertia = tree.links[child]
            if mass > 0 or np.any(inertia):
                parts.append(_transformed(mass, com, inertia, t))
            _merge_fixed_subtrees(tree, child, t, parts)


def _inertia_com(inertia: np.ndarray) -> tuple[float, ...]:
    """(Ixx, Iyy, Izz, Ixy, Ixz, Iyz) of a 3x3 inertia tensor (robot-file order)."""
    return tuple(float(inertia[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))


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
    link = Link(mass=float(mass), com=tuple(float(x) for x in com), inertia_com=_inertia_com(inertia))
    check_link(link, f"{where}: link of joint {name!r}")
    geometry = JointGeometry(
        a_rotation=tuple(tuple(float(x) for x in row) for row in _snap(a[:3, :3])),
        a_translation=tuple(float(x) for x in a[:3, 3]),
        axis=tuple(float(x) for x in axis),
        b_rotation=IDENTITY_ROTATION,
        b_translation=(0.0, 0.0, 0.0),
    )
    return Joint(
        name=joint_identifier(name),
        type="revolute" if jtype in ("revolute", "continuous") else "prismatic",
        geometry=geometry,
        link=link,
        limits=limits,
        friction=friction,
    )


def joint_identifier(name: str) -> str:
    """robid's name of a URDF joint (it names the parameters, m_J, fv_J, ...): every character other than a letter,
    a digit or _ replaced by _ (``joint-3`` -> ``joint_3``)."""
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
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
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
    return _snap(xyz / norm)


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
