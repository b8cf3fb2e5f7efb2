"""Robot files that start from a URDF (``urdf: PATH``, robid/model/urdf_robot_file.py; docs/robot-file.md,
"Starting from a URDF").

Self-contained: tests/data/arm3_urdf.yaml on tests/data/arm3_meshes.urdf (meshes referenced, none present): the
drives' rotor columns, YAML friction replacing the URDF's <dynamics>, limits and link merged field by field, and the
inverse dynamics against pinocchio's RNEA on the same URDF plus the motor-side terms written out by hand
(N^T Jm N qdd, joint friction, the coupled motor's friction). With the shared data (../shared, or ROBID_SHARED):
FIGAROH's Staubli TX40 URDF with the drives of measurements/staubli_tx40/tx40.yaml gives the hand-written
modified-DH file's 61 base parameters (58 without the coupling terms), the same rotor and coupling columns, and
its inverse dynamics once the links carry the same inertial values.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from robid.errors import RobidInputError
from robid.model.loader import read_robot
from robid.model.yaml_reader import robot_from_dict
from robid.robot import Robot

DATA = Path(__file__).parent / "data"
ARM3 = DATA / "arm3_urdf.yaml"
ARM3_URDF = DATA / "arm3_meshes.urdf"
ROOT = Path(__file__).resolve().parents[1]
TX40_HAND = ROOT / "measurements" / "staubli_tx40" / "tx40.yaml"
TX40_URDF_FILE = DATA / "tx40_urdf.yaml"
TX40_URDF = Path("anchors") / "data" / "figaroh-examples" / "examples" / "staubli_TX40" / "urdf" / \
    "tx40_mdh_modified.urdf"


def _arm3() -> dict:
    return yaml.safe_load(ARM3.read_text())


def _load(data: dict, folder: Path = DATA):
    return robot_from_dict(copy.deepcopy(data), str(folder / "arm3_urdf.yaml"), folder)


def _states(n: int, dof: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (n, dof)), rng.uniform(-2, 2, (n, dof)), rng.uniform(-8, 8, (n, dof))


# ------------------------------------------------------------------------------------------ reading
def test_urdf_with_missing_meshes_loads_alone_and_from_a_robot_file():
    assert not (DATA / "meshes").exists()
    alone = read_robot(ARM3_URDF)
    model = read_robot(ARM3)
    assert alone.joint_names == model.joint_names == ["joint_1", "joint_2", "joint_3"]
    assert model.kinematics == "urdf" and model.source == str(ARM3) and model.name == "arm3-drives"
    assert alone.drive_couplings == () and alone.joints[0].drive is None
    assert model.drive_couplings == ((2, 1, 0.8),)
    # the placement is the URDF's: same body frames
    q = np.array([0.3, -0.7, 1.1])
    for a, b in zip(alone.forward_kinematics(q), model.forward_kinematics(q), strict=True):
        assert np.array_equal(a, b)


def test_drives_add_rotor_and_coupling_columns():
    plain = Robot(read_robot(ARM3_URDF))
    robot = Robot(read_robot(ARM3))
    added = [n for n in robot.parameter_names if n not in plain.parameter_names]
    assert added == ["Ia_joint_1", "Ia_joint_2", "Ia_joint_3", "Iam_joint_3", "fvm_joint_3", "fcm_joint_3"]
    p = dict(zip(robot.parameter_names, robot.parameters, strict=True))
    assert p["Ia_joint_1"] == pytest.approx(2.0e-4 * 100**2)
    assert p["Ia_joint_2"] == pytest.approx(1.0e-4 * 80**2)
    assert p["Iam_joint_3"] == p["Ia_joint_3"] == pytest.approx(5.0e-5 * 50**2)
    assert (p["fvm_joint_3"], p["fcm_joint_3"]) == (0.3, 0.6)
    q, qd, qdd = _states(30, 3, 1)
    Y = robot.regressor(q, qd, qdd)
    names = robot.parameter_names
    for j in range(3):
        assert np.array_equal(Y[:, :, names.index(f"Ia_joint_{j + 1}")], qdd * np.eye(3)[j])
    # the rigid columns are the URDF's alone
    assert np.allclose(Y[:, :, :30], plain.regressor(q, qd, qdd)[:, :, :30], rtol=1e-13, atol=1e-13)


def test_yaml_friction_replaces_the_urdf_dynamics_and_the_rest_is_kept():
    model = read_robot(ARM3)
    j1, j2, j3 = model.joints
    assert (j1.friction.viscous, j1.friction.coulomb) == (0.5, 1.0)  # the URDF's <dynamics>
    assert (j2.friction.viscous, j2.friction.coulomb, j2.friction.offset) == (3.0, 4.0, 0.5)  # the robot file's
    assert (j3.friction.viscous, j3.friction.coulomb) == (0.3, 0.7)
    assert j1.limits.position == (-3.0, 3.0) and j1.limits.velocity == 2.5 and j1.limits.torque == 150
    assert j1.limits.acceleration == 6.0
    assert j1.controller.position_gain == 2.0e4 and j1.drive.torque_constant == 0.3
    alone = read_robot(ARM3_URDF)
    assert alone.joints[2].link.mass == pytest.approx(1.9)  # link_3 + tool0 merged
    assert j3.link.mass == 1.8 and j3.link.com == alone.joints[2].link.com
    assert j3.link.inertia_com == alone.joints[2].link.inertia_com
    data = _arm3()
    data["joints"][1]["friction"] = {"model": "stribeck", "viscous": 1.0, "coulomb": 2.0, "static": 3.0,
                                     "stribeck_velocity": 0.1}
    data["joints"][0]["limits"] = {"position": ["-90deg", "90deg"], "velocity": "60deg"}
    data["joints"][2]["link"] = {"com": [0, 0.1, 0], "inertia": [0.02, 0.001, 0.02, 0, 0, 0]}
    model = _load(data)
    assert model.joints[1].friction.model == "stribeck" and model.joints[1].friction.static == 3.0
    assert model.joints[0].limits.position == pytest.approx((-math.pi / 2, math.pi / 2))
    assert model.joints[0].limits.velocity == pytest.approx(math.pi / 3) and model.joints[0].limits.torque == 150
    assert model.joints[2].link.mass == pytest.approx(1.9) and model.joints[2].link.com == (0, 0.1, 0)


def test_every_joint_block_of_a_dh_file_is_accepted():
    data = _arm3()
    data["joints"][1]["elasticity"] = {"stiffness": 2.0e5, "damping": 30.0}
    data["joints"][1]["compensator"] = {"type": "spring", "base_point": [0.0, 0.0, 0.1],
                                        "link_point": [0.1, 0.0, 0.0], "stiffness": 1.0e4, "free_length": 0.3}
    data["joints"][0]["compensator"] = {"type": "fourier", "order": 2, "coefficients": [1.0, 0.5]}
    model = _load(data)
    assert model.joints[1].elasticity.stiffness == 2.0e5 and model.joints[1].compensator.type == "spring"
    assert model.joints[0].compensator.coefficients == (1.0, 0.5)


def test_gravity_name_and_a_file_without_joints(tmp_path):
    data = {"robid": 1, "urdf": str(ARM3_URDF), "gravity": [0, "9.81", 0]}
    model = robot_from_dict(data, str(tmp_path / "wall.yaml"), tmp_path)
    assert model.gravity == (0.0, 9.81, 0.0) and model.name == "wall"
    assert model.joints == read_robot(ARM3_URDF).joints
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "r.yaml").write_text("robid: 1\nname: r\nurdf: ../arm.urdf\n")
    (tmp_path / "arm.urdf").write_text(ARM3_URDF.read_text())
    assert read_robot(tmp_path / "sub" / "r.yaml").joint_names == ["joint_1", "joint_2", "joint_3"]


@pytest.mark.parametrize("patch, message", [
    (lambda d: d["joints"][2].update(name="joint_33"),
     r"arm3_urdf\.yaml: joints\[2\]\.name: no movable joint 'joint_33' in arm3_meshes\.urdf \(did you mean "
     r"'joint_3'\?; allowed: joint_1, joint_2, joint_3\)"),
    (lambda d: d["joints"][2].update(name="joint-3"),
     r"joints\[2\]\.name: robid names the URDF joint 'joint-3' 'joint_3'"),
    (lambda d: d["joints"][0].update(name="tool_mount"), r"joints\[0\]\.name: no movable joint 'tool_mount'"),
    (lambda d: d["joints"][1].update(name="joint_1"),
     r"joints\[1\]\.name: joint 'joint_1' already given in joints\[0\]"),
    (lambda d: d["joints"][0].update(alpha="90deg"), r"joints\[0\]\.alpha: not with urdf \(the URDF places the joint"),
    (lambda d: d["joints"][0].update(type="prismatic"), r"joints\[0\]\.type: not with urdf"),
    (lambda d: d["joints"][0].update(drvie={}), r"joints\[0\]: unknown field 'drvie' \(did you mean 'drive'\?"),
    (lambda d: d.update(kinematics="mdh"), r"arm3_urdf\.yaml: kinematics: not with urdf"),
    (lambda d: d.update(urdf="missing.urdf"), r"urdf: no such URDF file .*missing\.urdf"),
    (lambda d: d.update(urdf=3), r"urdf: expected the path of a URDF file"),
    (lambda d: d.update(joints=[]), r"joints: expected a non-empty list"),
    (lambda d: d["joints"][2]["drive"]["coupling"].update(joint="joint_9"),
     r"joints\[2\]\.drive\.coupling\.joint: no joint named 'joint_9'"),
    (lambda d: d["joints"][2]["drive"]["coupling"].update(joint="joint_3"),
     r"joints\[2\]\.drive\.coupling\.joint: a drive cannot be coupled to its own joint"),
    (lambda d: d["joints"][1]["friction"].update(viscous=-1), r"joints\[1\]\.friction\.viscous: must be >= 0"),
    (lambda d: d["joints"][0].update(limits={"position": [1, -1]}), r"joints\[0\]\.limits\.position: min"),
    (lambda d: d["joints"][2].update(link={"inertia": [1, 0.001, 0.001, 0, 0, 0]}),
     r"joints\[2\]\.link.*triangle"),
])
def test_errors_name_the_file_and_field(patch, message):
    data = _arm3()
    patch(data)
    with pytest.raises(RobidInputError, match=message):
        _load(data)


def test_urdf_joints_that_robid_would_name_alike_are_refused(tmp_path):
    path = tmp_path / "twins.urdf"
    path.write_text(ARM3_URDF.read_text().replace('"joint_2"', '"joint.3"').replace('"joint-3"', '"joint_3"'))
    with pytest.raises(RobidInputError, match=r"twins\.urdf: two movable joints are both named 'joint_3' by robid"):
        read_robot(path)


def test_coupling_entry_order_is_the_files_not_the_chains():
    """A coupling error names the entry of the robot file, whatever its place in the chain."""
    data = _arm3()
    data["joints"] = [data["joints"][2], data["joints"][0]]
    data["joints"][0]["drive"]["coupling"]["joint"] = "joint_0"
    with pytest.raises(RobidInputError, match=r"joints\[0\]\.drive\.coupling\.joint: no joint named 'joint_0'"):
        _load(data)


# ----------------------------------------------------------------------------- inverse dynamics
def test_inverse_dynamics_is_pinocchio_rnea_plus_the_drives_written_by_hand():
    """tau = RNEA (pinocchio, the same URDF, link_3's mass replaced as in the robot file) + N^T Jm N qdd (rotors
    through the transmission theta_m = N q, N = diag(100, -80, 50) with N[3, 2] = 40, rho = 40/50) + joint
    friction fv qd + fc sign(qd) + f0 + the coupled motor's friction: viscous fvm [[rho^2, rho], [rho, 1]] on
    (qd2, qd3) without the (3, 3) entry, which is joint 3's own fv (docs/model.md, "Coupled drives"), and Coulomb
    fcm sign(qd3 + rho qd2) on joints (2, 3) with weights (rho, 1)."""
    pin = pytest.importorskip("pinocchio")
    pmodel = pin.buildModelFromUrdf(str(ARM3_URDF))
    inertia = pmodel.inertias[3]
    pmodel.inertias[3] = pin.Inertia(1.8, inertia.lever, inertia.inertia)
    pdata = pmodel.createData()
    robot = Robot(read_robot(ARM3))
    q, qd, qdd = _states(40, 3, 7)
    tau = robot.inverse_dynamics(q, qd, qdd)
    ratios = np.array([100.0, -80.0, 50.0])
    jm = np.array([2.0e-4, 1.0e-4, 5.0e-5])
    transmission = np.diag(ratios)
    transmission[2, 1] = 40.0
    rho = 40.0 / 50.0
    fv, fc, f0 = np.array([0.5, 3.0, 0.3]), np.array([1.0, 4.0, 0.7]), np.array([0.0, 0.5, 0.0])
    fvm, fcm = 0.3, 0.6
    expected = np.empty_like(tau)
    for k in range(q.shape[0]):
        rnea = pin.rnea(pmodel, pdata, q[k], qd[k], qdd[k])
        rotors = transmission.T @ (jm * (transmission @ qdd[k]))
        friction = fv * qd[k] + fc * np.sign(qd[k]) + f0
        v = qd[k, 2] + rho * qd[k, 1]
        motor = np.array([0.0, fvm * (rho * qd[k, 2] + rho**2 * qd[k, 1]), fvm * rho * qd[k, 1]])
        motor += fcm * np.sign(v) * np.array([0.0, rho, 1.0])
        expected[k] = rnea + rotors + friction + motor
    err = np.abs(tau - expected).max()
    assert err <= 1e-10 * np.abs(expected).max(), err


# --------------------------------------------------------------- Staubli TX40: FIGAROH's URDF + drives
@pytest.fixture(scope="module")
def tx40(request):
    from conftest import shared_dir

    shared = shared_dir()
    if shared is None or not (shared / TX40_URDF).is_file():
        pytest.skip(f"../shared/{TX40_URDF} (FIGAROH's TX40 URDF) not present; set ROBID_SHARED")
    data = yaml.safe_load(TX40_URDF_FILE.read_text())
    data["urdf"] = str(shared / TX40_URDF)
    return data, read_robot(TX40_HAND)


def test_tx40_robot_file_points_at_the_shared_urdf():
    """The committed file's relative path reaches the URDF when ../shared sits next to the repository."""
    data = yaml.safe_load(TX40_URDF_FILE.read_text())
    target = (TX40_URDF_FILE.parent / data["urdf"]).resolve()
    assert target.parts[-len(TX40_URDF.parts):] == TX40_URDF.parts
    if not target.is_file():
        pytest.skip(f"{target}: FIGAROH's TX40 URDF not present")
    assert read_robot(TX40_URDF_FILE).dof == 6


