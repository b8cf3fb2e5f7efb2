"""Static-deflection correction of motor-side positions (robid.elastic.static_deflection): the fixed point against
the virtual robot's own Newton-Euler and compensator code, and identification from motor encoders only with and
without the correction (docs/elastic.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import robid
from robid.elastic.static_deflection import link_positions
from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory
from robid.identification import IdentificationOptions, identify
from robid.model.loader import read_robot
from robid.signals import ProcessingOptions
from robid.simulation import SensorSettings, simulate


def test_fixed_point_hangs_the_links_on_their_springs():
    """G(q) + K (q - theta) = 0 with G from robid.simulation (an implementation apart from the generated code)."""
    from robid.simulation import RigidBodyDynamics
    from robid.simulation.compensator_plant import CompensatorTorques

    model = read_robot("kr_heavy")
    rng = np.random.default_rng(3)
    lo = np.array([j.limits.position[0] for j in model.joints])
    hi = np.array([j.limits.position[1] for j in model.joints])
    theta = rng.uniform(0.8 * lo, 0.8 * hi, (20, model.dof))
    q, iterations = link_positions(model, theta)
    assert iterations <= 6
    zero = np.zeros_like(q)
    gravity = RigidBodyDynamics(model).inverse_dynamics(q, zero, zero) + CompensatorTorques(model).torque(q)
    k = np.array([j.elasticity.stiffness if j.elasticity else 0.0 for j in model.joints])
    residual = gravity + k * (q - theta)
    elastic = k > 0
    assert np.abs(residual[:, elastic]).max() < 1e-6 * np.abs(gravity).max()
    assert np.array_equal(q[:, ~elastic], theta[:, ~elastic])
    assert np.degrees(np.abs(q - theta).max()) > 0.005  # a deflection worth correcting on this robot


def test_static_deflection_refuses_a_file_with_motor_positions(tmp_path):
    traj = FourierTrajectory(period=4.0, center=np.array([-1.0, 0.9]), a=0.2 * np.ones((2, 2)), b=np.zeros((2, 2)))
    path = simulate("do_2r_elastic", traj, periods=2, sensors=SensorSettings(rate=200.0)).write_csv(tmp_path / "m.csv")
    options = IdentificationOptions(static_deflection=True)
    with pytest.raises(RobidInputError, match="link-side already"):
        identify(robid.load_robot("do_2r_elastic"), [path], options)


def test_a_rigid_robot_has_nothing_to_correct():
    with pytest.raises(RobidInputError, match="no elastic joint"):
        link_positions(read_robot("puma560"), np.zeros((1, 6)))


@pytest.fixture(scope="module")
def motor_only_runs(tmp_path_factory):
    """Do's planar 2R under gravity, recorded with motor encoders only (the positions are theta)."""
    d = tmp_path_factory.mktemp("motor_only")
    rng = np.random.default_rng(6)
    files = []
    for k, period in enumerate((6.0, 5.0)):
        traj = FourierTrajectory(period=period, center=np.array([-1.0, 0.9]), a=0.3 * rng.normal(size=(2, 4)),
                                 b=0.3 * rng.normal(size=(2, 4)))
        sensors = SensorSettings(rate=500.0, q_noise=2e-6, tau_noise=0.05)  # the default 16384-count encoders
        path = simulate("do_2r_elastic", traj, periods=3, sensors=sensors, seed=k).write_csv(d / f"run{k}.csv")
        frame = pd.read_csv(path)
        for j in (1, 2):
            frame[f"q{j}"] = frame.pop(f"theta{j}")
        frame.to_csv(path, index=False)
        files.append(path)
    return files


def test_identification_from_motor_encoders_with_the_static_correction(motor_only_runs, tmp_path):
    ident, valid = motor_only_runs
    robot = robid.load_robot("do_2r_elastic")
    processing = ProcessingOptions(min_speed=0.1)
    results = {}
    for corrected in (False, True):
        options = IdentificationOptions(method="wls", processing=processing, static_deflection=corrected)
        record = identify(robot, [ident], options, validation_files=[valid])
        results[corrected] = record
        rre = [j.nrmse_percent for j in record.validation_data[0].fit.per_joint]
        print(f"static deflection {'on ' if corrected else 'off'}: validation NRMSE {np.round(rre, 3)} %; "
              f"mx_J1 {record.value('mx_J1'):.4f}, mx_J2 {record.value('mx_J2'):.4f}")
    on, off = results[True], results[False]
    assert on.processing.static_deflection and not off.processing.static_deflection
    # the corrected positions are off the log's grid: the band must still count the log's rounding as noise
    # (without the logged step it kept hundreds of harmonics and the fit was 10-40x worse)
    assert abs(len(on.data[0].harmonics) - len(off.data[0].harmonics)) <= 2 and len(on.data[0].harmonics) < 30
    for a, b in zip(on.validation_data[0].fit.per_joint, off.validation_data[0].fit.per_joint, strict=True):
        assert a.nrmse_percent < b.nrmse_percent
    assert any("static deflection" in n for n in on.data[0].notes)
    # the first moments carry the gravity torque: without the correction they absorb the links' sag
    nominal = robot.base_parameters().values(robot.parameters)
    names = list(robot.base_parameters().names)
    for name in ("mx_J1", "mx_J2"):
        i = names.index(name)
        assert abs(on.values[i] - nominal[i]) < 0.5 * abs(off.values[i] - nominal[i]), name
