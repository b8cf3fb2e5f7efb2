"""A closed chain's identified model exported (docs/export.md, "Closed chains"): the robot file with the identified
passive bodies, the JSON with the loops, the URDF tree with the loop in its header (checked with pinocchio's URDF
parser and dynamics), and the feed-forward code; each reproduces the identified model's torques."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.excitation.fourier import FourierTrajectory
from robid.export.model_export import export_model
from robid.identification import IdentificationOptions, run_identification
from robid.model.closure import LoopClosure
from robid.simulation import SensorSettings, simulate

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """parallelogram_2r identified from a short noisy run of the virtual robot, and its export's standard set."""
    folder = tmp_path_factory.mktemp("export")
    robot = robid.load_robot(DATA / "parallelogram_2r.yaml")
    traj = FourierTrajectory(2.0, [0.1, 0.2], [[0.4, 0.15, 0.05], [0.3, 0.1, 0.05]],
                             [[0.1, 0.05, 0.02], [-0.2, 0.1, 0.03]])
    sensors = SensorSettings.with_noise_level("realistic", rate=200.0)
    path = simulate(robot, traj, periods=3, sensors=sensors, seed=3).write_csv(folder / "run.csv")
    record = run_identification(robot, [path], IdentificationOptions(check_consistency=False)).record
    return robot, record, folder


def _states(robot, seed=9):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.6, 0.6, (10, robot.dof)), rng.uniform(-1, 1, (10, robot.dof)), rng.uniform(-3, 3, (10,
                                                                                                            robot.dof))


def test_robot_file_and_json_carry_the_passive_bodies_and_the_loop(identified):
    robot, record, folder = identified
    out = export_model(record, robot, "yaml")
    path = folder / "identified.yaml"
    path.write_text(out.text)
    exported = robid.load_robot(path)
    assert exported.model.chain.relation == robot.model.chain.relation
    names = robot.parameter_names
    assert exported.parameter_names == names
    assert np.allclose(exported.parameters, out.standard.values, rtol=1e-9, atol=1e-12)
    q, qd, qdd = _states(robot)
    identified_tau = robot.base_parameters().regressor(q, qd, qdd) @ record.values
    assert np.abs(exported.inverse_dynamics(q, qd, qdd) - identified_tau).max() < 1e-8 * np.abs(identified_tau).max()
    doc = json.loads(export_model(record, robot, "json").text)
    assert [p["name"] for p in doc["passive_joints"]] == ["P2", "P3"]
    assert doc["loops"][0]["kind"] == "parallelogram" and doc["relation"] == [[-1.0, 1.0], [1.0, -1.0]]


