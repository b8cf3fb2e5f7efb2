"""MJCF (MuJoCo) of an identified robot model: a copy of the robot's own MJCF file, or one generated from any of
robid's kinematics (docs/export.md, "MJCF").

Both carry the identified standard set the way MuJoCo reads it: each moving body's ``<inertial pos mass
fullinertia>`` (robid's body frame is MuJoCo's body frame, so ``pos`` is the COM and ``fullinertia`` the inertia
about it, ``Ixx Iyy Izz Ixy Ixz Iyz``, the order of robid's robot file), and on each joint ``armature`` = the
reflected rotor inertia ``Ia`` (rotor_inertia gear_ratio^2), ``damping`` = viscous ``fv`` and ``frictionloss`` =
Coulomb ``fc``. MuJoCo applies ``frictionloss`` as a soft constraint: in ``mj_inverse`` it equals ``fc sign(qd)``
except near velocity reversals (docs/model.md, "MJCF specifics"). The friction offset ``f0``, friction models
beyond the linear one, coupled drives, compensators and elasticity have no MJCF field: the header comment lists them.
MuJoCo refuses a moving body whose mass or a principal moment is not positive; such a value (a body the data
leave empty) is raised to :data:`MIN_MASS` / :data:`MIN_INERTIA` and named in the header.

Copy (:func:`mjcf_copy_with_model`): the file is parsed (comments kept, ``<include>`` files inlined), its bodies are
matched one to one with MuJoCo's compiled bodies (the same depth-first order), and only the identified values
change: the inertial of each moving body, a zero inertial on the bodies without joints that robid merged into it,
the three joint attributes (explicit attributes win over ``<default>`` classes), and the compiler options that would
rescale or replace the inertials (``settotalmass``, ``boundmass``, ``boundinertia``, ``balanceinertia``,
``inertiafromgeom="true"``) are removed. Meshes, materials, actuators, sensors, contacts and names stay.

Generated (:func:`mjcf_from_model`): one body per joint, placed so that its frame is robid's body frame
(``A R(u, offset) B`` from the previous one; the joint through ``-R_B^T p_B`` about ``R_B^T u``), gravity in
``<option>``, position limits as ``range``, torque limits as ``actuatorfrcrange`` and a ``<motor>`` per joint.
Every name and number is written by :mod:`xml.etree.ElementTree`, which escapes attribute values.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from robid.io.escaping import xml_comment, xml_text
from robid.model.robot_model import Joint, RobotModel, rotation_about_axis

#: the smallest mass and principal moment written for a moving body (MuJoCo needs them > 1e-15)
MIN_MASS = 1e-9
MIN_INERTIA = 1e-12

#: compiler attributes that would rescale or replace the written inertials
_INERTIA_COMPILER_OPTIONS = ("settotalmass", "boundmass", "boundinertia", "balanceinertia")


@dataclass(frozen=True)
class _Inertial:
    """What one body's ``<inertial>`` holds, after the floors; ``raised`` says which values were raised."""

    mass: float
    com: tuple[float, float, float]
    full: tuple[float, ...]
    raised: tuple[str, ...]


def _num(x: float) -> str:
    """Shortest text that reads back as the same double (0 for -0)."""
    x = float(x)
    return "0" if x == 0 else repr(x)


def _vec(values) -> str:
    return " ".join(_num(v) for v in values)


