"""Identification of elastic joints from motor encoders only (robid.elastic.motor_encoders_only).

The virtual robot runs Do's planar 2R (do_2r_elastic.yaml, Spong model; spring damping 12 / 8 N m s/rad and
motor Coulomb friction added) in closed loop; its files are written as a robot without link encoders records
them: the motor positions (divided by the gear ratio) in the position columns, no theta columns. The link states
are reconstructed from the link equations and the stiffness is identified through them by Gauss-Newton. Checked
against the virtual robot's truth and, in the same test, against what link and motor encoders give on the same
run (the elastic layout), and what a rigid model makes of the motor-side data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles.damped_2r import damped_2r_runs

import robid
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, identify
from robid.signals import ProcessingOptions

MIN_SPEED = 0.1  # rad/s, as in tests/test_elastic_identification.py
RIGID = ("rigid", "rotor", "viscous", "coulomb")
TERMS = (*RIGID, "stiffness")
#: the virtual robot's values; with the link-side viscous friction not modelled, fv is the sum fv + fl
TRUTH = {"k_J1": 2000.0, "k_J2": 1600.0, "fv_J1": 2.04 + 3.91, "fv_J2": 1.68 + 2.21, "Ia_J1": 4.0572,
         "Ia_J2": 2.2148, "fc_J1": 1.5, "fc_J2": 1.0, "mx_J1": 8.0, "mx_J2": 2.5}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(robot file, [(link+motor file, motor-only file)] for an identification and a validation run)."""
    d = tmp_path_factory.mktemp("motor_only")
    robot_file, runs = damped_2r_runs(d)
    files = []
    for both in runs:  # the same runs as a robot without link encoders records them
        frame = pd.read_csv(both)
        for j in (1, 2):
            frame[f"q{j}"] = frame[f"theta{j}"]
        motor = both.with_name(both.stem + "_motor.csv")
        frame[[c for c in frame.columns if not c.startswith("theta")]].to_csv(motor, index=False)
        files.append((both, motor))
    return robot_file, files


def _options(**kw) -> IdentificationOptions:
    return IdentificationOptions(method="wls", processing=ProcessingOptions(min_speed=MIN_SPEED), **kw)


def test_stiffness_from_motor_encoders_only(runs):
    robot_file, ((both, motor), (_, valid_motor)) = runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    record = identify(robot, [motor], _options(motor_encoders_only=True), validation_files=[valid_motor])
    assert record.processing.motor_encoders_only and record.motor_joints == ()
    # the same run with its link encoders (elastic layout) and, on the motor data, a rigid model
    linked = identify(robot, [both], _options())
    rigid = identify(robid.load_robot(robot_file, terms=RIGID), [motor], _options())
    print()
    for name, true in TRUTH.items():
        p, q = record.parameter(name), linked.parameter(name)
        z = (p.value - true) / p.std
        rigid_value = rigid.value(name) if name in rigid.names else float("nan")
        print(f"{name:6s} true {true:8.4g}  motor only {p.value:9.5g} +- {p.std:.2g} ({z:+.1f} std, "
              f"{p.identifiability})  link+motor {q.value:9.5g} +- {q.std:.2g}  rigid model {rigid_value:9.5g}")
        assert abs(z) < 3.5, name
    k1 = record.parameter("k_J1")
    assert k1.std < 0.1 * TRUTH["k_J1"] and k1.identifiability == "well-identified"
    # link encoders determine the springs far better: the motor data see them only through the link dynamics
    assert linked.parameter("k_J1").std < 0.1 * k1.std
    # the rigid model puts the rotor and link inertia of joint 1 in one sum; the elastic one separates them
    assert abs(record.value("Ia_J1") - TRUTH["Ia_J1"]) < 3 * record.parameter("Ia_J1").std
    fit = record.validation_data[0].fit
    for joint in fit.per_joint:
        assert joint.nrmse_percent < 2.0, joint


def test_damping_and_link_friction_are_classified_from_motor_data(runs):
    robot_file, ((_, motor), _) = runs
    robot = robid.load_robot(robot_file, terms=(*TERMS, "damping", "link_viscous"))
    try:
        record = identify(robot, [motor], _options(motor_encoders_only=True))
    except RobidInputError as exc:  # a Gauss-Newton that cannot settle is said, never a wrong number
        assert "not determined" in str(exc) or "did not converge" in str(exc)
        return
    for name in ("d_J1", "d_J2", "fl_J1", "fl_J2"):
        p = record.parameter(name)
        print(name, p.value, p.std, p.identifiability)
        assert p.identifiability != "well-identified", name


def test_motor_encoders_only_refuses_link_positions_and_nonperiodic_runs(runs, tmp_path):
    robot_file, ((both, motor), _) = runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    with pytest.raises(RobidInputError, match="has motor positions"):
        identify(robot, [both], _options(motor_encoders_only=True))
    nonperiodic = IdentificationOptions(method="wls", motor_encoders_only=True,
                                        processing=ProcessingOptions(mode="nonperiodic", cutoff_hz=5.0))
    with pytest.raises(RobidInputError, match="needs a periodic run"):
        identify(robot, [motor], nonperiodic)
    with pytest.raises(RobidInputError, match="no elastic joints"):
        identify(robid.load_robot(robot_file, terms=RIGID), [motor], _options(motor_encoders_only=True))


def test_motor_only_record_predicts_a_file(runs, tmp_path):
    from robid.identification.predict import predict_file
    from robid.io.result_file import read_result, write_result

    robot_file, ((_, motor), (_, valid_motor)) = runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    record = identify(robot, [motor], _options(motor_encoders_only=True))
    write_result(tmp_path / "result.json", record)
    again = read_result(tmp_path / "result.json")
    assert again.processing.motor_encoders_only
    pred = predict_file(robot, again, valid_motor)
    assert np.all(pred.rre_percent < 3.0), pred.rre_percent


def test_report_shows_the_springs_of_a_motor_only_record(runs, tmp_path):
    from robid.report import write_report

    robot_file, ((_, motor), _) = runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    record = identify(robot, [motor], _options(motor_encoders_only=True))
    write_report(tmp_path / "report.html", record, robot, title="motor encoders only")
    page = (tmp_path / "report.html").read_text()
    section = page[page.index('id="elastic"'):]
    assert "k_J1" in section and "from motor encoders only" in section
    assert "Recorded and predicted deflection" not in section  # nothing was recorded
    assert all(run.display.deflection_measured is None for run in record.runs)