def test_urdf_tree_reproduces_the_identified_dynamics_in_pinocchio(identified):
    pin = pytest.importorskip("pinocchio")
    robot, record, folder = identified
    out = export_model(record, robot, "urdf")
    assert "Closed chain: 1 loop(s)" in out.text and "q_P2 = -1 q_A1 + 1 q_A2" in out.text
    path = folder / "identified.urdf"
    path.write_text(out.text)
    pm = pin.buildModelFromUrdf(str(path))  # gravity -z of link world, which the writer mounts the base on
    assert "world_mount" in out.text
    data = pm.createData()
    closure = LoopClosure(robot.model)
    q, qd, qdd = _states(robot)
    states = closure.states(q, qd, qdd)
    order = [pm.names[k] for k in range(1, pm.njoints)]
    perm = [[j.name for j in closure.tree].index(n) for n in order]  # pinocchio's joint order
    rigid = [k for k, n in enumerate(robot.parameter_names) if n.split("_")[0] in
             ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")]
    expected = robot.regressor(q, qd, qdd)[:, :, rigid] @ out.standard.values[rigid]
    frames = [pm.getFrameId(f"forearm_drive_close_{t}") for t in "ab"]
    for k in range(q.shape[0]):
        qt, vt, at = (x[k, perm] for x in (states.q, states.qd, states.qdd))
        qt = _configuration(pm, qt)  # a continuous joint is (cos, sin) in pinocchio
        pin.framesForwardKinematics(pm, data, qt)
        gap = data.oMf[frames[0]].translation - data.oMf[frames[1]].translation
        assert np.linalg.norm(gap) < 1e-9  # the closing links written in the URDF meet
        tau_tree = pin.rnea(pm, data, qt, vt, at)
        tau = states.w[k][perm].T @ tau_tree
        assert np.abs(tau - expected[k]).max() < 1e-7 * np.abs(expected).max()


def _configuration(pm, angles, names=None):
    """pinocchio's configuration of joint values ``angles`` given in the order ``names`` (default: pinocchio's);
    a continuous joint is (cos, sin)."""
    q = np.zeros(pm.nq)
    order = list(names) if names is not None else [pm.names[k] for k in range(1, pm.njoints)]
    for k in range(1, pm.njoints):
        joint, angle = pm.joints[k], angles[order.index(pm.names[k])]
        if joint.nq == 2:
            q[joint.idx_q : joint.idx_q + 2] = np.cos(angle), np.sin(angle)
        else:
            q[joint.idx_q] = angle
    return q


def _velocity(pm, values, names) -> np.ndarray:
    """pinocchio's velocity vector of joint values given in the order ``names``."""
    order = list(names)
    return np.array([values[order.index(pm.names[k])] for k in range(1, pm.njoints)])


def test_python_feed_forward_code_reproduces_the_identified_torques(identified):
    robot, record, folder = identified
    path = folder / "ff.py"
    path.write_text(export_model(record, robot, "python").text)
    spec = importlib.util.spec_from_file_location("ff_closed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q, qd, qdd = _states(robot)
    expected = robot.base_parameters().regressor(q, qd, qdd) @ record.values
    assert np.abs(module.inverse_dynamics(q, qd, qdd) - expected).max() < 1e-8 * np.abs(expected).max()


@pytest.mark.parametrize("name", ["kr180_pa", str(DATA / "fourbar_planar.yaml"), str(DATA / "parallelogram_2r.yaml")])
def test_mjcf_tree_and_its_connect_constraint_read_by_pinocchio(tmp_path, name):
    """The MJCF of the robot's nominal model: pinocchio's MJCF parser finds the tree (its dynamics, projected by
    virtual work, equal robid's regressor) and one point constraint per loop whose two points meet."""
    pin = pytest.importorskip("pinocchio")
    from robid.export.mjcf_tree_writer import mjcf_from_model

    robot = robid.load_robot(name)
    path = tmp_path / "robot.xml"
    path.write_text(mjcf_from_model(robot.model, "nominal model"))
    pm, constraints = pin.buildModelAndConstraintsFromMJCF(str(path))[:2]
    assert len(constraints) == len(robot.model.chain.loops)
    data = pm.createData()
    closure = LoopClosure(robot.model)
    q, qd, qdd = _states(robot, seed=4)
    states = closure.states(q * 0.5, qd, qdd)
    rigid = [k for k, n in enumerate(robot.parameter_names) if n.split("_")[0] in
             ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")]
    expected = robot.regressor(q * 0.5, qd, qdd)[:, :, rigid] @ robot.parameters[rigid]
    c = constraints[0]
    names = [j.name for j in closure.tree]
    order = [names.index(pm.names[k]) for k in range(1, pm.njoints)]
    drives = {j.name: j.drive.reflected_inertia for j in robot.model.joints if j.drive is not None}
    for k in range(1, pm.njoints):  # the reflected rotor inertias are the joints' armature
        assert pm.armature[pm.joints[k].idx_v] == pytest.approx(drives.get(pm.names[k], 0.0))
    pm.armature[:] = 0.0  # compared with the rigid bodies alone
    gravity = " ".join(str(g) for g in robot.model.gravity)
    assert f'<option gravity="{gravity}" />'.replace(".0 ", " ").replace('.0"', '"') in path.read_text().replace(
        ".0 ", " ").replace('.0"', '"')
    pm.gravity = pin.Motion(np.array([*robot.model.gravity, 0.0, 0.0, 0.0]))  # pinocchio's parser skips <option>
    for k in range(q.shape[0]):
        qt = _configuration(pm, states.q[k], names)
        pin.forwardKinematics(pm, data, qt)
        p1 = data.oMi[c.joint1_id].act(c.joint1_placement).translation
        p2 = data.oMi[c.joint2_id].act(c.joint2_placement).translation
        assert np.linalg.norm(p1 - p2) < 1e-9
        vt, at = _velocity(pm, states.qd[k], names), _velocity(pm, states.qdd[k], names)
        tau = states.w[k][order].T @ pin.rnea(pm, data, qt, vt, at)
        assert np.abs(tau - expected[k]).max() < 1e-8 * np.abs(expected).max()
