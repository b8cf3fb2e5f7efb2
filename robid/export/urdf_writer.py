"""URDF of a robot model (any of robid's kinematics), or a copy of the robot's own URDF with new inertial data.

Generated URDF (:func:`urdf_from_model`). robid places joint i by ``T_{i-1,i}(q) = A_i M_i(q) B_i``
(:mod:`robid.model.robot_model`); a URDF joint is ``origin . motion(q)``. The URDF link of joint i is therefore
the frame reached after ``A_i M_i`` (robid's body frame i is that frame times ``B_i``):

* joint origin  = ``B_{i-1} A_i R(axis, offset_i)`` (``B_0 = I``; a DH angle offset is folded into the origin,
  a prismatic offset into its translation), axis = ``axis_i``;
* inertial origin = ``B_i`` moved to the COM: ``xyz = R_B c + p_B``, ``rpy`` of ``R_B``, with the inertia about
  the COM in robid's body axes (which is what URDF expects in the inertial frame);
* a fixed joint ``flange`` to a massless link ``flange`` at ``B_n``: robid's last body frame (the flange frame
  of payloads and tools);
* friction in ``<dynamics damping="fv" friction="fc">``; the reflected rotor inertia ``Ia`` in a
  ``<transmission>`` whose actuator carries ``<mechanicalReduction>`` and Drake's ``drake:gear_ratio`` and
  ``drake:rotor_inertia`` (Ia = rotor_inertia gear_ratio^2); the friction offset and compensators, which URDF
  cannot express, are listed in the header comment;
* gravity other than -z of the base: a ``world`` link and a fixed joint that rotates the base so that gravity
  is -z of ``world`` (how robid's URDF reader reads a wall or ceiling mounting back).

URDF ``rpy`` is fixed-axis roll-pitch-yaw, ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (URDF XML specification).

Copy of a URDF (:func:`urdf_copy_with_model`): the file is parsed, each movable joint's child link gets the
identified body (robid's URDF reader keeps that link's frame as body frame and merges the links fixed to it,
whose ``<inertial>`` blocks are then removed, with a comment), and the joint's ``<dynamics>`` the friction;
visuals, collisions, meshes and names stay as they were.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from robid.errors import RobidInputError
from robid.io.escaping import xml_comment, xml_text
from robid.model.robot_model import Joint, RobotModel, rotation_about_axis

DRAKE_NS = "http://drake.mit.edu"

#: URDF effort / velocity limit written where the robot file gives none (URDF requires both attributes)
UNBOUNDED = 1e9


def rpy_from_matrix(r: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with ``R = Rz(yaw) Ry(pitch) Rx(roll)``; at pitch = +-pi/2 the yaw is set to 0."""
    r = np.asarray(r, dtype=float)
    cp = math.hypot(r[2, 1], r[2, 2])
    if cp > 1e-12:
        return math.atan2(r[2, 1], r[2, 2]), math.atan2(-r[2, 0], cp), math.atan2(r[1, 0], r[0, 0])
    return math.atan2(-r[1, 2], r[1, 1]), math.copysign(math.pi / 2, -r[2, 0]), 0.0


def _num(x: float) -> str:
    """Shortest text that reads back as the same double (and 0 for -0)."""
    x = float(x)
    return "0" if x == 0 else repr(x)


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def _homogeneous(r, p) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = np.asarray(r, dtype=float)
    t[:3, 3] = np.asarray(p, dtype=float)
    return t


def _origin(parent: ET.Element, t: np.ndarray) -> ET.Element:
    return ET.SubElement(parent, "origin", xyz=_vec(t[:3, 3]), rpy=_vec(rpy_from_matrix(t[:3, :3])))


def _joint_origin(joint: Joint, before: np.ndarray) -> np.ndarray:
    """``B_{i-1} A_i`` and the joint's constant offset along or about its axis."""
    g = joint.geometry
    a = _homogeneous(g.a_rotation, g.a_translation)
    u = np.asarray(g.axis, dtype=float)
    if joint.revolute:
        offset = _homogeneous(rotation_about_axis(u, g.angle_offset), np.zeros(3))
    else:
        offset = _homogeneous(np.eye(3), u * g.displacement_offset)
    return before @ a @ offset


def _inertial(parent: ET.Element, joint: Joint, b: np.ndarray) -> None:
    link = joint.link
    inertial = ET.SubElement(parent, "inertial")
    at_com = b @ _homogeneous(np.eye(3), link.com)
    _origin(inertial, at_com)
    ET.SubElement(inertial, "mass", value=_num(link.mass))
    xx, yy, zz, xy, xz, yz = link.inertia_com
    ET.SubElement(
        inertial, "inertia", ixx=_num(xx), ixy=_num(xy), ixz=_num(xz), iyy=_num(yy), iyz=_num(yz), izz=_num(zz)
    )


