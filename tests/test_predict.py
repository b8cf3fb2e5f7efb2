"""robid predict: the file processed as the record says, every sample predicted or marked with the reason, and
NRMSE / RRE per joint that agree with PRED.csv recomputed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from test_report_html import _measurement, _trajectory

import robid
from robid.cli import main
from robid.identification import IdentificationOptions, run_identification
from robid.identification.predict import MARK_NOT_PREDICTED, MARK_SLOW, MARK_USED, predict_file
from robid.io.result_file import write_result
from robid.signals import ProcessingOptions


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("predict")
    robot = robid.load_robot("tx200_3axis")
    _measurement(robot, _trajectory(robot, 1), folder / "id.csv", 11)
    _measurement(robot, _trajectory(robot, 2), folder / "val.csv", 12)
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.05))
    record = run_identification(robot, [folder / "id.csv"], options).record
    write_result(folder / "RESULT.json", record)
    return robot, record, folder


def test_every_sample_of_a_periodic_record_is_predicted(case):
    """Three whole periods: differentiated sample by sample (not averaged), every sample predicted."""
    robot, record, folder = case
    pred = predict_file(robot, record, folder / "val.csv")
    raw = np.loadtxt(folder / "val.csv", delimiter=",", skiprows=1)
    assert pred.t.shape == (raw.shape[0],) and pred.tau_meas.shape == (raw.shape[0], robot.dof)
    np.testing.assert_array_equal(pred.tau_meas, raw[:, 1 + robot.dof :])
    assert not np.any(pred.mark == MARK_NOT_PREDICTED) and np.all(np.isfinite(pred.tau_pred))
    assert any("periodic-samples" in line or "every sample of the" in line for line in pred.method)
    assert (pred.mark == MARK_SLOW).sum() > 0  # the rests at both ends of each period, |qd| < 0.05 rad/s
    assert np.all(pred.rre_percent < 3.0) and np.all(pred.rre_percent > 0.1)


def test_a_filtered_record_marks_its_edges_not_predicted(case):
    robot, record, folder = case
    pred = predict_file(robot, record, folder / "val.csv", overrides={"mode": "nonperiodic"})
    raw = np.loadtxt(folder / "val.csv", delimiter=",", skiprows=1)
    not_predicted = pred.mark == MARK_NOT_PREDICTED
    assert np.all(np.isnan(pred.tau_pred[not_predicted])) and np.all(np.isfinite(pred.tau_pred[~not_predicted]))
    # not predicted: only the filter edges at both ends of the record (the same samples for every joint)
    rows = np.flatnonzero(not_predicted.any(axis=1))
    assert np.all(not_predicted[rows]) and rows.size < 0.2 * raw.shape[0]
    assert rows[0] == 0 and rows[-1] == raw.shape[0] - 1
    assert np.all(np.diff(rows[rows < raw.shape[0] // 2]) == 1)
    # slow: exactly the samples the stored data selection (|qd| < 0.05 rad/s) leaves out, rests at both ends
    assert (pred.mark == MARK_SLOW).sum() > 0
    assert "not a file of the identification" in " ".join(pred.method)
    # the torques are the nominal model plus 1 % noise: the prediction is good to the noise
    assert np.all(pred.rre_percent < 3.0) and np.all(pred.rre_percent > 0.1)


def test_cli_writes_the_columns_and_prints_metrics_recomputable_from_them(case, tmp_path, capsys):
    robot, _, folder = case
    out = tmp_path / "PRED.csv"
    command = ["predict", "tx200_3axis", str(folder / "RESULT.json"), str(folder / "val.csv"), "--out", str(out)]
    assert main(command) == 0
    printed = capsys.readouterr().out
    header = out.read_text().splitlines()[0].split(",")
    n = robot.dof
    assert header == ["t"] + [f"{p}{j}" for p in ("tau_pred", "tau_meas", "residual", "mark") for j in range(1, n + 1)]
    data = np.genfromtxt(out, delimiter=",", skip_header=1)
    pred, meas, res, mark = (data[:, 1 + k * n : 1 + (k + 1) * n] for k in range(4))
    np.testing.assert_allclose(res[mark != 2], (meas - pred)[mark != 2], rtol=1e-12, atol=1e-12)
    used = mark == MARK_USED
    rre = 100 * np.sqrt(np.sum(np.where(used, res, 0) ** 2, 0)) / np.sqrt(np.sum(np.where(used, meas, 0) ** 2, 0))
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line.startswith("J")}
    for j, name in enumerate(robot.joint_names):
        assert float(rows[name][2]) == pytest.approx(rre[j], abs=6e-4)
    # a given cut-off replaces the stored one, and says so
    assert main([*command, "--cutoff", "3"]) == 0
    given = predict_file(robot, case[1], folder / "val.csv", overrides={"cutoff_hz": 3.0, "mode": "nonperiodic"})
    assert "given for this prediction: cutoff_hz = 3.0, mode = nonperiodic" in given.method
    assert "low-pass of order 4 at 3 Hz" in " ".join(given.method)


def test_coulomb_column_is_the_expected_sign_given_the_velocity_noise():
    """E[sign(qd) | v] for v = qd + n, n ~ N(0, s^2), with a flat prior on qd, checked by sampling."""
    from robid.identification.coulomb import expected_sign

    rng = np.random.default_rng(4)
    s = 0.01
    for v in (0.0, 0.004, -0.012, 0.03):
        true = v - s * rng.standard_normal(400_000)  # posterior of qd given v (flat prior): N(v, s^2)
        assert expected_sign(np.array([v]), s)[0] == pytest.approx(np.mean(np.sign(true)), abs=5e-3)
    np.testing.assert_array_equal(expected_sign(np.array([-2.0, 0.0, 3.0]), 0.0), [-1.0, 0.0, 1.0])


def test_identify_trajectory_period_is_not_forced_on_validation_runs(tmp_path, monkeypatch):
    """``identify --trajectory`` describes the identification runs: a validation run of another motion (another
    period) is processed with its own period, found in its data, not with the trajectory's."""
    from test_report_html import PERIOD, RATE, ROBOT

    from robid.excitation.trajectory_file import save_trajectory
    from robid.io.result_file import read_result

    robot = robid.load_robot(ROBOT)
    traj_id = _trajectory(robot, 1)
    save_trajectory(tmp_path / "traj.json", traj_id)
    _measurement(robot, traj_id, tmp_path / "id.csv", 11)
    other = 0.7 * PERIOD  # same shape, played faster: another period
    t = np.arange(0.0, 3 * other, 1.0 / RATE)
    q, qd, qdd = _trajectory(robot, 2).trajectory.evaluate(t * PERIOD / other)
    qd, qdd = qd * PERIOD / other, qdd * (PERIOD / other) ** 2
    tau = robot.inverse_dynamics(q, qd, qdd) + np.random.default_rng(3).normal(size=q.shape) * 0.05
    header = ",".join(["t"] + [f"q{j + 1}" for j in range(3)] + [f"tau{j + 1}" for j in range(3)])
    np.savetxt(tmp_path / "val.csv", np.column_stack([t, q, tau]), delimiter=",", header=header, comments="")
    monkeypatch.chdir(tmp_path)
    rc = main(["identify", ROBOT, "id.csv", "--trajectory", "traj.json", "--validate", "val.csv",
               "--out", "result.json"])
    assert rc == 0
    record = read_result(tmp_path / "result.json")
    ident = [r for r in record.runs if r.role == "identification"][0]
    val = record.validation_data[0]
    assert ident.period_source == "trajectory" and ident.period_s == pytest.approx(PERIOD)
    assert val.period_source == "detected" and val.period_s == pytest.approx(other, rel=1e-4)
    assert max(m.nrmse_percent for m in val.fit.per_joint) < 10.0
