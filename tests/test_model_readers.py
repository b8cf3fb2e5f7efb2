"""Robot readers (YAML, URDF): bad files give a RobidInputError naming the file and the field; good files give
the geometry, units, merged bodies and gravity that independent computations (own DH products, pinocchio)
give."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from oracles import lagrangian as lag

from robid.errors import RobidInputError
from robid.model.loader import read_robot

DATA = Path(__file__).parent / "data"

GOOD_YAML = """\
robid: 1
name: t
kinematics: dh
joints:
  - name: A1
    a: 0.3
    alpha: "90deg"
    d: 0.2
    link: {mass: 2.0, com: [0.1, 0, 0], inertia: [0.1, 0.1, 0.1, 0, 0, 0]}
  - name: A2
    a: 0.25
    link: {mass: 1.0, com: [-0.1, 0, 0], inertia: [0.02, 0.03, 0.04, 0, 0, 0]}
"""

#: (case id, replace this, by that, substrings the message must contain)
BAD_YAML = [
    ("negative-mass", "mass: 2.0", "mass: -2.0", ["joints[0].link.mass"]),
    (
        "triangle-inequality",
        "inertia: [0.1, 0.1, 0.1,",
        "inertia: [0.1, 0.1, 0.5,",
        ["joints[0].link.inertia", "triangle"],
    ),
    (
        "not-positive-semidefinite",
        "inertia: [0.1, 0.1, 0.1, 0, 0, 0]",
        "inertia: [0.1, 0.1, 0.1, 0.5, 0, 0]",
        ["joints[0].link.inertia"],
    ),
    (
        "inertia-length",
        "inertia: [0.02, 0.03, 0.04, 0, 0, 0]",
        "inertia: [0.02, 0.03, 0.04, 0, 0]",
        ["joints[1].link.inertia"],
    ),
    ("com-length", "com: [-0.1, 0, 0]", "com: [-0.1, 0]", ["joints[1].link.com"]),
    ("unknown-kinematics", "kinematics: dh", "kinematics: craig", ["kinematics", "craig"]),
    ("unknown-joint-field", "    a: 0.25", "    lenght: 0.25", ["joints[1]", "lenght"]),
    ("unknown-top-field", "name: t", "name: t\ngravitation: [0, 0, -9.81]", ["gravitation"]),
    ("unknown-link-field", "com: [0.1, 0, 0],", "com: [0.1, 0, 0], colour: red,", ["joints[0].link", "colour"]),
    ("unknown-joint-type", "  - name: A2\n", "  - name: A2\n    type: spherical\n", ["joints[1].type", "spherical"]),
    ("bad-unit", 'alpha: "90deg"', 'alpha: "90degrees"', ["joints[0].alpha", "unit"]),
    ("bad-number", 'alpha: "90deg"', 'alpha: "ninety"', ["joints[0].alpha"]),
    ("bad-length-unit", "d: 0.2", 'd: "200 furlongs"', ["joints[0].d"]),
    ("schema-version", "robid: 1", "robid: 2", ["robid"]),
    ("duplicate-joint", "  - name: A2", "  - name: A1", ["joints[1].name"]),
    ("malformed-yaml", "joints:\n", "joints: [\n", ["YAML"]),
    ("no-joints", "joints:\n", "joints: []\nold_joints:\n", ["old_joints"]),
]


@pytest.mark.parametrize("case,old,new,needles", BAD_YAML, ids=[c[0] for c in BAD_YAML])
def test_bad_yaml_is_an_input_error_naming_the_field(tmp_path, case, old, new, needles):
    assert old in GOOD_YAML, case
    path = tmp_path / f"{case}.yaml"
    path.write_text(GOOD_YAML.replace(old, new, 1))
    with pytest.raises(RobidInputError) as info:
        read_robot(path)
    message = str(info.value)
    assert str(path) in message, message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_good_yaml_template_reads(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(GOOD_YAML)
    assert read_robot(path).joint_names == ["A1", "A2"]


def _urdf(body: str) -> str:
    return f'<?xml version="1.0"?>\n<robot name="t">\n{body}\n</robot>\n'


def _link(name, mass=1.0, inertia='ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"'):
    return (
        f'<link name="{name}"><inertial><origin xyz="0 0 0.1"/><mass value="{mass}"/>'
        f"<inertia {inertia}/></inertial></link>"
    )


def _joint(name, parent, child, kind="revolute", axis="0 0 1", origin='xyz="0 0 0.2" rpy="0 0 0"'):
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin {origin}/><axis xyz="{axis}"/></joint>'
    )


GOOD_URDF = "\n".join([_link("base"), _joint("j1", "base", "l1"), _link("l1"), _joint("j2", "l1", "l2"), _link("l2")])

BAD_URDF = [
    ("malformed-xml", GOOD_URDF.replace("</link>", "", 1), ["XML"]),
    ("negative-mass", GOOD_URDF.replace('<mass value="1.0"/>', '<mass value="-1.0"/>', 1), ["'base'", "mass"]),
    ("triangle-inequality", GOOD_URDF.replace('izz="0.1"', 'izz="0.5"', 2), ["'base'", "inertia", "triangle"]),
    ("branching-chain", GOOD_URDF + _joint("j3", "l1", "l3") + _link("l3"), ["'l1'", "branch"]),
    (
        "unsupported-joint-type",
        GOOD_URDF.replace('name="j2" type="revolute"', 'name="j2" type="floating"'),
        ["'j2'", "floating"],
    ),
    ("zero-axis", GOOD_URDF.replace('axis xyz="0 0 1"', 'axis xyz="0 0 0"', 1), ["'j1'", "axis"]),
    ("unknown-link", GOOD_URDF.replace('<child link="l2"/>', '<child link="l9"/>'), ["'j2'", "l9"]),
    ("bad-origin", GOOD_URDF.replace('xyz="0 0 0.2"', 'xyz="0 0 abc"', 1), ["'j1'", "origin"]),
    ("bad-mass-number", GOOD_URDF.replace('<mass value="1.0"/>', '<mass value="heavy"/>', 1), ["'base'", "mass"]),
]


@pytest.mark.parametrize("case,text,needles", BAD_URDF, ids=[c[0] for c in BAD_URDF])
def test_bad_urdf_is_an_input_error_naming_the_field(tmp_path, case, text, needles):
    path = tmp_path / f"{case}.urdf"
    path.write_text(_urdf(text))
    with pytest.raises(RobidInputError) as info:
        read_robot(path)
    message = str(info.value)
    assert str(path) in message, message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"


def test_good_urdf_template_reads(tmp_path):
    path = tmp_path / "good.urdf"
    path.write_text(_urdf(GOOD_URDF))
    assert read_robot(path).joint_names == ["j1", "j2"]


def test_missing_file_and_unknown_robot_name():
    with pytest.raises(RobidInputError, match="no such"):
        read_robot(DATA / "does_not_exist.yaml")
    with pytest.raises(RobidInputError, match="not a robot file"):
        read_robot("no_such_builtin_robot")


# ------------------------------------------------------------------------------------------ good files
def test_unit_strings_equal_si_numbers(tmp_path):
    with_units = GOOD_YAML.replace("a: 0.3", 'a: "300mm"').replace("d: 0.2", 'd: "0.2m"')
    with_units = with_units.replace(
        "  - name: A2\n",
        '  - name: A2\n    offset: "-20deg"\n    limits: {position: ["-170deg", "170deg"], velocity: "120deg"}\n',
    )
    path = tmp_path / "units.yaml"
    path.write_text(with_units)
    model = read_robot(path)
    g1, g2 = model.joints[0].geometry, model.joints[1].geometry
    # standard DH revolute: B = Tz(d) Tx(a) Rx(alpha), exact zeros at 90 deg
    np.testing.assert_allclose(g1.b_translation, (0.3, 0.0, 0.2), rtol=0, atol=1e-15)
    assert np.array_equal(np.array(g1.b_rotation), np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=float))
    assert g2.angle_offset == pytest.approx(-20 * math.pi / 180, abs=1e-15)
    limits = model.joints[1].limits
    assert limits.position == pytest.approx((-170 * math.pi / 180, 170 * math.pi / 180), abs=1e-15)
    assert limits.velocity == pytest.approx(120 * math.pi / 180, abs=1e-15)


@pytest.mark.parametrize("filename", ["rpr_dh.yaml", "rrr_mdh.yaml", "planar_2r.yaml"])
def test_yaml_forward_kinematics_matches_dh_written_out(filename):
    """robid's A/axis/B geometry vs the DH products multiplied out by the oracle (PyYAML, own units)."""
    model = read_robot(DATA / filename)
    oracle = lag.from_dh_yaml(DATA / filename)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = np.array([rng.uniform(-3, 3) if j.type == "revolute" else rng.uniform(-0.3, 0.3) for j in model.joints])
        for mine, ref in zip(model.forward_kinematics(q), oracle.forward_kinematics(q), strict=True):
            np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-12)
    gravity = yaml.safe_load((DATA / filename).read_text())["gravity"]
    assert model.gravity == pytest.approx([lag.quantity(g) for g in gravity], abs=1e-15)


