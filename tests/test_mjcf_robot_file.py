"""Robot files that start from an MJCF file (``mjcf: PATH``, docs/robot-file.md "Starting from a URDF"): the
joints entries add to the MJCF's joints by name, exactly as with ``urdf:``. The overridden robot equals MuJoCo's
mj_inverse of the same MJCF edited through MuJoCo's own model specification (MjSpec)."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest
from test_mjcf_reader import UR10E, mj_inverse, random_states

import robid
from robid.errors import RobidInputError
from robid.model.loader import read_robot


def _robot_file(tmp_path, text: str):
    path = tmp_path / "arm.yaml"
    path.write_text(f"robid: 1\nmjcf: {UR10E}\n" + text)
    return path


def test_overrides_equal_the_edited_mjcf(tmp_path):
    """drive (gear ratio and rotor inertia: armature = rotor_inertia gear_ratio^2), friction (damping) and link
    mass given in the robot file; the other joints keep the MJCF's values."""
    path = _robot_file(tmp_path, """
name: arm-with-drives
joints:
  - name: elbow_joint
    drive: {gear_ratio: 101, rotor_inertia: 6.0e-5, torque_constant: 0.09}
    friction: {viscous: 4.0}
    link: {mass: 4.5}
    limits: {velocity: 3.0}
""")
    robot = robid.load_robot(path)
    assert robot.name == "arm-with-drives" and robot.model.source == str(path) and robot.model.kinematics == "mjcf"
    elbow = robot.model.joints[2]
    assert elbow.drive.torque_constant == 0.09 and elbow.limits.velocity == 3.0 and elbow.limits.torque == 150
    spec = mujoco.MjSpec.from_file(str(UR10E))
    joint = spec.joint("elbow_joint")
    joint.armature = 6.0e-5 * 101**2
    joint.damping = [4.0, 0.0, 0.0] if np.ndim(joint.damping) else 4.0  # MuJoCo 4: with its polynomial terms
    spec.body("forearm_link").mass = 4.5
    q, qd, qdd = random_states(robot, 20, 5)
    expected = mj_inverse(spec.compile(), q, qd, qdd)
    np.testing.assert_allclose(robot.inverse_dynamics(q, qd, qdd), expected, rtol=0,
                               atol=1e-9 * np.max(np.abs(expected)))


def test_gravity_and_errors(tmp_path):
    robot = robid.load_robot(_robot_file(tmp_path, "gravity: [0, 9.81, 0]\n"))
    assert robot.model.gravity == (0.0, 9.81, 0.0)
    cases = {
        "joints:\n  - {name: elbow, drive: {gear_ratio: 2}}\n": "no movable joint 'elbow' in ur10e_arm.xml",
        "joints:\n  - {name: elbow_joint, alpha: 0}\n": "joints[0].alpha: not with mjcf (the MJCF file places",
        "kinematics: dh\n": "kinematics: not with mjcf",
        "urdf: x.urdf\n": "urdf and mjcf: give one of them",
    }
    for text, message in cases.items():
        with pytest.raises(RobidInputError, match=re.escape(message)):
            read_robot(_robot_file(tmp_path, text))
    missing = tmp_path / "missing.yaml"
    missing.write_text("robid: 1\nmjcf: nowhere.xml\n")
    with pytest.raises(RobidInputError, match="no such MJCF file"):
        read_robot(missing)
