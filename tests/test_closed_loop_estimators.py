"""IDIM-IV and DIDIM (issue 16): the closed loop simulated with an estimate, the instrumental-variable step, and
the bias they remove on the virtual robot, against least squares on the same data.

Independent checks: the closed loop of robid's base model (generated regressor) against the virtual robot
(its own recursive Newton-Euler and controller); the estimators against the virtual robot's true values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import robid
from robid.errors import RobidInputError
from robid.estimation import estimate
from robid.estimation.instrumental import iv
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile, save_trajectory
from robid.identification.closed_loop import ControllerModel, EstimatedClosedLoop, Reference
from robid.identification.closed_loop_estimation import ClosedLoopOptions
from robid.identification.identify import IdentificationOptions, run_identification
from robid.signals import ProcessingOptions
from robid.simulation import ControllerSettings, SensorSettings, simulate

DATA = Path(__file__).resolve().parent / "data"
GAINS = ((3000.0, 120.0), (1500.0, 60.0), (500.0, 20.0))


def _arm(tmp_path: Path, gains=GAINS) -> Path:
    """The 3-joint RRR fixture with drives, friction and (optionally) controller gains."""
    doc = yaml.safe_load((DATA / "rrr_mdh.yaml").read_text())
    for k, joint in enumerate(doc["joints"]):
        joint["drive"] = {"gear_ratio": 50.0 + 10 * k, "rotor_inertia": 2e-4}
        joint["friction"] = {"viscous": 1.5 + k, "coulomb": 2.0 + k, "offset": 0.3 * (k - 1)}
        joint["limits"] = {"position": [-3, 3], "velocity": 3, "acceleration": 20}
        if gains:
            joint["controller"] = {"position_gain": gains[k][0], "velocity_gain": gains[k][1]}
    path = tmp_path / ("rrr_closed_loop.yaml" if gains else "rrr_no_gains.yaml")
    path.write_text(yaml.safe_dump(doc))
    return path


def _trajectory() -> FourierTrajectory:
    rng = np.random.default_rng(6)
    return FourierTrajectory(5.0, np.array([0.2, -0.3, 0.5]), rng.normal(scale=0.3, size=(3, 5)),
                             rng.normal(scale=0.3, size=(3, 5)), None)


def test_the_estimated_closed_loop_reproduces_the_virtual_robot(tmp_path):
    """With the true base values, robid's closed loop (generated base regressor, its own controller model) follows
    the virtual robot's motion (recursive Newton-Euler, its own controller) to 1e-6 rad over 20 s, and commands
    the same torque to 2e-3 N m (the Coulomb smoothing erf vs tanh differs at reversals)."""
    path = _arm(tmp_path)
    traj = _trajectory()
    run = simulate(path, traj, periods=4, sensors=SensorSettings(encoder_counts=None), seed=1)
    robot = robid.load_robot(path)
    truth = robot.base_parameters().values(robot.parameters)
    controller = ControllerModel(robot, Reference(traj, 4))
    q, qd, _ = EstimatedClosedLoop(robot, truth, controller).simulate(run.t)
    assert np.abs(q - run.q).max() < 1e-6
    assert np.abs(qd - run.qd).max() < 1e-4
    assert np.abs(controller.torque(run.t, q, qd) - run.tau).max() < 2e-3


def test_instrumental_variables_remove_the_errors_in_variables_bias():
    """Synthetic: W = W_true + noise, instruments independent of that noise. Over 200 noise draws least squares
    is attenuated (mean error many standard errors of the mean away from 0) while IV is not, and the IV's
    reported standard deviations match the scatter of its estimates within 15 %."""
    rng = np.random.default_rng(0)
    n, dof = 400, 2
    t = np.linspace(0, 10, n, endpoint=False)
    basis = np.stack([np.sin(0.6 * t), np.cos(1.1 * t), np.sin(1.9 * t + 0.3)], axis=1)
    W_true = np.stack([basis, basis[:, ::-1] * [1.0, 0.5, 2.0]], axis=1)  # (n, dof, nb)
    beta = np.array([1.5, -0.7, 2.0])
    ls, ivs, stds = [], [], []
    for _ in range(200):
        W = W_true + rng.normal(scale=0.3, size=W_true.shape)
        Z = W_true + rng.normal(scale=0.3, size=W_true.shape)
        tau = W_true @ beta + rng.normal(scale=0.05, size=(n, dof))
        ls.append(estimate(W, tau, method="ols").values)
        result = iv(W, Z, tau)
        ivs.append(result.values)
        stds.append(result.std)
    ls, ivs, stds = np.array(ls), np.array(ivs), np.array(stds)
    sem = ivs.std(axis=0) / np.sqrt(len(ivs))
    assert np.all(np.abs(ls.mean(axis=0) - beta) > 10 * sem)
    assert np.all(np.abs(ivs.mean(axis=0) - beta) < 4 * sem)
    np.testing.assert_allclose(stds.mean(axis=0), ivs.std(axis=0), rtol=0.15)


def _z_scores(path: Path, csv: Path, traj, method: str, feedforward: str):
    robot = robid.load_robot(path)
    truth = robot.base_parameters().values(robot.parameters)
    options = IdentificationOptions(
        method=method, processing=ProcessingOptions(mode="nonperiodic", cutoff_hz=20.0, min_speed=0.1),
        closed_loop=ClosedLoopOptions(trajectory=traj, feedforward=feedforward))
    result = run_identification(robot, [csv], options)
    good = np.array([c.identifiability == "well-identified" for c in result.record.base_parameters])
    return (result.estimate.values - truth) / result.estimate.std, good, result


@pytest.mark.parametrize("seed", [1, 2])
def test_closed_loop_estimators_recover_the_truth_where_least_squares_is_biased(tmp_path, seed):
    """Virtual robot in closed loop (PD + feed-forward with friction), encoder noise 2e-4 rad, non-periodic
    processing with a 20 Hz low-pass (the noise reaches the accelerations): OLS is biased (measured over 10 seeds
    by benchmarks/bench_closed_loop_estimators.py: mean |z| 1.6, max |z| 4.2). IDIM-IV and DIDIM bring every
    well-identified base parameter within 3 reported std of the truth."""
    path = _arm(tmp_path)
    traj = _trajectory()
    run = simulate(path, traj, periods=3, sensors=SensorSettings(q_noise=2e-4, tau_noise=0.05, encoder_counts=None),
                   controller=ControllerSettings(feedforward="full"), seed=seed)
    csv = tmp_path / "run.csv"
    run.write_csv(csv)
    z_ols, good_ols, _ = _z_scores(path, csv, traj, "ols", "full")
    assert np.abs(z_ols).mean() > 1.1  # an unbiased estimate with honest std has mean |z| ~ 0.8
    for method, well_identified in (("idim-iv", good_ols.sum()), ("didim", 20)):
        z, good, result = _z_scores(path, csv, traj, method, "full")
        assert result.record.method == method
        assert good.sum() >= well_identified
        assert np.abs(z[good]).max() < 3.0, (method, np.round(z, 2))
        assert any("closed loop simulated with the estimate" in n for n in result.estimate.notes)


def test_the_closed_loop_estimators_say_what_they_need(tmp_path):
    """No controller gains in the robot file, or no trajectory: a clear error that names what is missing; the
    command line exits with status 2."""
    from robid.cli import main

    traj = _trajectory()
    path = _arm(tmp_path)
    run = simulate(path, traj, periods=2, sensors=SensorSettings(encoder_counts=None), seed=0)
    csv = tmp_path / "run.csv"
    run.write_csv(csv)
    bare = robid.load_robot(_arm(tmp_path, gains=None))
    with pytest.raises(RobidInputError, match="controller: .*position_gain.*for K1, K2, K3"):
        run_identification(bare, [csv], IdentificationOptions(method="didim",
                                                              closed_loop=ClosedLoopOptions(trajectory=traj)))
    with pytest.raises(RobidInputError, match="give its excitation trajectory"):
        run_identification(robid.load_robot(path), [csv], IdentificationOptions(method="idim-iv"))
    assert main(["identify", str(path), str(csv), "--out", str(tmp_path / "r.json"), "--method", "didim"]) == 2
    limits = JointLimitSet.create(3, position=[(-3.0, 3.0)] * 3, velocity=3.0, acceleration=20.0)
    save_trajectory(tmp_path / "traj.json", TrajectoryFile(traj, limits))
    code = main(["identify", str(path), str(csv), "--out", str(tmp_path / "r.json"), "--method", "idim-iv",
                 "--trajectory", str(tmp_path / "traj.json"), "--min-speed", "0.1"])
    assert code == 0
    assert '"method": "idim-iv"' in (tmp_path / "r.json").read_text()


def test_estimators_compared_on_a_validation_run(tmp_path):
    """``compare_methods``: WLS, IDIM-IV, DIDIM and the errors-in-variables estimate on the same run, each scored
    per joint on a held-out run; the lowest mean NRMSE is marked, the record keeps its own method's values, the
    table survives the JSON round trip and renders; a method that cannot run (eiv on a non-periodic run) is listed
    with its reason."""
    from robid.io.result_file import read_result, write_result
    from robid.report import write_report

    path, traj = _arm(tmp_path), _trajectory()
    rng = np.random.default_rng(4)
    other = FourierTrajectory(4.0, np.array([0.1, -0.2, 0.4]), rng.normal(scale=0.3, size=(3, 4)),
                              rng.normal(scale=0.3, size=(3, 4)), None)
    files = []
    for name, t in (("ident", traj), ("valid", other)):
        run = simulate(path, t, periods=3, seed=5, controller=ControllerSettings(feedforward="full"),
                       sensors=SensorSettings(q_noise=2e-4, tau_noise=0.05, encoder_counts=None))
        run.write_csv(tmp_path / f"{name}.csv")
        files.append(tmp_path / f"{name}.csv")
    options = IdentificationOptions(
        method="wls", processing=ProcessingOptions(mode="nonperiodic", cutoff_hz=20.0, min_speed=0.1),
        compare_methods=("idim-iv", "didim", "eiv"),
        closed_loop=ClosedLoopOptions(file_trajectory={str(files[0]): traj}, feedforward="full"))
    record = run_identification(robid.load_robot(path), [files[0]], options, validation_files=[files[1]]).record
    comparison = record.estimator_comparison
    assert comparison.criterion == "validation"
    assert [s.method for s in comparison.scores] == ["wls", "idim-iv", "didim", "eiv"]
    scored = [s for s in comparison.scores if s.error is None]
    assert len(scored) == 3 and "periodic path" in comparison.scores[3].error
    best = min(scored, key=lambda s: s.mean_nrmse_percent)
    assert comparison.chosen == best.method and best.chosen
    assert all(0 < s.mean_nrmse_percent < 20 for s in scored)
    assert record.method == "wls"
    write_result(tmp_path / "r.json", record)
    again = read_result(tmp_path / "r.json")
    assert again.estimator_comparison == comparison
    html = write_report(tmp_path / "report.html", again, robid.load_robot(path)).read_text()
    assert 'id="estimators"' in html and "not computed" in html
    print({s.method: s.mean_nrmse_percent for s in scored})


def test_a_trajectory_the_run_did_not_follow_is_refused(tmp_path):
    """Another period: refused before any simulation; same period, other motion: refused after the first simulation
    (rms difference above 10 % of the motion), with what to check -- not minutes of integration. A compared
    closed-loop method without a trajectory is listed with its reason; an unknown compared method and friction
    selection on a model without friction terms are refused naming the option."""
    from robid.cli import main

    path, traj = _arm(tmp_path), _trajectory()
    run = simulate(path, traj, periods=3, seed=0, sensors=SensorSettings(encoder_counts=None))
    run.write_csv(tmp_path / "run.csv")
    robot = robid.load_robot(path)
    rng = np.random.default_rng(11)
    a, b = rng.normal(scale=0.3, size=(2, 3, 5))
    shorter = FourierTrajectory(4.0, traj.center, a, b)
    other = FourierTrajectory(5.0, traj.center, a, b)
    periodic = ProcessingOptions(period=5.0, min_speed=0.1)
    with pytest.raises(RobidInputError, match="trajectory's period is 4 s"):
        run_identification(robot, [tmp_path / "run.csv"], IdentificationOptions(
            method="didim", processing=periodic, closed_loop=ClosedLoopOptions(trajectory=shorter)))
    with pytest.raises(RobidInputError, match="does not follow the measured motion"):
        run_identification(robot, [tmp_path / "run.csv"], IdentificationOptions(
            method="didim", processing=periodic, closed_loop=ClosedLoopOptions(trajectory=other)))
    record = run_identification(robot, [tmp_path / "run.csv"], IdentificationOptions(
        processing=periodic, compare_methods=("didim",)), validation_files=[tmp_path / "run.csv"]).record
    didim = record.estimator_comparison.scores[1]
    assert didim.method == "didim" and "give its excitation trajectory" in didim.error
    out = str(tmp_path / "r.json")
    assert main(["identify", str(path), str(tmp_path / "run.csv"), "--out", out, "--compare-methods", "wls,foo"]) == 2
    assert main(["identify", str(path), str(tmp_path / "run.csv"), "--out", out, "--compare-methods", ""]) == 2
    assert main(["identify", str(path), str(tmp_path / "run.csv"), "--out", out, "--terms", "rigid,rotor",
                 "--friction-models", "linear,stribeck"]) == 2