@pytest.mark.parametrize("filename", ["ur10e_like.urdf", "panda_gaz.urdf", "merge_fixed.urdf"])
def test_urdf_forward_kinematics_matches_pinocchio(filename):
    """robid body frame i = URDF child link frame of movable joint i = pinocchio joint frame i."""
    pin = pytest.importorskip("pinocchio")
    model = read_robot(DATA / filename)
    pmodel = pin.buildModelFromUrdf(str(DATA / filename))
    data = pmodel.createData()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = rng.uniform(-3, 3, model.dof)
        pin.forwardKinematics(pmodel, data, q)
        for k, pose in enumerate(model.forward_kinematics(q), start=1):
            np.testing.assert_allclose(pose, data.oMi[k].homogeneous, rtol=0, atol=1e-12)


def test_urdf_fixed_joints_are_merged_and_mass_is_preserved():
    """merge_fixed.urdf: massless spacer and adapter before j2, a sensor side branch on link2, a flange and a
    tool after j3. Every link below the first movable joint keeps its mass; base_link stays on the ground."""
    model = read_robot(DATA / "merge_fixed.urdf")
    assert model.joint_names == ["j1", "j2", "j3"]
    masses = [j.link.mass for j in model.joints]
    assert masses == pytest.approx([3.0 + 0.8, 2.2 + 0.3, 1.1 + 0.5], abs=1e-12)
    assert sum(masses) == pytest.approx(7.9, abs=1e-12)
    # the merged bodies' first moments equal the sum over the URDF links, placed by the oracle's own URDF
    # kinematics (fixed joints kept as separate bodies there)
    oracle = lag.bodies_from_urdf(DATA / "merge_fixed.urdf")
    q = np.array([0.3, -0.7, 1.1])
    poses = oracle.forward_kinematics(q)
    robid_poses = model.forward_kinematics(q)
    owner = {"spacer": 0, "adapter": 0, "j1": 0, "j2": 1, "sensor": 1, "j3": 2, "flange": 2, "tool": 2}
    for k in range(3):
        first_moment = np.zeros(3)
        for body, pose in zip(oracle.bodies, poses, strict=True):
            if owner.get(body.name) == k:
                first_moment += body.mass * (pose[:3, :3] @ np.asarray(body.com) + pose[:3, 3])
        joint = model.joints[k]
        mine = joint.link.mass * (robid_poses[k][:3, :3] @ np.asarray(joint.link.com) + robid_poses[k][:3, 3])
        np.testing.assert_allclose(mine, first_moment, rtol=0, atol=1e-12)


