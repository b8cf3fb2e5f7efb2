"""MJCF (MuJoCo's format) of a closed-chain robot model (docs/export.md, "MJCF"); serial robots are written by
robid.export.mjcf_writer and mjcf_copy.

Bodies nest as robid's tree (robid.model.loops; a serial robot is a chain). As in the URDF writer
(robid.export.urdf_writer), the MJCF body of joint i is the frame after ``A_i M_i`` (the joint's axis through its
origin): its ``pos``/``quat`` in the parent body are ``B_parent A_i R(axis, offset_i)``, the ``<inertial>`` sits at
``B_i`` moved to the COM with the inertia about the COM in robid's body axes (``fullinertia``). Per joint:
``hinge`` or ``slide`` on ``axis``, ``range`` from the position limits, ``armature`` the reflected rotor inertia Ia,
``damping`` the viscous and ``frictionloss`` the Coulomb friction; a motor per driven joint. Gravity in
``<option>``, in the base frame. A closed chain's loops are ``<equality><connect>`` constraints: body1 is the body
of the first closing frame and ``anchor`` that frame's point in it; MuJoCo takes body2's point where body1's is at
the reference configuration, the zero pose where robid's loops close (docs/robot-file.md). The friction offset and
compensators, which MJCF has no element for, are listed in the header comment (the header of the URDF export).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from robid.export.urdf_writer import _comment_text, _homogeneous, _joint_origin, _num, _text, _vec
from robid.io.escaping import xml_text
from robid.model.loops import tree_joints, tree_parents
from robid.model.robot_model import RobotModel


def quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method: the largest of the four first)."""
    m = np.asarray(r, dtype=float)
    trace = np.trace(m)
    candidates = [trace, m[0, 0], m[1, 1], m[2, 2]]
    k = int(np.argmax(candidates))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + trace)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    else:
        i, j, n = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * np.sqrt(1.0 + m[i, i] - m[j, j] - m[n, n])
        v = [0.0, 0.0, 0.0]
        v[i] = 0.25 * s
        v[j] = (m[j, i] + m[i, j]) / s
        v[n] = (m[n, i] + m[i, n]) / s
        q = ((m[n, j] - m[j, n]) / s, *v)
    q = np.array(q)
    q = q if q[0] >= 0 else -q
    return tuple(float(x) for x in q / np.linalg.norm(q))


def _place(element: ET.Element, t: np.ndarray) -> None:
    element.set("pos", _vec(t[:3, 3]))
    element.set("quat", _vec(quaternion(t[:3, :3])))


def _b(joint) -> np.ndarray:
    g = joint.geometry
    return _homogeneous(g.b_rotation, g.b_translation)


def mjcf_from_model(model: RobotModel, header: str = "") -> str:
    """The MJCF text of ``model`` (module docstring)."""
    root = ET.Element("mujoco", model=xml_text(model.name))
    root.append(ET.Comment(_comment_text(header)))
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    ET.SubElement(root, "option", gravity=_vec(model.gravity))
    # one fixed root body holds the tree (a closed chain may hang several branches on the base; readers such as
    # pinocchio's take the first body under worldbody as the root)
    world = ET.SubElement(ET.SubElement(root, "worldbody"), "body", name="base_link")
    tree, parents = tree_joints(model), tree_parents(model)
    passive = set(model.chain.passive_names) if model.chain is not None else set()
    bodies: list[ET.Element] = []
    for k, joint in enumerate(tree):
        parent = parents[k]
        before = _b(tree[parent]) if parent >= 0 else np.eye(4)
        body = ET.SubElement(bodies[parent] if parent >= 0 else world, "body", name=f"link_{joint.name}")
        _place(body, _joint_origin(joint, before))
        _joint(body, joint, joint.name in passive)
        _inertial(body, joint)
        bodies.append(body)
    if model.chain is not None:
        equality = ET.SubElement(root, "equality")
        for loop in model.chain.loops:
            a, b = loop.close
            body_a = next(j for j in tree if j.name == a.body)
            anchor = _b(body_a) @ np.array([*a.xyz, 1.0])
            ET.SubElement(equality, "connect", name="".join(c if c.isalnum() else "_" for c in loop.name),
                          body1=f"link_{a.body}", body2=f"link_{b.body}", anchor=_vec(anchor[:3]))
    actuators = ET.SubElement(root, "actuator")
    for joint in model.joints:
        ET.SubElement(actuators, "motor", name=f"motor_{joint.name}", joint=joint.name, gear="1")
    return _text(root)


def _joint(body: ET.Element, joint, passive: bool) -> None:
    attrs = {"name": joint.name, "type": "hinge" if joint.revolute else "slide", "axis": _vec(joint.geometry.axis)}
    if joint.limits.position is not None:
        attrs["range"] = _vec(joint.limits.position)
    if not passive:
        if joint.drive is not None:
            attrs["armature"] = _num(joint.drive.reflected_inertia)
        attrs["damping"] = _num(joint.friction.viscous)
        attrs["frictionloss"] = _num(joint.friction.coulomb)
    ET.SubElement(body, "joint", **attrs)


def _inertial(body: ET.Element, joint) -> None:
    link = joint.link
    b = _b(joint)
    at_com = b @ _homogeneous(np.eye(3), link.com)
    xx, yy, zz, xy, xz, yz = link.inertia_com
    inertial = ET.SubElement(body, "inertial", mass=_num(max(link.mass, 1e-9)),
                             fullinertia=" ".join(_num(v) for v in (xx, yy, zz, xy, xz, yz)))
    _place(inertial, at_com)
