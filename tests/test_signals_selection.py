"""Resampling of jittered stamps, data selection, and what ``robid process`` writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robid.cli import main
from robid.signals import Measurement, ProcessingOptions, process
from robid.signals.resampling import to_uniform_grid
from robid.signals.selection import near_zero_velocity, standstill_segments

ROBOT = str(Path(__file__).resolve().parent / "data" / "signals" / "robot2.yaml")
T = 5.0
W = 2.0 * np.pi / T


def q_of(t):
    return np.column_stack([0.6 * np.sin(W * t) + 0.2 * np.cos(3 * W * t), 0.4 * np.sin(2 * W * t + 0.5)])


def qdd_of(t):
    return np.column_stack(
        [-0.6 * W**2 * np.sin(W * t) - 1.8 * W**2 * np.cos(3 * W * t), -1.6 * W**2 * np.sin(2 * W * t + 0.5)]
    )


def jittered_times(duration: float, seed: int = 0) -> np.ndarray:
    """UR10e-like stamps: steps between 2 and 34 ms around a 10 ms median."""
    rng = np.random.default_rng(seed)
    steps = np.clip(rng.normal(0.010, 0.002, size=int(duration / 0.010) + 50), 0.002, 0.034)
    steps[rng.integers(0, steps.size, size=steps.size // 200)] = 0.034
    t = np.concatenate([[0.0], np.cumsum(steps)])
    return t[t <= duration]


def test_jittered_stamps_resampled_by_cubic_spline():
    t = jittered_times(4 * T)
    dt = np.diff(t)
    assert dt.min() < 0.005 and dt.max() > 0.03
    grid = to_uniform_grid(t, {"q": q_of(t)})
    assert np.allclose(np.diff(grid.t), 1.0 / grid.rate)
    err = np.max(np.abs(grid.signals["q"] - q_of(grid.t)))
    print(f"\nresampling error of jittered stamps (2-34 ms): {err:.2e} rad; {grid.description}")
    assert err < 1e-6
    assert "cubic-spline" in grid.description


def test_periodic_processing_of_jittered_stamps():
    t = jittered_times(6 * T, seed=1)
    q = q_of(t)
    m = Measurement(source="jitter", t=t, q=q, tau=np.cos(q))
    p = process(m, ProcessingOptions(period=T, harmonics=(1, 2, 3), rate=100.0))
    assert p.n_periods in (5, 6)
    ref = qdd_of(p.t)
    assert np.max(np.abs(p.qdd - ref)) < 1e-4 * np.max(np.abs(ref))


def test_standstill_segments_and_near_zero_velocity():
    t = np.arange(0, 10, 0.01)
    qd = np.zeros((t.size, 2))
    qd[(t > 2) & (t < 7), 0] = 0.5
    qd[(t > 3) & (t < 6), 1] = -0.2
    segments = standstill_segments(t, qd, speed=0.01, min_duration=0.5)
    assert len(segments) == 2
    assert segments[0][0] == 0.0 and abs(segments[0][1] - 2.0) < 0.011
    assert abs(segments[1][0] - 7.0) < 0.011 and segments[1][1] == t[-1]
    keep = near_zero_velocity(qd, 0.1)
    assert keep[:, 0].sum() == np.count_nonzero((t > 2) & (t < 7))


def test_drop_standstill_marks_rows_unused_and_writes_keep_columns(tmp_path, capsys):
    t = np.arange(0, 14, 0.005)
    u = np.clip((t - 2.0) / 10.0, 0, 1)
    move = np.sin(np.pi * u) ** 4
    q = np.column_stack([0.5 * move, -0.3 * move])
    tau = np.column_stack([np.cos(q[:, 0]), np.sin(q[:, 1]) + 0.2])
    meas = tmp_path / "m.csv"
    with open(meas, "w") as f:
        f.write("t,q1,q2,tau1,tau2\n")
        np.savetxt(f, np.column_stack([t, q, tau]), delimiter=",", fmt="%.12g")
    out, summary = tmp_path / "p.csv", tmp_path / "s.json"
    code = main(
        ["process", ROBOT, str(meas), "--out", str(out), "--drop-standstill", "--summary", str(summary), "--quiet"]
    )
    assert code == 0, capsys.readouterr().err
    report = json.loads(summary.read_text())
    assert report["mode"] == "rest-to-rest"
    assert report["standstill_s"] and report["unused_rows_per_joint"][0] > 0
    header = out.read_text().splitlines()[0].split(",")
    assert header[-2:] == ["keep1", "keep2"]


def test_trajectory_file_gives_period_and_harmonics_and_fourth_derivatives(tmp_path, capsys):
    t = np.arange(0, 4 * T, 0.004)
    q = q_of(t)
    meas = tmp_path / "m.csv"
    with open(meas, "w") as f:
        f.write("t,q1,q2,tau1,tau2,theta1,theta2\n")
        np.savetxt(f, np.column_stack([t, q, np.cos(q), q + 1e-3]), delimiter=",", fmt="%.15g")
    traj = tmp_path / "traj.json"
    traj.write_text(json.dumps({"robid": 1, "kind": "excitation-trajectory", "period": T, "harmonics": 3}))
    out, summary = tmp_path / "p.csv", tmp_path / "s.json"
    argv = ["process", ROBOT, str(meas), "--out", str(out), "--trajectory", str(traj), "--derivatives", "4"]
    assert main([*argv, "--summary", str(summary)]) == 0
    report = json.loads(summary.read_text())
    assert report["period_s"] == T and report["period_source"] == "trajectory" and report["n_periods"] == 4
    assert {1, 2, 3} <= set(report["harmonics"])
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    header = out.read_text().splitlines()[0].split(",")
    # keep columns: robid process leaves out |qd| < 0.05 rad/s by default, like identify
    assert header == ["t"] + [f"{p}{j}" for p in ("q", "qd", "qdd", "qddd", "qdddd", "tau", "theta", "keep")
                              for j in (1, 2)]
    qdddd = table[:, header.index("qdddd1")]
    ref = 0.6 * W**4 * np.sin(W * table[:, 0]) + 0.2 * (3 * W) ** 4 * np.cos(3 * W * table[:, 0])
    assert np.max(np.abs(qdddd - ref)) < 1e-8 * np.max(np.abs(ref))
    assert "T = 5 s (trajectory)" in capsys.readouterr().out