def test_tx40_from_the_urdf_has_the_hand_written_files_base_parameters(tx40):
    """FIGAROH's URDF + the drives, friction and wrist coupling of tx40.yaml: 87 standard and 61 base parameters
    like the hand-written modified-DH file (58 without drive_coupling: FIGAROH's count from the same URDF), and the
    same rotor, friction and coupling columns (the joint angles are the same: tests/test_tx40_realdata.py)."""
    data, hand_model = tx40
    model = robot_from_dict(copy.deepcopy(data), str(TX40_URDF_FILE))
    assert model.drive_couplings == hand_model.drive_couplings == ((5, 4, 1.0),)
    urdf, hand = Robot(model), Robot(hand_model)
    assert len(urdf.parameter_names) == len(hand.parameter_names) == 87
    assert len(urdf.base_parameters().names) == len(hand.base_parameters().names) == 61
    terms = ("rigid", "rotor", "viscous", "coulomb", "offset")
    assert len(Robot(model, terms).base_parameters().names) == len(Robot(hand_model, terms).base_parameters().names)
    assert len(Robot(model, terms).base_parameters().names) == 58
    q, qd, qdd = _states(50, 6, 11)
    Yu, Yh = urdf.regressor(q, qd, qdd), hand.regressor(q, qd, qdd)
    assert np.array_equal(Yu[:, :, 60:], Yh[:, :, 60:])  # Ia, fv, fc, f0, Iam, fvm, fcm
    assert np.array_equal(urdf.parameters[60:], hand.parameters[60:])
    # the same kinematics: the rigid columns agree to rounding (the inertial values differ: URDF vs BIRDy)
    assert np.allclose(Yu[:, :, :60], Yh[:, :, :60], rtol=1e-9, atol=1e-9 * np.abs(Yh).max())


def test_tx40_from_the_urdf_with_the_hand_written_links_has_the_same_inverse_dynamics(tx40):
    """With link blocks carrying the hand-written file's inertial values (BIRDy's, in the same body frames), the
    URDF-based file is the same robot: equal inverse dynamics at random states."""
    data, hand_model = tx40
    data = copy.deepcopy(data)
    for entry, joint in zip(data["joints"], hand_model.joints, strict=True):
        link = joint.link
        entry["link"] = {"mass": link.mass, "com": list(link.com), "inertia": list(link.inertia_com)}
    urdf, hand = Robot(robot_from_dict(data, str(TX40_URDF_FILE))), Robot(hand_model)
    q, qd, qdd = _states(200, 6, 12)
    tau_u, tau_h = urdf.inverse_dynamics(q, qd, qdd), hand.inverse_dynamics(q, qd, qdd)
    err = np.abs(tau_u - tau_h).max()
    assert err <= 1e-9 * np.abs(tau_h).max(), err