def test_wall_mount_rotates_gravity_into_the_base_frame():
    floor = read_robot(DATA / "ur10e_like.urdf")
    wall = read_robot(DATA / "ur10e_like_wall.urdf")
    assert floor.gravity == pytest.approx((0.0, 0.0, -9.81), abs=1e-15)
    # world -> base_link pitched by +90 deg: g_base = Ry(pi/2)^T (0, 0, -9.81) = (9.81, 0, 0)
    assert wall.gravity == pytest.approx((9.81, 0.0, 0.0), abs=1e-12)
    # the mount changes gravity only, not the joint placements in the base frame
    q = np.linspace(-1.0, 1.0, 6)
    for a, b in zip(floor.forward_kinematics(q), wall.forward_kinematics(q), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)


def test_tilted_mount_gravity():
    """rpr_prismatic.urdf: world -> base_link rpy (0.3, -0.2, 0.1); g_base = R^T g_world, R = Rz Ry Rx."""
    model = read_robot(DATA / "rpr_prismatic.urdf")
    r = lag.rpy(0.3, -0.2, 0.1)[:3, :3]
    np.testing.assert_allclose(model.gravity, r.T @ np.array([0.0, 0.0, -9.81]), rtol=0, atol=1e-12)
    assert [j.type for j in model.joints] == ["revolute", "prismatic", "revolute"]
    # axes are unit and expressed in the frame after A: j2 along y of its origin frame, j3 along -z
    assert model.joints[1].geometry.axis == pytest.approx((0.0, 1.0, 0.0), abs=1e-15)
    assert model.joints[2].geometry.axis == pytest.approx((0.0, 0.0, -1.0), abs=1e-15)


# ------------------------------------------------------------------------------------------ known reader gaps
# problems found while writing these tests, fixed in robid since
@pytest.mark.parametrize(
    "old,new,field", [("a: 0.3", 'a: "90deg"', "joints[0].a"), ('alpha: "90deg"', 'alpha: "300mm"', "joints[0].alpha")]
)
def test_unit_of_the_wrong_dimension_is_rejected(tmp_path, old, new, field):
    path = tmp_path / "dimension.yaml"
    path.write_text(GOOD_YAML.replace(old, new, 1))
    with pytest.raises(RobidInputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        read_robot(path)


def test_urdf_link_violating_triangle_inequality_is_rejected_even_when_merged(tmp_path):
    text = (DATA / "merge_fixed.urdf").read_text()
    good = 'ixx="0.003307" ixy="-0.000195" ixz="0.000463" iyy="0.003008" iyz="-0.000761" izz="0.004299"'
    assert good in text
    path = tmp_path / "bad_tool.urdf"
    path.write_text(text.replace(good, 'ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.004"'))
    with pytest.raises(RobidInputError, match="tool"):
        read_robot(path)


def test_urdf_error_in_fixed_side_branch_names_the_file(tmp_path):
    text = (DATA / "merge_fixed.urdf").read_text()
    origin = '<origin xyz="0.15 0.05 0.0" rpy="0.0 0.4 -0.3"/>'
    assert origin in text
    path = tmp_path / "bad_sensor.urdf"
    path.write_text(text.replace(origin, '<origin xyz="0.15 0.05 abc" rpy="0.0 0.4 -0.3"/>'))
    with pytest.raises(RobidInputError) as info:
        read_robot(path)
    assert str(path) in str(info.value) and "sensor_joint" in str(info.value)
