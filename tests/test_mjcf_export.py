"""robid export-model --format mjcf (robid/export/mjcf_writer.py, mjcf_copy.py): MuJoCo loads the written file and
its mj_inverse equals robid's inverse dynamics of the model written (MuJoCo as the independent oracle), for MJCF
files generated from DH, modified-DH and URDF robots and for copies of the robot's own MJCF."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from test_mjcf_reader import FEATURES, UR10E, _close, mj_inverse, random_states

import robid
from robid.export.mjcf_copy import mjcf_copy_with_model, relocate_assets
from robid.export.mjcf_writer import MIN_MASS, mjcf_from_model
from robid.model.robot_model import Friction

DATA = FEATURES.parent.parent


def _without_coulomb(model):
    """The model with Coulomb friction and offsets zeroed: MuJoCo's frictionloss is a soft constraint, not
    fc sign(qd), and f0 has no MJCF field."""
    joints = tuple(dataclasses.replace(j, friction=Friction(viscous=j.friction.viscous)) for j in model.joints)
    return dataclasses.replace(model, joints=joints)


@pytest.mark.parametrize("robot", ["ur10e", "rpr_dh.yaml", "rrr_mdh.yaml", "ur10e_like_wall.urdf"])
def test_generated_mjcf_equals_robid(robot, tmp_path):
    """DH (drives: armature = rotor_inertia gear_ratio^2, angle offsets), DH with a prismatic joint and tilted
    gravity, modified DH with offsets, a wall-mounted URDF: mj_inverse of the generated file = robid's inverse
    dynamics (rigid bodies, rotor inertia, viscous friction) to 1e-9 of the largest torque."""
    name = robot if "." not in robot else str(DATA / robot)
    model = _without_coulomb(robid.load_robot(name).model)
    path = tmp_path / "generated.xml"
    path.write_text(mjcf_from_model(model, "header line -- with dashes"))
    ours = robid.load_robot(model)
    q, qd, qdd = random_states(ours, 25, 7)
    _close(mj_inverse(path, q, qd, qdd), ours.inverse_dynamics(q, qd, qdd), 1e-9)
    compiled = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_allclose(compiled.opt.gravity, model.gravity)
    limited = [j for j, joint in enumerate(model.joints) if joint.limits.position is not None]
    assert all(compiled.jnt_limited[j] for j in limited)


def test_generated_mjcf_reads_back_with_robid(tmp_path):
    """robid's MJCF reader reads the generated file back to the same torques (same dynamics, other frames)."""
    model = _without_coulomb(robid.load_robot(str(DATA / "rpr_dh.yaml")).model)
    path = tmp_path / "rpr.xml"
    path.write_text(mjcf_from_model(model))
    back, ours = robid.load_robot(path), robid.load_robot(model)
    q, qd, qdd = random_states(ours, 20, 8)
    _close(back.inverse_dynamics(q, qd, qdd), ours.inverse_dynamics(q, qd, qdd), 1e-9)


def _perturbed(model, seed: int):
    """Another physically consistent model: masses, COMs, inertias, armature and damping changed."""
    rng = np.random.default_rng(seed)
    joints = []
    for j in model.joints:
        link = dataclasses.replace(j.link, mass=j.link.mass * rng.uniform(0.8, 1.2),
                                   com=tuple(np.asarray(j.link.com) + rng.normal(0, 0.01, 3)),
                                   inertia_com=tuple(np.asarray(j.link.inertia_com) * rng.uniform(0.9, 1.1)))
        drive = dataclasses.replace(j.drive, rotor_inertia=j.drive.rotor_inertia * 1.5 + 0.01)
        joints.append(dataclasses.replace(j, link=link, drive=drive, friction=Friction(viscous=rng.uniform(0, 5))))
    return dataclasses.replace(model, joints=tuple(joints))


