"""MJCF robots (robid/model/mjcf_reader.py): robid's regressor times the standard parameters equals MuJoCo's own
inverse dynamics (mj_inverse, the oracle) on random states, for models that use default classes, childclass,
degrees, euler / axisangle / xyaxes / quat orientations, a slide joint, a joint away from its body origin with a
ref, geometry-inferred inertia and a welded body; armature and damping included, frictionloss zero (MuJoCo applies
it as a soft constraint). What robid cannot hold is refused with one line naming the joint or body."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robid
from robid.cli import main
from robid.errors import RobidInputError
from robid.model.loader import read_robot

DATA = Path(__file__).parent / "data" / "mjcf"
FEATURES = DATA / "features.xml"
UR10E = DATA / "ur10e_arm.xml"


def mj_inverse(path_or_model, q, qd, qdd) -> np.ndarray:
    """MuJoCo's qfrc_inverse at each state (N, nv)."""
    model = path_or_model if isinstance(path_or_model, mujoco.MjModel) else mujoco.MjModel.from_xml_path(
        str(path_or_model))
    data = mujoco.MjData(model)
    out = np.empty_like(q)
    for k in range(q.shape[0]):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[k], qd[k], qdd[k]
        mujoco.mj_inverse(model, data)
        out[k] = data.qfrc_inverse
    return out


def random_states(robot, n: int, seed: int):
    """States inside the joint ranges (MuJoCo's limit constraints stay inactive)."""
    rng = np.random.default_rng(seed)
    q = np.empty((n, robot.dof))
    for j, joint in enumerate(robot.model.joints):
        lo, hi = joint.limits.position or (-np.pi, np.pi)
        q[:, j] = rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo), n)
    return q, rng.normal(0, 1.5, q.shape), rng.normal(0, 4.0, q.shape)


def _close(a, b, rel):
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * max(1.0, float(np.max(np.abs(b)))))


@pytest.fixture(scope="module")
def features():
    return robid.load_robot(FEATURES)


def test_features_regressor_equals_mj_inverse(features):
    """Y(q, qd, qdd) theta = mj_inverse to 1e-9 of the largest torque, 40 random states; the regressor holds the
    armature (Ia_J) and damping (fv_J) columns, and frictionloss is zero."""
    q, qd, qdd = random_states(features, 40, 1)
    tau = features.regressor(q, qd, qdd) @ features.parameters
    _close(tau, mj_inverse(FEATURES, q, qd, qdd), 1e-9)
    names = features.parameter_names
    assert {"Ia_slide", "fv_wrist2", "m_wrist1"} <= set(names)
    values = dict(zip(names, features.parameters, strict=True))
    assert values["Ia_slide"] == 0.3 and values["fv_slide"] == 20.0  # the joint's own attributes
    assert values["Ia_shoulder_yaw"] == 0.4 and values["fv_wrist1"] == 0.3  # childclass and class defaults
    assert all(values[f"fc_{j}"] == 0.0 for j in features.joint_names)


