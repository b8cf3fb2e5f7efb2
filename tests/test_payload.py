"""Payload identification (robid/payload, docs/payload.md): the payload columns against the virtual robot's own
Newton-Euler, the body conventions, the exports parsed back, the fallback to mass and COM, the CLI, and the
acceptance on the virtual robot: a 20 kg load on kr_heavy identified from a designed wrist motion."""

from __future__ import annotations

import math
import re
import time

import numpy as np
import pytest

from robid.model.loader import read_robot
from robid.payload import PayloadBody, PayloadDesignSettings, design_payload_excitation, identify_payload, render
from robid.payload.body import abc_angles_deg, quaternion
from robid.payload.data import PayloadRows, correlation_of
from robid.payload.estimate import estimate_payload
from robid.payload.regressor import payload_regressor, with_payload
from robid.robot import Robot

LOAD = PayloadBody(20.0, (0.05, -0.03, 0.12), (0.30, 0.25, 0.15, 0.02, -0.01, 0.03))


def _rz(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def test_payload_columns_equal_the_simulators_newton_euler_difference():
    """Y_last pi_p = tau(model with the load) - tau(model): the simulator's own RNEA (never the regressor)."""
    from robid.simulation import RigidBodyDynamics

    model = read_robot("ur10e")
    rigid = Robot(model, terms=("rigid",))
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-2, 2, (7, 6)) for _ in range(3))
    expected = (RigidBodyDynamics(with_payload(model, LOAD)).inverse_dynamics(q, qd, qdd)
                - RigidBodyDynamics(model).inverse_dynamics(q, qd, qdd))
    got = payload_regressor(rigid, q, qd, qdd) @ LOAD.standard()
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_body_round_trip_and_principal_axes():
    np.testing.assert_allclose(PayloadBody.from_standard(LOAD.standard()).inertia_com, LOAD.inertia_com, atol=1e-12)
    # a tensor with principal axes rotated 30 deg about z: KUKA A = 30, B = C = 0, ABB quaternion cos/sin 15 deg
    r = _rz(30.0)
    tensor = r @ np.diag([0.1, 0.2, 0.3]) @ r.T
    body = PayloadBody(1.0, (0, 0, 0), (tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1], tensor[0, 2],
                                        tensor[1, 2]))
    moments, axes = body.principal()
    np.testing.assert_allclose(moments, [0.1, 0.2, 0.3], atol=1e-12)
    np.testing.assert_allclose(axes @ np.diag(moments) @ axes.T, tensor, atol=1e-12)
    np.testing.assert_allclose(abc_angles_deg(axes), (30.0, 0.0, 0.0), atol=1e-9)
    np.testing.assert_allclose(quaternion(axes), (math.cos(math.radians(15)), 0, 0, math.sin(math.radians(15))),
                               atol=1e-12)