def test_copy_of_the_mjcf_equals_robid(tmp_path):
    """A copy of the features arm (defaults, childclass, a welded body, a body with inferred inertia) with another
    model: mj_inverse of the copy = robid's inverse dynamics of that model; robid reads the copy back to the same
    standard parameters; the welded body's inertial is zero (merged into its moving body); everything else kept."""
    source = robid.load_robot(FEATURES).model
    model = _perturbed(source, 1)
    text = mjcf_copy_with_model(FEATURES, model, "identified -- header")
    path = tmp_path / "copy.xml"
    path.write_text(text)
    ours = robid.load_robot(model)
    q, qd, qdd = random_states(ours, 25, 9)
    _close(mj_inverse(path, q, qd, qdd), ours.inverse_dynamics(q, qd, qdd), 1e-9)
    back = robid.load_robot(path)
    np.testing.assert_allclose(back.parameters, ours.parameters, rtol=0, atol=1e-12 * np.max(ours.parameters))
    root = ET.fromstring(text)
    plate = next(b for b in root.iter("body") if b.get("name") == "tool_plate")
    assert plate.find("inertial").get("mass") == "0"
    assert root.find("default") is not None and root.find("option/flag").get("contact") == "disable"
    assert "identified - - header" in text


def test_copy_keeps_meshes_reachable_from_another_folder(tmp_path):
    """A model with a mesh (the inertia of one body comes from it): the copy written to another folder has its
    meshdir rewritten, and MuJoCo loads it there."""
    (tmp_path / "robot" / "meshes").mkdir(parents=True)
    (tmp_path / "robot" / "meshes" / "box.obj").write_text(
        "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0.1 0.1 0\nv 0 0 0.1\nv 0.1 0 0.1\nv 0 0.1 0.1\nv 0.1 0.1 0.1\n"
        "f 1 3 2\nf 2 3 4\nf 5 6 7\nf 6 8 7\nf 1 2 5\nf 2 6 5\nf 3 7 4\nf 4 7 8\nf 1 5 3\nf 3 5 7\nf 2 4 6\n"
        "f 4 8 6\n")
    source = tmp_path / "robot" / "arm.xml"
    source.write_text('<mujoco model="m"><compiler meshdir="meshes"/><asset><mesh name="box" file="box.obj"/>'
                      '</asset><worldbody><body name="a"><joint name="j1" axis="0 1 0"/>'
                      '<geom type="mesh" mesh="box"/><body name="b" pos="0.2 0 0"><joint name="j2" axis="0 1 0"/>'
                      '<geom type="mesh" mesh="box"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
                      "</body></body></worldbody></mujoco>")
    model = _perturbed(robid.load_robot(source).model, 2)
    out = tmp_path / "elsewhere" / "deep" / "identified.xml"
    out.parent.mkdir(parents=True)
    out.write_text(relocate_assets(mjcf_copy_with_model(source, model), source.parent, out.parent))
    assert 'meshdir="../../robot/meshes"' in out.read_text()
    ours = robid.load_robot(model)
    q, qd, qdd = random_states(ours, 10, 4)
    _close(mj_inverse(out, q, qd, qdd), ours.inverse_dynamics(q, qd, qdd), 1e-9)


def test_empty_bodies_are_raised_for_mujoco(tmp_path):
    """A body the identification leaves empty (mass 0) is written with MIN_MASS and named in the header; MuJoCo
    loads the file."""
    model = robid.load_robot(UR10E).model
    joints = list(model.joints)
    joints[5] = dataclasses.replace(joints[5], link=dataclasses.replace(joints[5].link, mass=0.0,
                                                                        inertia_com=(0.0,) * 6))
    text = mjcf_copy_with_model(UR10E, dataclasses.replace(model, joints=tuple(joints)))
    assert "mass of wrist_3_joint 0 -> 1e-09 kg" in text
    path = tmp_path / "raised.xml"
    path.write_text(text)
    compiled = mujoco.MjModel.from_xml_path(str(path))
    assert compiled.body_mass[-1] == MIN_MASS