def test_features_reader_fields(features):
    """Names, types, limits in SI (degrees converted), the inferred inertia of the carriage and the welded
    tool_plate merged into wrist1."""
    model = features.model
    assert model.kinematics == "mjcf" and model.name == "features-arm"
    assert features.joint_names == ["shoulder_yaw", "shoulder_pitch", "slide", "wrist1", "wrist2"]
    assert [j.type for j in model.joints] == ["revolute", "revolute", "prismatic", "revolute", "revolute"]
    assert model.joints[0].limits.position == pytest.approx((-np.radians(170), np.radians(170)))
    assert model.joints[1].geometry.angle_offset == pytest.approx(-np.radians(10))  # ref
    compiled = mujoco.MjModel.from_xml_path(str(FEATURES))
    carriage = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, "carriage")
    assert model.joints[2].link.mass == pytest.approx(compiled.body_mass[carriage], rel=1e-15)
    plate = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, "tool_plate")
    link4 = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, "link4")
    assert model.joints[3].link.mass == pytest.approx(compiled.body_mass[link4] + compiled.body_mass[plate])
    # gravity in the frame of the tilted base body
    base = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, "base")
    data = mujoco.MjData(compiled)
    mujoco.mj_kinematics(compiled, data)
    np.testing.assert_allclose(model.gravity, data.xmat[base].reshape(3, 3).T @ compiled.opt.gravity, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_features_any_state(features, seed):
    """Property: for any seed's random state, Y theta = mj_inverse (1e-9)."""
    q, qd, qdd = random_states(features, 3, seed)
    _close(features.regressor(q, qd, qdd) @ features.parameters, mj_inverse(FEATURES, q, qd, qdd), 1e-9)


def test_ur10e_like_arm_inverse_dynamics_equals_mj_inverse():
    """The UR10e-like test arm (default classes for armature, damping and force ranges): robid's nominal inverse
    dynamics equals mj_inverse to 1e-9; the torque limits are the actuators' force ranges."""
    robot = robid.load_robot(UR10E)
    q, qd, qdd = random_states(robot, 30, 2)
    _close(robot.inverse_dynamics(q, qd, qdd), mj_inverse(UR10E, q, qd, qdd), 1e-9)
    assert [j.limits.torque for j in robot.model.joints] == [330, 330, 150, 56, 56, 56]
    assert len(robot.base_parameters().names) == 58  # 36 inertial + 4 rotor + 18 friction (anchors B.1)


def _write(tmp_path: Path, body: str, name: str = "arm.xml", head: str = "") -> Path:
    path = tmp_path / name
    path.write_text(f'<mujoco model="t">{head}<option><flag contact="disable"/></option><worldbody>{body}'
                    "</worldbody></mujoco>")
    return path


_INERTIAL = '<inertial pos="0 0 0.1" mass="1" diaginertia="0.01 0.01 0.005"/>'


def test_meshes_are_never_needed(tmp_path):
    """A model whose visual meshes are absent loads; with the mesh present it is the same robot as MuJoCo's model
    compiled with the mesh (mj_inverse equal)."""
    (tmp_path / "assets").mkdir()
    cube = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0.1 0.1 0\nv 0 0 0.1\nv 0.1 0 0.1\nv 0 0.1 0.1\nv 0.1 0.1 0.1\n"
    cube += "f 1 3 2\nf 2 3 4\nf 5 6 7\nf 6 8 7\nf 1 2 5\nf 2 6 5\n"
    cube += "f 3 7 4\nf 4 7 8\nf 1 5 3\nf 3 5 7\nf 2 4 6\nf 4 8 6\n"
    (tmp_path / "assets" / "cube.obj").write_text(cube)
    body = (f'<body pos="0 0 0.3"><joint name="a" axis="0 1 0" damping="0.5" armature="0.02"/>{_INERTIAL}'
            '<geom type="mesh" mesh="cube"/><body pos="0.3 0 0"><joint name="b" axis="0 1 0"/>'
            '<geom type="capsule" size="0.03" fromto="0 0 0 0.2 0 0"/></body></body>')
    path = _write(tmp_path, body, head='<compiler meshdir="assets"/><asset><mesh name="cube" file="cube.obj"/>'
                  '<texture name="t" type="2d" file="missing.png"/><material name="m" texture="t"/></asset>')
    (tmp_path / "missing.png").write_bytes(b"")  # MuJoCo itself needs a readable texture: remove it after
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))  # an empty png is not an image: MuJoCo cannot draw this model
    (tmp_path / "missing.png").unlink()
    robot = robid.load_robot(path)
    (tmp_path / "assets" / "cube.obj").unlink()
    assert robid.load_robot(path).parameters.tolist() == robot.parameters.tolist()
    q, qd, qdd = random_states(robot, 10, 3)
    spec = mujoco.MjSpec.from_file(str(path))
    spec.delete(spec.textures[0])
    spec.materials[0].textures = [""] * len(spec.materials[0].textures)
    (tmp_path / "assets" / "cube.obj").write_text(cube)
    _close(robot.inverse_dynamics(q, qd, qdd), mj_inverse(spec.compile(), q, qd, qdd), 1e-9)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f'<body><freejoint name="float"/>{_INERTIAL}</body>', "joint 'float' is a free joint"),
        (f'<body><joint name="shoulder" type="ball"/>{_INERTIAL}</body>', "joint 'shoulder' is a ball joint"),
        (f'<body name="b1"><joint name="a"/><joint name="b" axis="0 1 0"/>{_INERTIAL}</body>',
         "body 'b1' has 2 joints"),
        (f'<body name="b1"><joint name="a"/>{_INERTIAL}<body name="l"><joint name="b"/>{_INERTIAL}</body>'
         f'<body name="r"><joint name="c"/>{_INERTIAL}</body></body>', "body 'r' does not hang from body 'l'"),
        (f'<body><joint name="a" stiffness="10"/>{_INERTIAL}</body>', "joint 'a': stiffness 10"),
        (f'<body name="b1" gravcomp="1"><joint name="a"/>{_INERTIAL}</body>', "body 'b1' has gravcomp 1"),
        ('<body name="b1"><joint name="a"/><geom type="mesh" mesh="m"/></body>',
         "bodies whose inertia MuJoCo computes from their geoms: b1"),
        (f'<body><joint name="a-b"/>{_INERTIAL}<body><joint name="a b"/>{_INERTIAL}</body></body>',
         "two joints are both named 'a_b'"),
        ("<body><geom size='0.1'/></body>", "no hinge or slide joint"),
        (f'<body><joint name="a"/>{_INERTIAL}<body><joint name="b"/>{_INERTIAL}</body></body></worldbody>'
         '<equality><joint joint1="a" joint2="b"/></equality><worldbody>', "1 equality constraint(s)"),
    ],
)
def test_what_robid_cannot_hold_is_one_line(tmp_path, capsys, body, message):
    """Ball and free joints, several joints in a body, branches, springs, gravity compensation, a missing mesh
    that the inertia needs, names that collide: one line naming it, exit status 2."""
    path = _write(tmp_path, body, head='<asset><mesh name="m" file="absent.stl"/></asset>')
    with pytest.raises(RobidInputError, match=re.escape(message)):
        read_robot(path)
    assert main(["model", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: ") and err.count("\n") == 1 and message in err


def test_not_mjcf_and_missing(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body></worldbody></mujoco>")
    assert main(["model", str(bad)]) == 2
    assert "MuJoCo cannot read this MJCF file" in capsys.readouterr().err
    assert main(["model", str(tmp_path / "none.xml")]) == 2
    assert "no such MJCF file" in capsys.readouterr().err


def test_names_become_identifiers(tmp_path):
    """Names with quotes, angle brackets or non-ASCII letters become ASCII identifiers (they name parameters
    and reach generated code); an unnamed joint takes its body's name."""
    body = (f'<body name="base&amp;1"><joint name="j&quot;&lt;1&gt;"/>{_INERTIAL}'
            f'<body name="arm-ä"><joint/>{_INERTIAL}</body></body>')
    robot = robid.load_robot(_write(tmp_path, body))
    assert robot.joint_names == ["j__1_", "arm__"]
    assert all(n.isascii() for n in robot.parameter_names)
