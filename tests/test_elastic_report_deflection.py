"""The recorded deflection of elastic joints beside the one the identified model predicts (docs/elastic.md,
"Report:"): run records (robid.identification.run_records.elastic_deflection), RESULT.json and the report's
"Elastic joints" section.

Virtual robot: Do's planar 2R with link and motor encoders, spring damping and motor Coulomb friction, as in
tests/test_elastic_identification.py, one identification and one validation run of 2 periods each.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from oracles.damped_2r import damped_2r_runs

import robid
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, identify
from robid.identification.run_records import deflection_of_spring_torque
from robid.model.terms import default_terms
from robid.record import IdentificationRecord
from robid.signals import ProcessingOptions

MIN_SPEED = 0.1  # rad/s, as tests/test_elastic_identification.py
TERMS = ("rigid", "rotor", "viscous", "coulomb", "stiffness", "damping", "link_viscous")
#: RMS(recorded - predicted) / RMS(recorded): measured 0.25 % (both joints, both runs)
AGREEMENT = 0.01
#: the same against the RMS of the recorded deflection about its mean (the dynamic part): measured 0.4 - 0.9 %
DYNAMIC_AGREEMENT = 0.03


@pytest.fixture(scope="module")
def elastic_runs(tmp_path_factory):
    return damped_2r_runs(tmp_path_factory.mktemp("elastic_deflection"), periods=2)


@pytest.fixture(scope="module")
def elastic_record(elastic_runs):
    robot_file, (ident, valid) = elastic_runs
    robot = robid.load_robot(robot_file, terms=TERMS)
    options = IdentificationOptions(method="wls", processing=ProcessingOptions(min_speed=MIN_SPEED))
    return robot, identify(robot, [ident], options, validation_files=[valid])


def _rms(x) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def test_recorded_and_predicted_deflection_agree(elastic_record):
    robot, record = elastic_record
    assert [run.role for run in record.runs] == ["identification", "validation"]
    print()
    for run in record.runs:
        d = run.display
        measured, predicted = d.array("deflection_measured"), d.array("deflection_predicted")
        assert measured.shape == (len(d.t), 2) and np.all(np.isfinite(measured)) and np.all(np.isfinite(predicted))
        for j, joint in enumerate(robot.joint_names):
            rec, pred = _rms(measured[:, j]), _rms(predicted[:, j])
            diff = _rms(measured[:, j] - predicted[:, j])
            dynamic = _rms(measured[:, j] - measured[:, j].mean())
            print(f"{run.role:14s} {joint}: RMS recorded {1e3 * rec:.4f} mrad, predicted {1e3 * pred:.4f} mrad, "
                  f"difference {1e3 * diff:.5f} mrad ({100 * diff / rec:.2f} % of the recorded, "
                  f"{100 * diff / dynamic:.2f} % of its part about the mean {1e3 * dynamic:.4f} mrad)")
            assert diff < AGREEMENT * rec, (run.role, joint)
            assert diff < DYNAMIC_AGREEMENT * dynamic, (run.role, joint)


def test_deflection_of_spring_torque_is_the_per_harmonic_solution():
    rate, period, stiffness, damping = 500.0, 2.0, 2000.0, 12.0
    t = np.arange(int(rate * period)) / rate
    w = 2 * np.pi / period
    torque = 40.0 + 25.0 * np.sin(w * t) + 8.0 * np.cos(7 * w * t + 0.3)
    omega = 2 * np.pi * np.fft.rfftfreq(t.size, 1 / rate)
    exact = np.fft.irfft(np.fft.rfft(torque) / (stiffness + 1j * damping * omega), t.size)
    delta = deflection_of_spring_torque(torque, stiffness, damping, rate)
    settled = t > 10 * damping / stiffness  # the start transient from the quasi-static value has decayed
    np.testing.assert_allclose(delta[settled], exact[settled], rtol=0, atol=1e-5 * np.abs(exact).max())
    assert abs(delta[0] - torque[0] / stiffness) < 1e-15
    np.testing.assert_allclose(deflection_of_spring_torque(torque, stiffness, 0.0, rate), torque / stiffness,
                               rtol=1e-12)


def test_result_json_round_trip_and_older_records(elastic_record, tmp_path):
    from robid.io.result_file import read_result, write_result

    _, record = elastic_record
    write_result(tmp_path / "result.json", record)
    assert read_result(tmp_path / "result.json") == record
    data = json.loads(record.to_json())
    assert len(data["data"][0]["display"]["deflection_predicted"]) == 2
    # a record written before 1.2 has no deflection: it still loads, without it
    for run in (*data["data"], *data["validation_data"]):
        del run["display"]["deflection_measured"], run["display"]["deflection_predicted"]
    older = IdentificationRecord.from_dict(data | {"schema": "1.1"}, "older.json")
    assert all(run.display.deflection_measured is None and run.display.deflection_predicted is None
               for run in older.runs)
    without = dataclasses.replace
    assert older.data[0] == without(record.data[0], display=without(record.data[0].display, deflection_measured=None,
                                                                     deflection_predicted=None))
    # a deflection series that has not one value per sample is refused, naming the key
    data = json.loads(record.to_json())
    data["data"][0]["display"]["deflection_measured"][1].pop()
    with pytest.raises(RobidInputError, match=r"data\[0\].display.deflection_measured\[1\]: "):
        IdentificationRecord.from_dict(data, "bad.json")


def test_report_shows_the_deflection_only_for_elastic_records(elastic_runs, elastic_record, tmp_path):
    from robid.report import write_report

    robot, record = elastic_record
    write_report(tmp_path / "elastic.html", record, robot, title="elastic")
    page = (tmp_path / "elastic.html").read_text()
    section = page[page.index('<section id="elastic"'):]
    section = section[:section.index("</section>")]
    part = section[section.index("Recorded and predicted deflection"):]
    for run in record.runs:
        assert f'alt="{run.label}: recorded and predicted deflection, joints J1, J2"' in part
    tables = part.split("<table>")[1:]
    assert len(tables) == 2 and all("<td>J1</td>" in t and "<td>J2</td>" in t and "mrad" in t for t in tables)
    robot_file, (ident, _) = elastic_runs
    # the rigid layout asked for by its terms (by default the motor positions in the file choose the elastic one)
    model = robid.load_robot(robot_file).model
    rigid = robid.load_robot(robot_file, terms=default_terms(model))
    options = IdentificationOptions(method="wls", processing=ProcessingOptions(min_speed=MIN_SPEED))
    rigid_record = identify(rigid, [ident], options)
    assert rigid_record.data[0].display.deflection_measured is None
    assert "deflection_measured" not in json.loads(rigid_record.to_json())["data"][0]["display"]
    write_report(tmp_path / "rigid.html", rigid_record, rigid, title="rigid")
    text = (tmp_path / "rigid.html").read_text()
    assert "recorded and predicted deflection" not in text.lower() and 'id="elastic"' not in text
