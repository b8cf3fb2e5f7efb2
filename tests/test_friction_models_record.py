"""Friction model selection inside identification (issue 16): ``IdentificationOptions.friction_models`` /
``robid identify --friction-models``: the record's ``friction_models`` section (schema 1.4), its JSON round trip,
the report section, and the choice on the virtual robot with Stribeck friction on two of three joints."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import robid
from robid.excitation.fourier import FourierTrajectory
from robid.identification.identify import IdentificationOptions, run_identification
from robid.io.result_file import read_result, write_result
from robid.record.identification import SCHEMA_VERSION
from robid.signals import ProcessingOptions
from robid.simulation import SensorSettings, simulate
from tests.test_closed_loop_estimators import _arm, _trajectory

STRIBECK = {1: (2.5, 3.0, 4.5, 0.15), 2: (3.5, 4.0, 6.0, 0.15)}  # joint: fv, fc, fs, vs


@pytest.fixture(scope="module")
def stribeck_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stribeck")
    path = _arm(tmp)
    doc = yaml.safe_load(path.read_text())
    for k, (fv, fc, fs, vs) in STRIBECK.items():
        doc["joints"][k]["friction"] = {"model": "stribeck", "viscous": fv, "coulomb": fc, "static": fs,
                                        "stribeck_velocity": vs, "offset": 0.0}
    path.write_text(yaml.safe_dump(doc))
    rng = np.random.default_rng(9)
    other = FourierTrajectory(4.0, np.array([0.0, -0.1, 0.3]), rng.normal(scale=0.3, size=(3, 4)),
                              rng.normal(scale=0.3, size=(3, 4)), None)
    third = FourierTrajectory(6.0, np.array([-0.2, 0.1, 0.2]), rng.normal(scale=0.3, size=(3, 5)),
                              rng.normal(scale=0.3, size=(3, 5)), None)
    files = {}
    for name, traj in (("ident", _trajectory()), ("valid", other), ("held_out", third)):
        run = simulate(path, traj, periods=4, seed=3,
                       sensors=SensorSettings(q_noise=1e-5, tau_noise=0.05, encoder_counts=None))
        files[name] = tmp / f"{name}.csv"
        run.write_csv(files[name])
    return path, files


def test_selection_picks_stribeck_where_it_was_simulated_and_the_record_carries_it(stribeck_runs, tmp_path):
    """Validation-run selection: linear on K1, Stribeck on K2 and K3; fs, vs, fc, fv within 5 % of the truth; the
    section survives the JSON round trip and renders in the report with its table and figure."""
    path, files = stribeck_runs
    robot = robid.load_robot(path)
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.02),
                                    friction_models=("linear", "stribeck", "sigmoid"))
    result = run_identification(robot, [files["ident"]], options, validation_files=[files["valid"]])
    fm = result.record.friction_models
    assert fm.criterion == "validation"
    assert fm.chosen[1:] == ("stribeck", "stribeck")
    values = {p.name: p.value for p in fm.parameters}
    # K1's friction is linear in the plant, but the closed loop sticks at its reversals (the plant's Coulomb is
    # tanh(v / 1e-4): the joint holds while the PD torque rises through +-fc), which no linear model reproduces.
    # Measured 2026-11-29: on the validation run as processed since issue 31, a Stribeck fit with fs_K1 = 0.84 below
    # fc_K1 = 2.02 (friction rising from rest over vs = 0.028 rad/s, the stick phase) predicts 2.6 % better than
    # the linear one (0.1911 against 0.1962 N m), above the 0.5 % the selection asks: so K1 may take it, but only
    # as friction rising from rest, never as a Stribeck dip above the Coulomb level, and only for a small gain.
    if fm.chosen[0] == "stribeck":
        assert values["fs_K1"] < values["fc_K1"]
        rows = {c.model: c.validation_rms for c in fm.candidates if c.joint == "K1"}
        assert rows["stribeck"] > 0.95 * rows["linear"], rows
    for k, truth in STRIBECK.items():
        joint = robot.joint_names[k]
        for name, t in zip(("fv", "fc", "fs", "vs"), truth, strict=True):
            assert values[f"{name}_{joint}"] == pytest.approx(t, rel=0.05), f"{name}_{joint}"
    chosen_rows = [c for c in fm.candidates if c.chosen]
    assert [c.joint for c in chosen_rows] == list(robot.joint_names)
    write_result(tmp_path / "result.json", result.record)
    again = read_result(tmp_path / "result.json")
    assert again.schema == SCHEMA_VERSION and again.friction_models == fm
    # adopted: the record's base values are the joint fit's, and its model is what predict evaluates
    assert fm.adopted and fm.nonlinear_joints[-2:] == ("K2", "K3")
    fit = dict(zip(fm.fit.names, fm.fit.values, strict=True))
    assert all(p.value == fit[p.name] for p in again.base_parameters if p.name in fit)
    assert again.processing.friction_models == ("linear", "stribeck", "sigmoid")
    from robid.report import write_report

    html = write_report(tmp_path / "report.html", again, robot).read_text()
    assert 'id="friction-models"' in html and "friction models, joints K1, K2, K3" in html


def test_without_friction_models_the_record_has_no_section(stribeck_runs, tmp_path):
    path, files = stribeck_runs
    options = IdentificationOptions(friction_models=())
    record = run_identification(robid.load_robot(path), [files["ident"]], options).record
    assert record.friction_models is None
    write_result(tmp_path / "r.json", record)
    assert '"friction_models"' not in (tmp_path / "r.json").read_text()


def test_by_default_the_friction_models_are_compared_and_said(stribeck_runs):
    """Defaults only: the comparison runs (a small rigid problem), is said in the record's choices, and the
    Stribeck joints are found by BIC without a validation run."""
    path, files = stribeck_runs
    record = run_identification(robid.load_robot(path), [files["ident"]]).record
    assert any(c.startswith("friction models: linear, stribeck, sigmoid compared") for c in record.choices)
    assert record.friction_models.criterion == "bic" and record.friction_models.adopted
    assert record.friction_models.chosen[1:] == ("stribeck", "stribeck")


def test_the_command_line_checks_the_friction_models(stribeck_runs, tmp_path, capsys):
    from robid.cli import main

    path, files = stribeck_runs
    code = main(["identify", str(path), str(files["ident"]), "--out", str(tmp_path / "r.json"),
                 "--friction-models", "linear,coulomb"])
    assert code == 2 and "--friction-models" in capsys.readouterr().err
    code = main(["identify", str(path), str(files["ident"]), "--out", str(tmp_path / "r.json"),
                 "--friction-models", "linear,stribeck", "--min-speed", "0.02"])
    assert code == 0
    assert read_result(tmp_path / "r.json").friction_models.criterion == "bic"
    assert "friction models (chosen by bic; the identified model): K1 " in capsys.readouterr().out