def _static_rows(rigid: Robot, noise: float, seed: int) -> tuple[PayloadRows, np.ndarray]:
    """Rows of static poses only: the inertia columns are zero, only m and m c show."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (400, 6))
    zero = np.zeros_like(q)
    Y = payload_regressor(rigid, q, zero, zero)
    truth = PayloadBody(3.0, (0.01, 0.02, 0.08), (0.01, 0.01, 0.005, 0, 0, 0)).standard()
    dtau = Y @ truth + noise * rng.standard_normal(q.shape)
    keep = np.ones(q.shape, bool)
    from robid.estimation.correlated import RowBlock, RowCorrelation

    rows = PayloadRows("static", "unloaded run", Y, dtau, keep, RowCorrelation((RowBlock(samples=400),)), 0.0, ())
    return rows, truth


def test_static_poses_fall_back_to_mass_and_com():
    rigid = Robot(read_robot("ur10e"), terms=("rigid",))
    rows, truth = _static_rows(rigid, noise=0.05, seed=1)
    est = estimate_payload(rows, "auto")
    assert est.model == "mass-com"
    assert est.determined[:4] == (True,) * 4 and not any(est.determined[4:])
    # mass within 4 std of the truth, std consistent with the noise (not zero, not huge)
    assert abs(est.body.mass - 3.0) < 4 * est.mass_std and 1e-4 < est.mass_std < 0.05
    assert np.allclose(est.body.com, (0.01, 0.02, 0.08), atol=4 * max(est.com_std))
    assert est.consistency.consistent
    # the URScript line has no inertia when the inertia was not identified
    assert re.search(r"^set_target_payload\([\d.]+, \[[-\d., ]+\]\)$", render(est, "urscript", "ur10e", "flange"),
                     re.M)
    with pytest.raises(Exception, match="^model: "):  # the command line words it --model
        estimate_payload(rows, "bogus")


@pytest.fixture(scope="module")
def virtual_runs(tmp_path_factory):
    """kr_heavy: a designed 10 s motion of A3-A6 (A1, A2 held), two periods, simulated with and without a 20 kg
    load at realistic sensor noise (1e-5 rad, 1 % RMS torque), seeded."""
    from robid.simulation import SensorSettings, simulate

    model = read_robot("kr_heavy")
    rigid = Robot(model, terms=("rigid",))
    t0 = time.perf_counter()
    design = design_payload_excitation(rigid, PayloadDesignSettings(
        joints=(2, 3, 4, 5), pose=(0.0, -math.pi / 2, math.pi / 2, 0.0, 0.0, 0.0), period=10.0, seed=0))
    t_design = time.perf_counter() - t0
    folder = tmp_path_factory.mktemp("payload")
    files = {}
    for label, m, seed in (("unloaded", model, 11), ("loaded", with_payload(model, LOAD), 12)):
        res = simulate(m, design.trajectory, periods=2, sensors=SensorSettings.with_noise_level("realistic"),
                       seed=seed)
        files[label] = folder / f"{label}.csv"
        res.write_csv(files[label])
    return design, files, t_design, time.perf_counter() - t0


def test_design_moves_only_the_chosen_joints_within_limits(virtual_runs):
    design, _, t_design, _ = virtual_runs
    traj = design.trajectory
    assert design.check_ok, design.check_summary
    assert np.all(traj.a[:2] == 0) and np.all(traj.b[:2] == 0)
    assert np.any(traj.a[2:] != 0)
    assert design.criteria.rank == 10 and design.criteria.cond < 10
    # the D-optimal design moves every chosen joint at a good fraction of its velocity limit
    assert np.all(traj.derivative_bound(1)[2:] > 1.0)
    print(f"\npayload design kr_heavy A3-A6: cond {design.criteria.cond:.3f}, {t_design:.1f} s")


def test_virtual_robot_20kg_payload(virtual_runs):
    """Acceptance: mass within 1 %, COM within 3 mm, from an unloaded run of the same motion."""
    _, files, _, t_all = virtual_runs
    t0 = time.perf_counter()
    est = identify_payload("kr_heavy", files["loaded"], unloaded=files["unloaded"])
    err_c = 1000 * np.abs(np.array(est.body.com) - LOAD.com)
    print(f"\nkr_heavy 20 kg: m = {est.body.mass:.4f} +- {est.mass_std:.2g} kg "
          f"(error {100 * (est.body.mass / 20 - 1):+.3f} %), COM error {np.round(err_c, 3)} mm "
          f"(std {np.round(1000 * np.array(est.com_std), 3)} mm), inertia {np.round(est.body.inertia_com, 4)} "
          f"(truth {LOAD.inertia_com}), model {est.model}; design + simulation {t_all:.1f} s, identification "
          f"{time.perf_counter() - t0:.1f} s")
    assert est.model == "full" and est.consistency.consistent
    assert abs(est.body.mass / 20.0 - 1) < 0.01
    assert np.all(err_c < 3.0)
    # the statistics are honest on the virtual robot: errors within 4 standard deviations; the joints' own
    # estimates agree, so the realistic uncertainty is the statistical one, and the outputs say so
    assert abs(est.body.mass - 20.0) < 4 * est.mass_std
    print(est.uncertainty_line())
    assert est.mass_realistic_std == est.mass_std and est.uncertainty_source.startswith("statistical")
    # the inertia about the COM: principal moments within 20 % (the wrist's short, fast motion excites them less)
    truth_moments = np.linalg.eigvalsh(LOAD.tensor_com())
    assert np.allclose(est.body.principal()[0][np.argsort(est.body.principal()[0])], truth_moments, rtol=0.2)


def test_model_mass_com_on_the_virtual_robot(virtual_runs):
    _, files, _, _ = virtual_runs
    est = identify_payload("kr_heavy", files["loaded"], unloaded=files["unloaded"], model="mass-com")
    assert est.model == "mass-com" and math.isnan(est.std[5])
    assert abs(est.body.mass / 20.0 - 1) < 0.01


def test_exports_parse_back(virtual_runs):
    _, files, _, _ = virtual_runs
    est = identify_payload("kr_heavy", files["loaded"], unloaded=files["unloaded"])
    b = est.body
    moments, axes = b.principal()
    krl = render(est, "krl", "kr_heavy", "flange", tool=3)
    m = re.search(r"^LOAD_DATA\[3\]=\{M ([-\d.]+),CM \{X ([-\d.]+),Y ([-\d.]+),Z ([-\d.]+),A ([-\d.]+),"
                  r"B ([-\d.]+),C ([-\d.]+)\},J \{X ([-\d.]+),Y ([-\d.]+),Z ([-\d.]+)\}\}$", krl, re.M)
    assert m, krl
    v = [float(x) for x in m.groups()]
    assert v[0] == pytest.approx(b.mass, abs=1e-4)
    np.testing.assert_allclose(v[1:4], 1000 * np.array(b.com), atol=0.01)
    a_, b_, c_ = np.radians(v[4:7])
    rz = _rz(math.degrees(a_))
    ry = np.array([[math.cos(b_), 0, math.sin(b_)], [0, 1, 0], [-math.sin(b_), 0, math.cos(b_)]])
    rx = np.array([[1, 0, 0], [0, math.cos(c_), -math.sin(c_)], [0, math.sin(c_), math.cos(c_)]])
    r = rz @ ry @ rx
    np.testing.assert_allclose(r @ np.diag(v[7:10]) @ r.T, b.tensor_com(), atol=2e-4)
    assert all(line.startswith(";") for line in krl.splitlines()[:-1])
    rapid = render(est, "rapid", "kr_heavy", "flange")
    m = re.search(r"PERS loaddata \w+ := \[([-\d.]+),\[([-\d.]+),([-\d.]+),([-\d.]+)\],\[([-\d.]+),([-\d.]+),"
                  r"([-\d.]+),([-\d.]+)\],([-\d.]+),([-\d.]+),([-\d.]+)\];", rapid)
    assert m, rapid
    v = [float(x) for x in m.groups()]
    w, x, y, z = v[4:8]
    rq = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                   [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                   [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    np.testing.assert_allclose(rq @ np.diag(v[8:11]) @ rq.T, b.tensor_com(), atol=2e-4)
    ur = render(est, "urscript", "kr_heavy", "flange")
    m = re.search(r"^set_target_payload\(([-\d.]+), \[([-\d., ]+)\], \[([-\d., ]+)\]\)$", ur, re.M)
    assert m, ur
    np.testing.assert_allclose([float(s) for s in m.group(3).split(",")], b.inertia_com, atol=1e-6)
    np.testing.assert_allclose([float(s) for s in m.group(2).split(",")], b.com, atol=1e-6)


def test_cli_identify_writes_atomically_and_reports_bad_input(virtual_runs, tmp_path, capsys):
    import json

    from robid.cli import main

    _, files, _, _ = virtual_runs
    out = tmp_path / "load.json"
    assert main(["payload", "identify", "kr_heavy", "--loaded", str(files["loaded"]), "--unloaded",
                 str(files["unloaded"]), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "payload" and abs(doc["mass"] - 20) < 0.2 and doc["model"] == "full"
    capsys.readouterr()
    assert main(["payload", "identify", "kr_heavy", "--loaded", str(files["loaded"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error:") and "--unloaded" in err and "Traceback" not in err
    assert main(["payload", "design", "kr_heavy", "--joints", "4,9", "--out", str(tmp_path / "t.json")]) == 2
    assert "--joints" in capsys.readouterr().err
    assert main(["payload", "design", "kr_heavy", "--pose", "0,0", "--out", str(tmp_path / "t.json")]) == 2
    assert "--pose" in capsys.readouterr().err


def test_correlation_of_independent_rows(virtual_runs):
    from robid.io.measurement_file import read_measurement
    from robid.signals import process

    _, files, _, _ = virtual_runs
    processed = process(read_measurement(files["loaded"], read_robot("kr_heavy")))
    assert correlation_of(processed).blocks[0].samples == processed.q.shape[0]


def test_the_command_line_spells_the_packages_choices():
    """robid/cli/payload_cmd.py repeats the model and format choices so that its parser stays light."""
    from robid.cli import payload_cmd
    from robid.payload.estimate import MODELS
    from robid.payload.export import FORMATS

    assert payload_cmd.MODELS == MODELS and payload_cmd.FORMATS == FORMATS
