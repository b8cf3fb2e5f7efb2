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
from oracles.damped_2r import damped_2r_runs

import robid
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, identify
from robid.model.terms import default_terms
from robid.signals import ProcessingOptions

#: rad/s: samples near velocity reversals left out, where the Coulomb step is smeared by the band limit
MIN_SPEED = 0.1
TERMS = ("rigid", "rotor", "viscous", "coulomb", "stiffness", "damping", "link_viscous")


@pytest.fixture(scope="module")
def elastic_runs(tmp_path_factory):
    return damped_2r_runs(tmp_path_factory.mktemp("elastic"))


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
    # the rigid layout asked for by its terms (by default the motor positions in the file choose the elastic one)
    model = robid.load_robot(robot_file).model
    rigid = robid.load_robot(robot_file, terms=default_terms(model))
    write_report(tmp_path / "rigid.html", identify(rigid, [ident], options), rigid, title="rigid")
    assert 'id="elastic"' not in (tmp_path / "rigid.html").read_text()
