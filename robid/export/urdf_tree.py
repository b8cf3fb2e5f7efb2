"""URDF of a closed-chain robot (docs/export.md, "Closed chains"): the tree of robid.model.loops, every joint on its
parent's link, with the loops stated in the header and a mimic-style note at each passive joint.

URDF describes trees only, so a loop stays cut: the passive joints are ordinary joints (``revolute`` with their
robot-file limits, no drive), and each loop's closing pair of frames is written as two massless links fixed to the
bodies that carry them (``<loop>_close_a``, ``<loop>_close_b``), which a solver that supports loop constraints
(e.g. Drake's or MuJoCo's after conversion) can weld together. A URDF ``<mimic>`` follows one joint only; a
parallelogram's passive angle follows two (q_E3 = q_A3 - q_A2), so the relation is a comment at the joint, and a
``<mimic>`` element is written only where a passive joint follows exactly one active joint. Placement, inertials,
friction and transmissions are those of the serial writer (robid.export.urdf_writer).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from robid.export.urdf_writer import (
    DRAKE_NS,
    _comment_text,
    _dynamics,
    _homogeneous,
    _inertial,
    _joint_origin,
    _limit,
    _num,
    _origin,
    _text,
    _transmission,
    _vec,
    gravity_mount,
)
from robid.model.loops import tree_joints, tree_parents
from robid.model.robot_model import RobotModel


def urdf_from_tree(model: RobotModel, header: str = "", base_link: str = "base_link") -> str:
    """The URDF text of the closed-chain ``model`` (module docstring)."""
    ET.register_namespace("drake", DRAKE_NS)
    robot = ET.Element("robot", name=model.name)
    mount = gravity_mount(model.gravity)
    where = "world" if mount is not None else base_link
    g = float(np.linalg.norm(model.gravity))
    lines = [header, f"Gravity: {g:.6g} m/s^2 along -z of link {where} (URDF has no gravity: set it in the solver)."]
    lines += loop_statements(model)
    robot.append(ET.Comment(_comment_text("\n".join(filter(None, lines)))))
    if mount is not None:
        ET.SubElement(robot, "link", name="world")
        j = ET.SubElement(robot, "joint", name="world_mount", type="fixed")
        ET.SubElement(j, "parent", link="world")
        ET.SubElement(j, "child", link=base_link)
        _origin(j, _homogeneous(mount, np.zeros(3)))
    ET.SubElement(robot, "link", name=base_link)
    tree, parents = tree_joints(model), tree_parents(model)
    passive = set(model.chain.passive_names)
    notes = dict(zip(model.chain.passive_names, passive_relations(model), strict=True))
    for k, joint in enumerate(tree):
        parent = tree[parents[k]] if parents[k] >= 0 else None
        before = _b(parent) if parent is not None else np.eye(4)
        jtype = "revolute" if joint.revolute and (joint.limits.position is not None) else (
            "continuous" if joint.revolute else "prismatic")
        je = ET.SubElement(robot, "joint", name=joint.name, type=jtype)
        ET.SubElement(je, "parent", link=f"link_{parent.name}" if parent is not None else base_link)
        ET.SubElement(je, "child", link=f"link_{joint.name}")
        _origin(je, _joint_origin(joint, before))
        ET.SubElement(je, "axis", xyz=_vec(joint.geometry.axis))
        _limit(je, joint)
        _dynamics(je, joint)
        if joint.name in passive:
            je.append(ET.Comment(f" passive joint (robid loop): {notes[joint.name][0]} "))
            if notes[joint.name][1] is not None:
                leader, multiplier = notes[joint.name][1]
                ET.SubElement(je, "mimic", joint=leader, multiplier=_num(multiplier), offset="0")
        _inertial(ET.SubElement(robot, "link", name=f"link_{joint.name}"), joint, _b(joint))
    for loop in model.chain.loops:
        for tag, end in zip(("a", "b"), loop.close, strict=True):
            _closing_frame(robot, loop.name, tag, end, next(j for j in tree if j.name == end.body))
    for joint in model.joints:
        if joint.drive is not None:
            _transmission(robot, joint)
    return _text(robot)


def _b(joint) -> np.ndarray:
    g = joint.geometry
    return _homogeneous(g.b_rotation, g.b_translation)


def _closing_frame(robot: ET.Element, loop: str, tag: str, end, joint) -> None:
    """A massless link at one frame of a loop's closing pair, fixed to the link of its body."""
    name = "".join(c if c.isalnum() else "_" for c in loop)
    je = ET.SubElement(robot, "joint", name=f"{name}_close_{tag}_mount", type="fixed")
    ET.SubElement(je, "parent", link=f"link_{joint.name}")
    ET.SubElement(je, "child", link=f"{name}_close_{tag}")
    _origin(je, _b(joint) @ _homogeneous(np.eye(3), np.asarray(end.xyz, dtype=float)))
    ET.SubElement(robot, "link", name=f"{name}_close_{tag}")


def passive_relations(model: RobotModel) -> list[tuple[str, tuple[str, float] | None]]:
    """Per passive joint: its relation in words, and (leader, multiplier) where it follows one active joint."""
    chain = model.chain
    out = []
    for k, name in enumerate(chain.passive_names):
        if chain.relation is None:
            out.append((f"{name} follows the loop closure (solved numerically)", None))
            continue
        row = chain.relation[k]
        terms = [(g, n) for g, n in zip(row, model.joint_names, strict=True) if g != 0]
        text = " + ".join(f"{int(g) if float(g).is_integer() else _num(g)} q_{n}" for g, n in terms)
        text = text.replace("+ -", "- ")
        out.append((f"q_{name} = {text}", (terms[0][1], terms[0][0]) if len(terms) == 1 else None))
    return out


def loop_statements(model: RobotModel) -> list[str]:
    """The header's lines on the loops: what is cut, where it closes, how the passive joints follow."""
    chain = model.chain
    lines = [f"Closed chain: {len(chain.loops)} loop(s) cut into a tree (URDF cannot close a loop). Passive joints "
             f"(no drive): {', '.join(chain.passive_names)}."]
    for loop in chain.loops:
        a, b = loop.close
        lines.append(f"Loop {loop.name!r} ({loop.kind}): closes where frame {_vec(a.xyz)} of link_{a.body} meets "
                     f"frame {_vec(b.xyz)} of link_{b.body} (the links *_close_a and *_close_b); passive "
                     f"{', '.join(loop.passive)}.")
    lines += [f"Mimic-style: {text}." for text, _ in passive_relations(model)]
    return lines
