"""Identification of elastic joints from link and motor encoders (elastic layout through robid.identify).

The virtual robot runs the planar 2R of Do 2021 (do_2r_elastic.yaml, Spong model) with spring damping and motor
Coulomb friction added, in closed loop, with encoder quantisation and torque noise; identification with the
terms ``stiffness, damping, link_viscous`` recovers the stiffness, damping and motor-side parameters within their
reported uncertainty. Also: prediction on a held-out run, the record's drive rows, and the error without motor
positions.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import robid
from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory
from robid.identification import IdentificationOptions, identify
from robid.model.loader import builtin_robot_path
from robid.signals import ProcessingOptions
from robid.simulation import SensorSettings, simulate

#: rad/s: samples near velocity reversals left out, where the Coulomb step is smeared by the band limit
MIN_SPEED = 0.1
TERMS = ("rigid", "rotor", "viscous", "coulomb", "stiffness", "damping", "link_viscous")


@pytest.fixture(scope="module")
def elastic_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("elastic")
    doc = yaml.safe_load(builtin_robot_path("do_2r_elastic").read_text())
    doc["name"] = "do-2r-damped"
    for j, (damping, coulomb) in zip(doc["joints"], ((12.0, 1.5), (8.0, 1.0)), strict=True):
        j["elasticity"]["damping"] = damping
        j["friction"]["coulomb"] = coulomb
    robot_file = d / "robot.yaml"
    robot_file.write_text(yaml.safe_dump(doc))
    rng = np.random.default_rng(4)
    files = []
    for k, period in enumerate((6.0, 5.0)):
        traj = FourierTrajectory(period=period, center=np.array([-1.2, 0.8]), a=0.35 * rng.normal(size=(2, 4)),
                                 b=0.35 * rng.normal(size=(2, 4)))
        sensors = SensorSettings(rate=500.0, q_noise=2e-6, tau_noise=0.05, encoder_counts=2**20,
                                 link_encoder_counts=2**22)
        sim = simulate(robot_file, traj, periods=3, sensors=sensors, seed=k)
        files.append(sim.write_csv(d / f"run{k}.csv"))
    return robot_file, files


def test_stiffness_and_damping_from_link_and_motor_encoders(elastic_runs):
    robot_file, (ident, valid) = elastic_runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    options = IdentificationOptions(method="wls", processing=ProcessingOptions(min_speed=MIN_SPEED))
    record = identify(robot, [ident], options, validation_files=[valid])
    assert record.motor_joints == ("J1", "J2")
    truth = {"k_J1": 2000.0, "k_J2": 1600.0, "d_J1": 12.0, "d_J2": 8.0, "fl_J1": 3.91, "fl_J2": 2.21,
             "Ia_J1": 4.0572, "Ia_J2": 2.2148, "fv_J1": 2.04, "fv_J2": 1.68, "fc_J1": 1.5, "fc_J2": 1.0}
    print()
    for name, true in truth.items():
        p = record.parameter(name)
        z = (p.value - true) / p.std
        print(f"{name:6s} true {true:9.4g}  identified {p.value:10.5g} +- {p.std:.2g}  ({z:+.1f} std, "
              f"{100 * (p.value / true - 1):+.2f} %)  {p.identifiability}")
        assert abs(z) < 4.0, name
    for name in ("k_J1", "k_J2"):
        assert abs(record.value(name) / truth[name] - 1) < 0.01
    # the fit of the measured drive torques on the held-out run
    fit = record.validation_data[0].fit
    for joint in fit.per_joint:
        assert joint.nrmse_percent < 3.0, joint


def test_elastic_record_predicts_a_file(elastic_runs):
    from robid.identification.predict import predict_file

    robot_file, (ident, valid) = elastic_runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    record = identify(robot, [ident], IdentificationOptions(method="wls"))
    assert record.drive_rows == [2, 3] and record.sigma.shape == (2,) and record.sigma_rows.shape == (4,)
    pred = predict_file(robot, record, valid)
    assert np.all(pred.rre_percent < 5.0), pred.rre_percent


def test_elastic_layout_without_motor_positions_is_refused(elastic_runs, tmp_path):
    import pandas as pd

    robot_file, (ident, _) = elastic_runs
    frame = pd.read_csv(ident)
    frame[[c for c in frame.columns if not c.startswith("theta")]].to_csv(tmp_path / "no_motor.csv", index=False)
    robot = robid.load_robot(robot_file, terms=TERMS)
    with pytest.raises(RobidInputError, match="needs motor positions"):
        identify(robot, [tmp_path / "no_motor.csv"], IdentificationOptions(method="wls"))


def test_report_shows_the_springs_and_modes_only_for_elastic_records(elastic_runs, tmp_path):
    from robid.report import write_report

    robot_file, (ident, _) = elastic_runs
    options = IdentificationOptions(method="wls", processing=ProcessingOptions(min_speed=MIN_SPEED))
    elastic = robid.load_robot(robot_file, terms=TERMS)
    record = identify(elastic, [ident], options)
    record = record.with_references("truth", record.values * 0 + 1234.5)
    write_report(tmp_path / "elastic.html", record, elastic, title="elastic")
    page = (tmp_path / "elastic.html").read_text()
    section = page[page.index('id="elastic"'):]
    for name in ("k_J1", "k_J2", "d_J1", "fl_J2"):
        assert name in section
    assert "Predicted modes" in section and "Hz" in section
    assert "truth 1234.5" in section  # the report's references reach the elastic table
    rigid = robid.load_robot(robot_file)
    write_report(tmp_path / "rigid.html", identify(rigid, [ident], options), rigid, title="rigid")
    assert 'id="elastic"' not in (tmp_path / "rigid.html").read_text()
