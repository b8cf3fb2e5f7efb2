"""robid export-model: the identified model in a URDF, a robot file, JSON and standalone feed-forward source.

The URDF is checked with pinocchio's own URDF parser and RNEA (an independent formulation): its torque plus the
armature and friction read back from the same file equals robid's prediction with the identified base values,
on random states, to 1e-9 relative. The generated sources are imported / compiled and compared the same way.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from test_report_html import _measurement, _trajectory

import robid
from robid.cli import main
from robid.defaults import DEFAULT_MIN_SPEED
from robid.export import export_model
from robid.export.identified_model import identified_model
from robid.export.standard_set import exported_standard_set
from robid.export.urdf_writer import read_transmissions, rpy_from_matrix, urdf_copy_with_model, urdf_from_model
from robid.identification import IdentificationOptions, run_identification
from robid.io.result_file import write_result
from robid.model.robot_model import rotation_about_axis
from robid.model.urdf_reader import read_robot_urdf
from robid.signals import ProcessingOptions

pin = pytest.importorskip("pinocchio")

DATA = __import__("pathlib").Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def ur10e_results(tmp_path_factory):
    """UR10e identified from a simulated run: the WLS estimate and the physically consistent one."""
    folder = tmp_path_factory.mktemp("export")
    robot = robid.load_robot("ur10e")
    _measurement(robot, _trajectory(robot, 1), folder / "id.csv", 11)
    out = {"robot": robot, "folder": folder}
    for method in ("wls", "consistent"):
        options = IdentificationOptions(method=method, processing=ProcessingOptions(min_speed=DEFAULT_MIN_SPEED))
        record = run_identification(robot, [folder / "id.csv"], options).record
        write_result(folder / f"{method}.json", record)
        out[method] = record
    return out


def _states(model, n: int, seed: int):
    rng = np.random.default_rng(seed)
    dof = model.dof
    q = rng.uniform(-np.pi, np.pi, (n, dof))
    for j, joint in enumerate(model.joints):
        if not joint.revolute:
            lo, hi = joint.limits.position
            q[:, j] = rng.uniform(lo, hi, n)
    return q, rng.normal(0, 1.5, (n, dof)), rng.normal(0, 4.0, (n, dof))


def _pinocchio_torque(urdf_text: str, names, standard_values, q, qd, qdd, gravity: float = 9.81) -> np.ndarray:
    """pinocchio RNEA on the URDF, plus what the URDF carries besides the bodies: armature Ia qdd (its
    transmissions), damping qd and friction sign(qd) (its <dynamics>), and the friction offsets f0 (not in URDF,
    from the standard set)."""
    model = pin.buildModelFromXML(urdf_text)
    model.gravity.linear = np.array([0.0, 0.0, -gravity])  # URDF has no gravity: the header states it
    data = model.createData()
    root = ET.fromstring(urdf_text)
    movable = [j for j in root.findall("joint") if j.get("type") != "fixed"]
    order = [model.getJointId(j.get("name")) for j in movable]
    transmissions = read_transmissions(urdf_text)
    table = dict(zip(names, standard_values, strict=True))
    out = np.empty_like(q)
    for k in range(q.shape[0]):
        qp = np.zeros(model.nq)
        for j, jid in enumerate(order):
            idx, nq = model.joints[jid].idx_q, model.joints[jid].nq
            qp[idx : idx + nq] = [np.cos(q[k, j]), np.sin(q[k, j])] if nq == 2 else [q[k, j]]
        vel = np.zeros(model.nv)
        acc = np.zeros(model.nv)
        for j, jid in enumerate(order):
            vel[model.joints[jid].idx_v], acc[model.joints[jid].idx_v] = qd[k, j], qdd[k, j]
        tau = pin.rnea(model, data, qp, vel, acc)
        out[k] = [tau[model.joints[jid].idx_v] for jid in order]
    for j, el in enumerate(movable):
        name = el.get("name")
        dyn = el.find("dynamics")
        ratio, rotor = transmissions.get(name, (1.0, 0.0))
        out[:, j] += rotor * ratio**2 * qdd[:, j]
        out[:, j] += float(dyn.get("damping")) * qd[:, j] + float(dyn.get("friction")) * np.sign(qd[:, j])
        out[:, j] += table.get(f"f0_{name}", 0.0)
    return out


def _close(a, b, rel=1e-9):
    scale = max(1.0, float(np.max(np.abs(b))))
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * scale)


@pytest.mark.parametrize("method", ["consistent", "wls"])
def test_urdf_through_pinocchio_reproduces_the_identified_prediction(ur10e_results, method, tmp_path):
    """The CLI's URDF: pinocchio's RNEA (plus armature and friction from the file) equals robid's prediction
    Y_b(q, qd, qdd) beta* with the exported base values to 1e-9, on 50 random states; beta* is the identified
    beta to 1e-4 (relative, per base value) for the consistent estimate, and for WLS, which has no consistent
    set, the nearest consistent one, whose distance the header states."""
    robot, record = ur10e_results["robot"], ur10e_results[method]
    out = tmp_path / "ur10e.urdf"
    source = str(ur10e_results["folder"] / f"{method}.json")
    assert main(["export-model", source, "--format", "urdf", "--out", str(out)]) == 0
    text = out.read_text()
    exported = export_model(record, robot, "urdf", source=source)
    assert exported.text == text  # deterministic: no clock in the header
    s = exported.standard
    q, qd, qdd = _states(robot.model, 50, 3)
    tau_pin = _pinocchio_torque(text, s.names, s.values, q, qd, qdd)
    base = robot.base_parameters()
    expected = np.einsum("nrk,k->nr", base.regressor(q, qd, qdd), s.base_target)
    _close(tau_pin, expected)
    identified = np.einsum("nrk,k->nr", base.regressor(q, qd, qdd), record.values)
    if method == "consistent":
        # a consistent estimate is reproduced to the feasibility check's tolerance (1e-4 of each base value)
        assert s.identified_consistent and s.base_mismatch < 1e-4
        _close(tau_pin, identified, rel=1e-3)  # 0.2 % of the noise level here
        assert "have a physically consistent standard set" in text
    else:
        assert s.identified_consistent is False and s.mahalanobis > 0 and "NO physically consistent" in text
        assert "Mahalanobis distance" in text and 'effort="1000000000.0"' in text
    assert s.exported_consistent
    assert f"method {method}" in text and "torque NRMSE" in text


def test_generated_urdf_handles_offsets_prismatic_joints_and_tilted_gravity():
    """DH with angle offsets, a prismatic joint with a displacement offset, gravity not along a base axis (a
    ``world`` mount is written): pinocchio on the URDF equals robid's inverse dynamics with a perturbed
    standard set, and robid reads its own URDF back to the same torques."""
    robot = robid.load_robot(DATA / "rpr_dh.yaml")
    rng = np.random.default_rng(5)
    base = robot.base_parameters()
    theta = robot.parameters * (1 + 0.05 * rng.standard_normal(robot.parameters.size))
    s = exported_standard_set(base.values(theta), base.grouping, robot.parameter_names, robot.parameters)
    model = identified_model(robot.model, s.names, s.values)
    text = urdf_from_model(model, "test header -- with dashes")
    g = float(np.linalg.norm(robot.model.gravity))
    assert "world_mount" in text and f"Gravity: {g:.6g} m/s^2 along -z of link world" in text
    q, qd, qdd = _states(robot.model, 30, 4)
    expected = robot.inverse_dynamics(q, qd, qdd, s.values)
    _close(_pinocchio_torque(text, s.names, s.values, q, qd, qdd, gravity=g), expected)
    path = DATA.parent / "_rpr_export_tmp.urdf"
    try:  # robid's own URDF reader: the same dynamics in other body frames
        path.write_text(text)
        back = robid.Robot(read_robot_urdf(path, gravity_world=(0.0, 0.0, -g)), ("rigid", "viscous", "coulomb"))
        _close(back.inverse_dynamics(q, qd, qdd), expected)
    finally:
        path.unlink(missing_ok=True)


def test_copy_of_the_robots_own_urdf_keeps_its_frames_names_and_mounting(tmp_path):
    """A URDF robot (wall-mounted, with fixed links): the copy keeps every joint, link and the world mount, gets
    the identified inertials (merged fixed links lose theirs) and friction, and pinocchio on it equals robid."""
    for name in ("ur10e_like_wall.urdf", "merge_fixed.urdf"):
        robot = robid.load_robot(DATA / name)
        base = robot.base_parameters()
        rng = np.random.default_rng(6)
        theta = robot.parameters.copy()
        theta *= 1 + 0.03 * rng.standard_normal(theta.size)
        s = exported_standard_set(base.values(theta), base.grouping, robot.parameter_names, robot.parameters)
        model = identified_model(robot.model, s.names, s.values)
        source = (DATA / name).read_text()
        text = urdf_copy_with_model(source, model, "identified")
        original, copy = ET.fromstring(source), ET.fromstring(text)
        for tag in ("joint", "link"):
            assert [e.get("name") for e in original.findall(tag)] == [e.get("name") for e in copy.findall(tag)]
        q, qd, qdd = _states(robot.model, 30, 7)
        _close(_pinocchio_torque(text, s.names, s.values, q, qd, qdd), robot.inverse_dynamics(q, qd, qdd, s.values))


def test_robot_file_export_loads_back_with_the_exported_values(ur10e_results, tmp_path):
    robot = ur10e_results["robot"]
    out = tmp_path / "ur10e_identified.yaml"
    assert main(["export-model", str(ur10e_results["folder"] / "consistent.json"), "--format", "yaml",
                 "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Identified dynamic model of robot 'ur10e'")
    back = robid.load_robot(out)
    s = export_model(ur10e_results["consistent"], robot, "yaml", source="consistent.json").standard
    assert back.parameter_names == list(s.names)
    np.testing.assert_allclose(back.parameters, s.values, rtol=1e-12, atol=1e-12)
    assert [j.limits for j in back.model.joints] == [j.limits for j in robot.model.joints]


def test_json_export_lists_the_standard_set_and_joint_blocks(ur10e_results, tmp_path):
    out = tmp_path / "model.json"
    assert main(["export-model", str(ur10e_results["folder"] / "consistent.json"), "--format", "json",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    s = export_model(ur10e_results["consistent"], ur10e_results["robot"], "json").standard
    assert list(doc["standard_parameters"]) == list(s.names)
    assert doc["joints"][1]["link"]["mass"] == pytest.approx(s.value("m_J2"), rel=1e-12)
    assert doc["identified_consistent"] is True and doc["header"][0].startswith("Identified dynamic model")


def test_python_source_is_standalone_and_folds_the_identified_values(ur10e_results, tmp_path):
    robot, record = ur10e_results["robot"], ur10e_results["consistent"]
    out = tmp_path / "ur10e_ff.py"
    assert main(["export-model", str(ur10e_results["folder"] / "consistent.json"), "--format", "python",
                 "--out", str(out)]) == 0
    src = out.read_text()
    assert "import robid" not in src and "from robid" not in src
    spec = importlib.util.spec_from_file_location("ur10e_ff", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q, qd, qdd = _states(robot.model, 40, 8)
    expected = np.einsum("nrk,k->nr", robot.base_parameters().regressor(q, qd, qdd), module.BASE_VALUES)
    _close(module.inverse_dynamics(q, qd, qdd), expected)
    _close(module.base_regressor(q, qd, qdd) @ module.BASE_VALUES, expected)
    _close(expected, np.einsum("nrk,k->nr", robot.base_parameters().regressor(q, qd, qdd), record.values), 1e-3)
    assert module.BASE_NAMES == record.names


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_c_source_compiles_and_agrees(ur10e_results, tmp_path):
    robot, record = ur10e_results["robot"], ur10e_results["consistent"]
    src = tmp_path / "ff.c"
    assert main(["export-model", str(ur10e_results["folder"] / "consistent.json"), "--format", "c",
                 "--out", str(src), "--prefix", "ur10e"]) == 0
    lib = tmp_path / "libff.so"
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-O2", "-fPIC", "-shared", "-o", str(lib), str(src), "-lm"],
                   check=True, capture_output=True)
    c = ctypes.CDLL(str(lib))
    q, qd, qdd = (np.ascontiguousarray(a) for a in _states(robot.model, 40, 9))
    n, dof, nb = q.shape[0], robot.dof, len(record.names)
    ptr = ctypes.POINTER(ctypes.c_double)
    tau = np.zeros((n, dof))
    y = np.zeros((n, dof, nb))
    args = [a.ctypes.data_as(ptr) for a in (q, qd, qdd)]
    c.ur10e_inverse_dynamics(*args, ctypes.c_long(n), tau.ctypes.data_as(ptr))
    c.ur10e_base_regressor(*args, ctypes.c_long(n), y.ctypes.data_as(ptr))
    values = np.ctypeslib.as_array((ctypes.c_double * nb).in_dll(c, "ur10e_base_values"))
    expected = np.einsum("nrk,k->nr", robot.base_parameters().regressor(q, qd, qdd), values)
    _close(tau, expected)
    _close(y @ values, expected)
    _close(expected, np.einsum("nrk,k->nr", robot.base_parameters().regressor(q, qd, qdd), record.values), 1e-3)


def test_bad_requests_are_refused_with_exit_2(ur10e_results, tmp_path, capsys):
    folder = ur10e_results["folder"]
    assert main(["export-model", str(folder / "wls.json"), "--format", "yaml", "--out", str(tmp_path / "x.yaml"),
                 "--robot", str(DATA / "ur10e_like.urdf")]) == 2
    assert "use the robot it was identified with" in capsys.readouterr().err  # another robot than the result's
    assert main(["export-model", str(folder / "missing.json"), "--format", "urdf", "--out", str(tmp_path / "x")]) == 2
    assert main(["export-model", str(folder / "wls.json"), "--format", "json", "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    other = tmp_path / "traj.json"  # another robid file: said so, not "written by an older robid"
    other.write_text(json.dumps({"robid": 1, "kind": "fourier", "period": 10.0}))
    assert main(["export-model", str(other), "--format", "json", "--out", str(tmp_path / "m.json")]) == 2
    assert "not an identification result" in capsys.readouterr().err
    assert main(["export-model", str(folder / "wls.json"), "--format", "urdf", "--out", str(folder / "wls.json")]) == 2
    assert not (tmp_path / "x").exists()


def test_rpy_matches_the_urdf_convention_including_gimbal_lock():
    """rpy_from_matrix against pinocchio's rpyToMatrix (R = Rz(yaw) Ry(pitch) Rx(roll)), at +-90 deg pitch too."""
    rng = np.random.default_rng(1)
    axes = [v / np.linalg.norm(v) for v in rng.normal(size=(20, 3))] + [np.array([0.0, 1.0, 0.0])] * 2
    angles = list(rng.uniform(-3, 3, 20)) + [np.pi / 2, -np.pi / 2]
    for axis, angle in zip(axes, angles, strict=True):
        r = rotation_about_axis(axis, angle)
        np.testing.assert_allclose(pin.rpy.rpyToMatrix(*rpy_from_matrix(r)), r, atol=1e-12)