def _limit(parent: ET.Element, joint: Joint) -> None:
    lim = joint.limits
    attrs = {}
    if lim.position is not None:
        attrs["lower"], attrs["upper"] = _num(lim.position[0]), _num(lim.position[1])
    attrs["effort"] = _num(lim.torque if lim.torque else UNBOUNDED)
    attrs["velocity"] = _num(lim.velocity if lim.velocity else UNBOUNDED)
    ET.SubElement(parent, "limit", **attrs)


def unbounded_limits(model: RobotModel) -> list[str]:
    """``joint effort`` / ``joint velocity`` for every URDF limit the robot file does not give (written as
    :data:`UNBOUNDED`: URDF requires both, and 0 would read as "no torque" in a simulator)."""
    out = []
    for joint in model.joints:
        out += [f"{joint.name} {k}" for k, v in (("effort", joint.limits.torque), ("velocity", joint.limits.velocity))
                if not v]
    return out


def _dynamics(parent: ET.Element, joint: Joint) -> None:
    ET.SubElement(parent, "dynamics", damping=_num(joint.friction.viscous), friction=_num(joint.friction.coulomb_level))


def gravity_mount(gravity) -> np.ndarray | None:
    """Rotation ``R`` of a fixed ``world`` -> base joint with ``R g_base = (0, 0, -|g|)`` (Rodrigues about
    ``g_base x (-z)``), or None when gravity already points along -z of the base."""
    g = np.asarray(gravity, dtype=float)
    norm = float(np.linalg.norm(g))
    if norm == 0:
        return None
    u = g / norm
    target = np.array([0.0, 0.0, -1.0])
    if np.allclose(u, target, atol=1e-15):
        return None
    axis = np.cross(u, target)
    s = float(np.linalg.norm(axis))
    angle = math.atan2(s, float(u @ target))
    if s < 1e-15:  # gravity along +z: half a turn about x
        return rotation_about_axis(np.array([1.0, 0.0, 0.0]), math.pi)
    return rotation_about_axis(axis / s, angle)


def urdf_from_model(model: RobotModel, header: str = "", base_link: str = "base_link") -> str:
    """The URDF text of ``model`` (module docstring); ``header`` becomes a comment after ``<robot>``."""
    ET.register_namespace("drake", DRAKE_NS)
    robot = ET.Element("robot", name=xml_text(model.name))
    mount = gravity_mount(model.gravity)
    g = float(np.linalg.norm(model.gravity))
    where = "world" if mount is not None else base_link
    missing = unbounded_limits(model)
    header = "\n".join(filter(None, [
        header,
        f"Gravity: {g:.6g} m/s^2 along -z of link {where} (URDF has no gravity: set it in the simulator or solver).",
        f"Limits not in the robot file, written as {UNBOUNDED:g} (unbounded): {', '.join(missing)}." if missing else "",
    ]))
    robot.append(ET.Comment(_comment_text(header)))
    if mount is not None:
        ET.SubElement(robot, "link", name="world")
        j = ET.SubElement(robot, "joint", name="world_mount", type="fixed")
        ET.SubElement(j, "parent", link="world")
        ET.SubElement(j, "child", link=base_link)
        _origin(j, _homogeneous(mount, np.zeros(3)))
    ET.SubElement(robot, "link", name=base_link)
    parent = base_link
    before = np.eye(4)
    for joint in model.joints:
        link_name = f"link_{joint.name}"
        has_position_limits = joint.limits.position is not None
        jtype = "prismatic" if not joint.revolute else ("revolute" if has_position_limits else "continuous")
        je = ET.SubElement(robot, "joint", name=joint.name, type=jtype)
        ET.SubElement(je, "parent", link=parent)
        ET.SubElement(je, "child", link=link_name)
        _origin(je, _joint_origin(joint, before))
        ET.SubElement(je, "axis", xyz=_vec(joint.geometry.axis))
        _limit(je, joint)
        _dynamics(je, joint)
        g = joint.geometry
        b = _homogeneous(g.b_rotation, g.b_translation)
        le = ET.SubElement(robot, "link", name=link_name)
        _inertial(le, joint, b)
        parent, before = link_name, b
    flange = ET.SubElement(robot, "joint", name="flange_mount", type="fixed")
    ET.SubElement(flange, "parent", link=parent)
    ET.SubElement(flange, "child", link="flange")
    _origin(flange, before)
    ET.SubElement(robot, "link", name="flange")
    for joint in model.joints:
        if joint.drive is not None:
            _transmission(robot, joint)
    return _text(robot)