def _inertial_values(joint: Joint) -> _Inertial:
    """The joint's identified body with mass and principal moments floored for MuJoCo (module docstring)."""
    link = joint.link
    raised = []
    mass = float(link.mass)
    if not mass > MIN_MASS:
        raised.append(f"mass of {joint.name} {mass:.3g} -> {MIN_MASS:g} kg")
        mass = MIN_MASS
    inertia = link.inertia_tensor_com()
    moments, axes = np.linalg.eigh(inertia)
    if np.min(moments) < MIN_INERTIA:
        raised.append(f"principal moments of {joint.name} {np.round(moments, 15).tolist()} -> at least "
                      f"{MIN_INERTIA:g} kg m^2")
        inertia = axes @ np.diag(np.maximum(moments, MIN_INERTIA)) @ axes.T
    full = tuple(float(inertia[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
    return _Inertial(mass, tuple(float(c) for c in link.com), full, tuple(raised))


def _set_inertial(body: ET.Element, values: _Inertial, position: int | None = None) -> None:
    """Replace ``body``'s ``<inertial>`` (in its place, or first) by ``values``."""
    old = body.find("inertial")
    if old is not None:
        position = list(body).index(old)
        body.remove(old)
    if any(values.full):
        element = ET.Element("inertial", pos=_vec(values.com), mass=_num(values.mass), fullinertia=_vec(values.full))
    else:  # a body merged into its moving body: MuJoCo accepts zero inertia only as diaginertia
        element = ET.Element("inertial", pos=_vec(values.com), mass=_num(values.mass), diaginertia="0 0 0")
    body.insert(position or 0, element)


def _set_joint(element: ET.Element, joint: Joint) -> None:
    reflected = joint.drive.reflected_inertia if joint.drive is not None else 0.0
    element.set("armature", _num(reflected))
    element.set("damping", _num(joint.friction.viscous))
    element.set("frictionloss", _num(joint.friction.coulomb_level))


def not_in_mjcf(model: RobotModel, names, values) -> list[str]:
    """Header lines for what MJCF cannot hold (module docstring)."""
    out = [f"{n} = {float(v)!r}" for n, v in zip(names, values, strict=True)
           if str(n).startswith(("f0_", "comp_", "k_", "d_", "fl_", "fvm_", "fcm_", "Iam_"))]
    lines = ["Not expressible in MJCF (listed here): " + ", ".join(out)] if out else []
    nonlinear = [j.name for j in model.joints if not j.friction.is_linear]
    if nonlinear:
        lines.append(f"Friction beyond fv qd + fc sign(qd) (Stribeck, sigmoid, ripple) of {', '.join(nonlinear)}: "
                     "only its viscous part and its Coulomb level at speed are written (frictionloss: fc; a sigmoid "
                     "model's half rise, sum phi1 / 2); the whole friction blocks:")
        from robid.export.robot_file_writer import friction_block

        lines += [f"  {j.name}: {friction_block(j.friction)}" for j in model.joints if not j.friction.is_linear]
    coupled = [j.name for j in model.joints if j.drive is not None and j.drive.coupling is not None]
    if coupled:
        lines.append(f"Coupled drives of {', '.join(coupled)}: MJCF armature is per joint; the coupling terms are "
                     "listed above.")
    return lines


def _comment(header: str) -> ET.Element:
    """The header as one XML comment, through :func:`robid.io.escaping.xml_comment` (the user's text stays a
    comment: '--' split, line breaks and controls escaped)."""
    return ET.Comment(xml_comment(header))


def _text(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def _raised_lines(values: list[_Inertial]) -> list[str]:
    raised = [r for v in values for r in v.raised]
    if not raised:
        return []
    return [f"Raised for MuJoCo (a moving body needs positive mass and inertia): {'; '.join(raised)}."]


# ---- generated ------------------------------------------------------------------------------------------------


def _homogeneous(r, p) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = np.asarray(r, dtype=float)
    t[:3, 3] = np.asarray(p, dtype=float)
    return t


def _quat(r: np.ndarray) -> np.ndarray:
    """MuJoCo quaternion (w, x, y, z) of a rotation matrix, w >= 0."""
    import mujoco

    out = np.zeros(4)
    mujoco.mju_mat2Quat(out, np.ascontiguousarray(r, dtype=float).reshape(9))
    return -out if out[0] < 0 else out


def body_placement(joint: Joint) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(body transform from the previous body frame, joint position, joint axis in the body frame) with the body
    frame robid's body frame (module docstring)."""
    g = joint.geometry
    a = _homogeneous(g.a_rotation, g.a_translation)
    b = _homogeneous(g.b_rotation, g.b_translation)
    u = np.asarray(g.axis, dtype=float)
    if joint.revolute:
        offset = _homogeneous(rotation_about_axis(u, g.angle_offset), np.zeros(3))
    else:
        offset = _homogeneous(np.eye(3), u * g.displacement_offset)
    rb = b[:3, :3]
    position = -rb.T @ b[:3, 3] if joint.revolute else np.zeros(3)
    return a @ offset @ b, position, rb.T @ u


def mjcf_from_model(model: RobotModel, header: str = "") -> str:
    """A generated MJCF of ``model`` (module docstring); ``header`` becomes the leading comment."""
    root = ET.Element("mujoco", model=xml_text(model.name))
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    ET.SubElement(root, "option", gravity=_vec(model.gravity))
    parent = ET.SubElement(root, "worldbody")
    values = []
    for joint in model.joints:
        t, position, axis = body_placement(joint)
        attrs = {"name": f"link_{joint.name}", "pos": _vec(t[:3, 3])}
        quat = _quat(t[:3, :3])
        if not np.allclose(quat, [1.0, 0.0, 0.0, 0.0], rtol=0, atol=1e-16):
            attrs["quat"] = _vec(quat)
        body = ET.SubElement(parent, "body", **attrs)
        values.append(_inertial_values(joint))
        _set_inertial(body, values[-1])
        jattrs = {"name": joint.name, "type": "hinge" if joint.revolute else "slide", "pos": _vec(position),
                  "axis": _vec(axis)}
        if joint.limits.position is not None:
            jattrs["range"] = _vec(joint.limits.position)
        if joint.limits.torque:
            jattrs["actuatorfrcrange"] = _vec((-joint.limits.torque, joint.limits.torque))
        _set_joint(ET.SubElement(body, "joint", **jattrs), joint)
        parent = body
    actuator = ET.SubElement(root, "actuator")
    for joint in model.joints:
        ET.SubElement(actuator, "motor", name=f"motor_{joint.name}", joint=joint.name)
    lines = [header] if header else []
    lines += _raised_lines(values)
    lines.append("Generated by robid from the robot's geometry: each body's frame is robid's body frame of its joint.")
    root.insert(0, _comment("\n".join(lines)))
    return _text(root)