def test_robot_file_on_a_urdf_exports_a_copy_of_its_urdf_with_transmissions_and_a_yaml_that_loads_back(tmp_path):
    """A robot file that starts from a URDF (``urdf:`` plus drives): the URDF copy is of the referenced URDF,
    gains a transmission per drive, and pinocchio on it equals robid; the YAML copy keeps ``urdf:``, overrides
    every link and loads back to the exported standard set."""
    from robid.export.model_export import source_urdf
    from robid.export.robot_file_writer import robot_file_with_model
    from robid.io.files import read_yaml

    src = tmp_path / "arm3_urdf.yaml"
    shutil.copy(DATA / "arm3_urdf.yaml", src)
    shutil.copy(DATA / "arm3_meshes.urdf", tmp_path / "arm3_meshes.urdf")
    terms = ("rigid", "rotor", "viscous", "coulomb", "offset")  # the coupled motor's columns have no URDF field
    robot = robid.load_robot(src, terms=terms)
    base = robot.base_parameters()
    theta = robot.parameters * (1 + 0.03 * np.random.default_rng(2).standard_normal(robot.parameters.size))
    s = exported_standard_set(base.values(theta), base.grouping, robot.parameter_names, robot.parameters)
    model = identified_model(robot.model, s.names, s.values)
    assert source_urdf(robot) == tmp_path / "arm3_meshes.urdf"
    text = urdf_copy_with_model((tmp_path / "arm3_meshes.urdf").read_text(), model, "identified")
    assert set(read_transmissions(text)) == {"joint_1", "joint_2", "joint-3"}
    q, qd, qdd = _states(robot.model, 20, 3)
    _close(_pinocchio_torque(text, s.names, s.values, q, qd, qdd), robot.inverse_dynamics(q, qd, qdd, s.values))
    out = tmp_path / "arm3_identified.yaml"
    out.write_text(robot_file_with_model(read_yaml(src), model, "identified"))
    back = robid.load_robot(out, terms=terms)
    np.testing.assert_allclose(back.parameters, s.values, rtol=1e-12, atol=1e-12)
