"""Sensors of the virtual robot (noise, quantisation, jitter, delay, determinism), the measurement CSV, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from robid.cli import main
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile, save_trajectory
from robid.simulation import SensorSettings, simulate

DATA = Path(__file__).resolve().parent / "data"
PLANAR = DATA / "planar_2r.yaml"
IDEAL = dict(encoder_counts=None, link_encoder_counts=None)


def trajectory(dof=2, period=4.0, seed=0, rest_order=4):
    rng = np.random.default_rng(seed)
    a = rng.normal(scale=0.2, size=(dof, 3))
    b = rng.normal(scale=0.2, size=(dof, 3))
    return FourierTrajectory(period, np.full(dof, 0.3), a, b, rest_order).project_rest()


@pytest.fixture(scope="module")
def noisy():
    sensors = SensorSettings(q_noise=1e-4, tau_noise=(0.5, 0.2), **IDEAL)
    return simulate(PLANAR, trajectory(), periods=5, sensors=sensors, seed=11)


def test_noise_standard_deviations_are_as_set(noisy):
    m = noisy.measured
    assert m.q.shape == (5000, 2)  # 5 periods of 4 s at 250 Hz, end point left out
    assert np.std(m.q - noisy.q, axis=0) == pytest.approx([1e-4, 1e-4], rel=0.05)
    assert np.std(m.tau - noisy.tau, axis=0) == pytest.approx([0.5, 0.2], rel=0.05)
    assert np.abs(np.mean(m.tau - noisy.tau, axis=0)).max() < 0.05
    np.testing.assert_array_equal(m.tau_noise_std, [0.5, 0.2])


def test_relative_torque_noise_and_presets():
    res = simulate(PLANAR, trajectory(), periods=3, sensors=SensorSettings.with_noise_level("high", **IDEAL), seed=1)
    rms = np.sqrt(np.mean(res.tau**2, axis=0))
    np.testing.assert_allclose(res.measured.tau_noise_std, 0.03 * rms)
    assert np.std(res.measured.tau - res.tau, axis=0) == pytest.approx(0.03 * rms, rel=0.07)


def test_encoder_quantisation_through_the_gear():
    """Rigid joints read by the motor encoder: steps of 2 pi / (counts * gear ratio), rounding error <= step/2."""
    res = simulate(
        "kr_heavy",
        trajectory(6, period=2.0),
        periods=1,
        duration=0.4,
        sensors=SensorSettings(encoder_counts=4096, link_encoder_counts=2**16),
        seed=0,
    )
    model_gears = np.array([256.857142857, 267.428571429, 252.333333333, 221, 239.619047619, 154.323134328])
    step = np.where(np.arange(6) < 3, 2 * np.pi / 2**16, 2 * np.pi / (4096 * model_gears))  # A1-A3 elastic: link enc.
    np.testing.assert_allclose(res.measured.q_resolution, step)
    counts = res.measured.q / step
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)
    assert np.all(np.abs(res.measured.q - res.q) <= step / 2 + 1e-12)
    motor_step = 2 * np.pi / (4096 * model_gears)
    assert np.all(np.abs(res.measured.theta - res.theta) <= motor_step / 2 + 1e-12)
    assert res.measured.columns()[-6:] == [f"theta{j}" for j in range(1, 7)]  # elastic robot: theta recorded


def test_jitter_and_delay_shift_the_sampling_instants():
    sensors = SensorSettings(jitter=1e-3, delay=0.01, **IDEAL)
    res = simulate(PLANAR, trajectory(), periods=1, sensors=sensors, seed=2)
    shift = res.t_sampled - res.t
    assert np.std(shift + 0.01) == pytest.approx(1e-3, rel=0.15)
    assert np.all(np.abs(shift + 0.01) <= 0.4 / 250 + 1e-15)
    assert np.all(np.diff(res.t_sampled) > 0)
    np.testing.assert_allclose(res.t, np.arange(1000) / 250)
    # values are those of the plant at the shifted instants: the reference there is q_ref(t - delay + jitter)
    ref = trajectory().derivative(res.t_sampled)
    inside = res.t_sampled > 0
    np.testing.assert_allclose(res.q_ref[inside], ref[inside])


def test_same_seed_same_file_other_seed_other_file(tmp_path):
    sensors = SensorSettings.with_noise_level("realistic")
    files = []
    for k, seed in enumerate((5, 5, 6)):
        res = simulate(PLANAR, trajectory(), periods=1, sensors=sensors, seed=seed)
        files.append(res.write_csv(tmp_path / f"m{k}.csv").read_bytes())
    assert files[0] == files[1]
    assert files[0] != files[2]


def test_csv_has_the_canonical_columns(tmp_path, noisy):
    path = noisy.write_csv(tmp_path / "meas.csv")
    df = pd.read_csv(path)
    assert list(df.columns) == ["t", "q1", "q2", "tau1", "tau2"]  # rigid robot: no theta by default
    np.testing.assert_allclose(df[["q1", "q2"]].to_numpy(), noisy.measured.q, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(df[["tau1", "tau2"]].to_numpy(), noisy.measured.tau, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(df["t"].to_numpy(), noisy.t, rtol=1e-12)
    assert not list(tmp_path.glob("*.tmp"))  # atomic write left nothing behind


def test_truth_names(noisy):
    assert noisy.truth["m_P1"] == 2.0
    assert noisy.truth["mx_P1"] == pytest.approx(2.0 * -0.25)
    res = simulate("kr_heavy", trajectory(6, period=2.0), periods=1, duration=0.05, seed=0)
    for name in ("Ia_A1", "fc_A2", "k_A3", "d_A1", "comp_p0_A2", "comp_area_A2", "Izz_A6"):
        assert name in res.truth
    assert res.truth["Ia_A1"] == pytest.approx(0.00923 * 256.857142857**2)


def test_cli_simulate(tmp_path, capsys):
    traj = tmp_path / "traj.json"
    save_trajectory(traj, TrajectoryFile(trajectory(), JointLimitSet.create(2)))
    out = tmp_path / "meas.csv"
    truth = tmp_path / "truth.json"
    code = main(
        [
            "simulate",
            str(PLANAR),
            str(traj),
            "--out",
            str(out),
            "--periods",
            "1",
            "--rate",
            "100",
            "--seed",
            "3",
            "--truth",
            str(truth),
            "--currents",
        ]
    )
    assert code == 2  # the planar robot has no drives: currents impossible, named
    assert "torque_constant" in capsys.readouterr().err
    code = main(
        [
            "simulate",
            str(PLANAR),
            str(traj),
            "--out",
            str(out),
            "--periods",
            "1",
            "--rate",
            "100",
            "--seed",
            "3",
            "--truth",
            str(truth),
            "--q-noise",
            "0",
            "--tau-noise",
            "0.1",
        ]
    )
    assert code == 0
    df = pd.read_csv(out)
    assert list(df.columns) == ["t", "q1", "q2", "tau1", "tau2"] and len(df) == 400
    doc = json.loads(truth.read_text())
    assert doc["kind"] == "simulation-truth" and doc["parameters"]["m_P2"] == 1.5
    assert doc["tau_noise_std"] == [0.1, 0.1]


@pytest.mark.parametrize(
    "extra, field",
    [(["--rate", "0"], "--rate"), (["--noise", "loud"], "--noise"), (["--tau-noise", "-1"], "--tau-noise")],
)
def test_cli_bad_input_names_the_field(tmp_path, capsys, extra, field):
    traj = tmp_path / "traj.json"
    save_trajectory(traj, TrajectoryFile(trajectory(), JointLimitSet.create(2)))
    code = main(["simulate", str(PLANAR), str(traj), "--out", str(tmp_path / "m.csv"), *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: ") and field in err


def test_cli_trajectory_for_another_robot(tmp_path, capsys):
    traj = tmp_path / "traj.json"
    save_trajectory(traj, TrajectoryFile(trajectory(), JointLimitSet.create(2)))
    assert main(["simulate", "kr_heavy", str(traj), "--out", str(tmp_path / "m.csv")]) == 2
    assert "center" in capsys.readouterr().err


def test_rest_to_rest_needs_whole_periods():
    from robid.errors import RobidInputError

    with pytest.raises(RobidInputError, match="periods"):
        simulate(PLANAR, trajectory(), periods=1.5)