def _transmission(robot: ET.Element, joint: Joint, je_name: str | None = None) -> None:
    drive = joint.drive
    t = ET.SubElement(robot, "transmission", name=f"{joint.name}_transmission")
    ET.SubElement(t, "type").text = "transmission_interface/SimpleTransmission"
    je = ET.SubElement(t, "joint", name=je_name or joint.name)
    ET.SubElement(je, "hardwareInterface").text = "hardware_interface/EffortJointInterface"
    actuator = ET.SubElement(t, "actuator", name=f"{joint.name}_motor")
    ET.SubElement(actuator, "mechanicalReduction").text = _num(drive.gear_ratio)
    ET.SubElement(actuator, f"{{{DRAKE_NS}}}gear_ratio", value=_num(drive.gear_ratio))
    ET.SubElement(actuator, f"{{{DRAKE_NS}}}rotor_inertia", value=_num(drive.rotor_inertia))


def _comment_text(header: str) -> str:
    """Header lines as one XML comment (:func:`robid.io.escaping.xml_comment`: '--' split, controls escaped)."""
    return xml_comment(header)


def _text(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def read_transmissions(text: str) -> dict[str, tuple[float, float]]:
    """``{joint: (gear_ratio, rotor_inertia)}`` of the Drake-style transmissions :func:`urdf_from_model` writes
    (for readers and tests; robid's URDF reader does not read drives)."""
    root = ET.fromstring(text)
    out = {}
    for t in root.findall("transmission"):
        joint = t.find("joint")
        actuator = t.find("actuator")
        if joint is None or actuator is None:
            continue
        ratio = actuator.find(f"{{{DRAKE_NS}}}gear_ratio")
        inertia = actuator.find(f"{{{DRAKE_NS}}}rotor_inertia")
        if ratio is not None and inertia is not None:
            out[joint.get("name")] = (float(ratio.get("value")), float(inertia.get("value")))
    return out


# ---- a copy of the robot's own URDF ---------------------------------------------------------------------------


def urdf_copy_with_model(source_text: str, model: RobotModel, header: str = "", where: str = "URDF") -> str:
    """The URDF ``source_text`` with the inertial and friction data of ``model`` (read from that file by robid's
    URDF reader, then identified): module docstring."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    ET.register_namespace("drake", DRAKE_NS)
    for prefix, uri in re.findall(r'xmlns:(\w+)="([^"]+)"', source_text):
        ET.register_namespace(prefix, uri)
    root = ET.fromstring(source_text, parser=parser)
    joints = {_identifier(j.get("name", "")): j for j in root.findall("joint")}  # not <transmission><joint>
    links = {link.get("name"): link for link in root.findall("link")}
    children: dict[str, list[ET.Element]] = {}
    for j in root.findall("joint"):
        parent = j.find("parent")
        if parent is not None:
            children.setdefault(parent.get("link"), []).append(j)
    for joint in model.joints:
        je = joints.get(joint.name)
        if je is None or je.find("child") is None:
            raise RobidInputError(f"{where}: joint {joint.name!r} of the identified model is not in the file")
        child = je.find("child").get("link")
        link_el = links[child]
        for merged in _fixed_descendants(child, children, links):
            old = merged.find("inertial")
            if old is not None:
                merged.remove(old)
                merged.insert(0, ET.Comment(f" inertial merged into {child} by robid export-model "))
        old = link_el.find("inertial")
        position = list(link_el).index(old) if old is not None else 0
        if old is not None:
            link_el.remove(old)
        holder = ET.Element("holder")
        _inertial(holder, joint, np.eye(4))
        link_el.insert(position, holder[0])
        dyn = je.find("dynamics")
        if dyn is not None:
            je.remove(dyn)
        _dynamics(je, joint)
    present = {t.get("name") for t in root.findall("transmission")}
    for joint in model.joints:  # drives of a robot file that starts from the URDF (docs/robot-file.md)
        if joint.drive is not None and f"{joint.name}_transmission" not in present:
            _transmission(root, joint, je_name=_urdf_name(joints, joint.name))
    if header:
        root.insert(0, ET.Comment(_comment_text(header)))
    return _text(root)


def _urdf_name(joints: dict[str, ET.Element], name: str) -> str:
    """The URDF's own spelling of robid's joint ``name``."""
    return joints[name].get("name", name)


def _fixed_descendants(link: str, children, links) -> list[ET.Element]:
    """Links reached from ``link`` through fixed joints only: robid's URDF reader merges them into its body
    (side branches and the fixed links of the chain before the next movable joint alike)."""
    out = []
    for j in children.get(link, []):
        if j.get("type") != "fixed":
            continue
        child = j.find("child").get("link")
        out.append(links[child])
        out += _fixed_descendants(child, children, links)
    return out


def _identifier(name: str) -> str:
    """robid's joint name for a URDF joint name (the reader's rule)."""
    return re.sub(r"\W", "_", name)
