"""Held (standstill) friction (issue 32): robid.estimation.held_friction, robid.identification.held_friction.

* The fit recovers a decay's amplitude and time constant from rows made by the closed form, within 3 std, and the
  selection takes the simplest model the data need (hypothesis over amplitudes, time constants, noise).
* A robot with a known history-dependent held friction (a fraction of the last motion's Coulomb torque, decaying
  on two joints, constant on the other), point-to-point runs with rests between ten points: the default
  identification chooses the simulated form per joint on the held-out run's holds, the record carries it through
  RESULT.json (schema 2.2), and ``predict`` on a third run is within 1.5x of an ideal fit told the form, on every
  joint; the model without held friction (what predict did before, a peer's smooth Coulomb at rest) is worse
  wherever the held torque is not negligible against the noise.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robid
from robid.estimation.held_friction import HoldRows, fit_held, held_torque, hold_features, select_held
from robid.identification import run_identification
from robid.identification.held_friction import fit_held_friction
from robid.identification.predict import MARK_USED, predict_file
from robid.io.result_file import read_result, write_result
from robid.record.held_friction import HeldFriction

RATE = 250.0
#: joint: (model, fraction of fc, time constant s) -- the simulated held friction
HELD = {0: ("decay", 0.8, 1.2), 1: ("constant", 0.6, None), 2: ("decay", 0.5, 0.5)}


def _rows(h, T, noise, seed, holds=6):
    rng = np.random.default_rng(seed)
    e = np.tile(np.arange(0.0, 2.0, 0.01), holds)
    d = np.repeat(rng.choice([-1.0, 1.0], holds), e.size // holds)
    r = held_torque("decay", h, T, d, e) + noise * rng.normal(size=e.size)
    return HoldRows(r, d, e, holds)


@settings(max_examples=25, deadline=None)
@given(h=st.floats(0.5, 20.0), T=st.floats(0.1, 3.0), noise=st.floats(0.01, 0.3), seed=st.integers(0, 99))
def test_the_decay_fit_recovers_the_closed_form(h, T, noise, seed):
    fit = fit_held(_rows(h, T, noise, seed), "decay")
    assert abs(fit.amplitude - h) < 3 * fit.amplitude_std + 1e-9
    assert abs(fit.time_constant - T) < 3 * fit.time_constant_std + 1e-9
    chosen, fits, criterion = select_held(_rows(h, T, noise, seed), _rows(h, T, noise, seed + 1))
    assert criterion == "validation" and [f.model for f in fits] == ["none", "constant", "decay"]
    if h / noise > 10 and T < 1.0:  # a decay within the 2 s holds, well above the noise: the decay is needed
        assert chosen.model == "decay"


def test_without_held_torque_the_selection_keeps_none():
    rows = _rows(0.0, 1.0, 0.2, 3)
    chosen, _, criterion = select_held(rows)
    assert criterion == "bic" and chosen.model == "none"


def test_hold_features_take_the_direction_of_the_last_motion():
    t = np.arange(0.0, 4.0, 0.01)
    v = np.where(t < 1.0, 0.0, np.where(t < 2.0, -0.3, 0.0))[:, None]
    held = (np.abs(v) < 1e-9)
    d, e, index = hold_features(t, v, held)
    assert np.all(d[t < 1.0] == 0)  # the record starts at rest: no history
    assert np.all(d[t >= 2.0] == -1) and e[t >= 2.0][0] == 0.0 and e[-1] == pytest.approx(1.99)
    assert set(index[held]) == {0, 1}


def _point_to_point(robot, seed, moves=10):
    """Quintic moves between ten random points inside the middle 30 % of the position limits, rests of 1.5-3 s."""
    rng = np.random.default_rng(seed)
    lo, hi = (np.array([j.limits.position[k] for j in robot.model.joints]) for k in (0, 1))
    points = [(lo + hi) / 2] + [(lo + hi) / 2 + rng.uniform(-1, 1, robot.dof) * 0.15 * (hi - lo)
                                for _ in range(moves)]
    parts = [(points[0], points[0], 1.0)]
    for a, b in zip(points[:-1], points[1:], strict=True):
        parts += [(a, b, float(rng.uniform(1.0, 1.6))), (b, b, float(rng.uniform(1.5, 3.0)))]
    q, qd, qdd = [], [], []
    for a, b, T in parts:
        s = np.linspace(0.0, 1.0, int(round(T * RATE)), endpoint=False)[:, None]
        q.append(a + (10 * s**3 - 15 * s**4 + 6 * s**5) * (b - a))
        qd.append((30 * s**2 - 60 * s**3 + 30 * s**4) / T * (b - a))
        qdd.append((60 * s - 180 * s**2 + 120 * s**3) / T**2 * (b - a))
    q, qd, qdd = (np.vstack(x) for x in (q, qd, qdd))
    return np.arange(q.shape[0]) / RATE, q, qd, qdd


def _measurement(robot, seed, path):
    """Inverse dynamics with the robot's friction (Coulomb sign(qd)) and, while a joint rests, the held torque of
    :data:`HELD` after each move instead; 1 % torque noise, 2e-5 rad encoder quantisation."""
    t, q, qd, qdd = _point_to_point(robot, seed)
    tau = robot.inverse_dynamics(q, qd, qdd)
    nominal = dict(zip(robot.parameter_names, robot.parameters, strict=True))
    still = qd == 0.0
    d, e, _ = hold_features(t, qd, still)
    for j, (model, fraction, T) in HELD.items():
        h = fraction * nominal[f"fc_{robot.joint_names[j]}"]
        tau[:, j] += np.where(still[:, j], held_torque(model, h, T, d[:, j], e[:, j]), 0.0)
    rng = np.random.default_rng(seed + 100)
    tau = tau + rng.normal(size=tau.shape) * 0.01 * np.std(tau, axis=0)
    q = np.round(q / 2e-5) * 2e-5
    header = ["t"] + [f"q{j + 1}" for j in range(robot.dof)] + [f"tau{j + 1}" for j in range(robot.dof)]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(header), comments="")


@pytest.fixture(scope="module")
def held_case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("held")
    robot = robid.load_robot("tx200_3axis")
    for k, name in enumerate(("ident", "valid", "test")):
        _measurement(robot, k + 1, folder / f"{name}.csv")
    result = run_identification(robot, [folder / "ident.csv"], validation_files=[folder / "valid.csv"])
    return robot, result, folder


def _rms_at_rest(robot, record, path):
    """(RRE per joint over the compared samples, RMS error on the rows a joint rests)."""
    pred = predict_file(robot, record, path)
    still = np.abs(np.gradient(np.loadtxt(path, delimiter=",", skiprows=1)[:, 1:1 + robot.dof], axis=0)) < 1e-9
    err = np.where((pred.mark == MARK_USED) & still, pred.tau_meas - pred.tau_pred, np.nan)
    return pred.rre_percent, np.sqrt(np.nanmean(err**2, axis=0))


def test_the_default_identification_chooses_the_simulated_form_and_the_record_keeps_it(held_case, tmp_path):
    robot, result, _ = held_case
    held = result.record.held_friction
    assert held.criterion == "validation"
    assert [j.model for j in held.joints] == [HELD[k][0] for k in range(robot.dof)]
    assert all(j.holds == 10 for j in held.joints)
    assert any(c.startswith("held friction (chosen by validation): J1 decay") for c in result.record.choices)
    write_result(tmp_path / "r.json", result.record)
    again = read_result(tmp_path / "r.json")
    assert again.schema == "2.2" and again.held_friction == held


def test_predict_with_held_friction_is_within_1_5x_of_an_ideal_fit_on_every_joint(held_case):
    robot, result, folder = held_case
    record = result.record
    work = dataclasses.replace(result, held_friction=None)
    told = {m: fit_held_friction(work, (m,)) for m in ("decay", "constant")}
    ideal = HeldFriction("told", tuple(told[HELD[k][0]].joints[k] for k in range(robot.dof)))
    rre, rest = _rms_at_rest(robot, record, folder / "test.csv")
    rre_ideal, rest_ideal = _rms_at_rest(robot, dataclasses.replace(record, held_friction=ideal),
                                         folder / "test.csv")
    rre_none, rest_none = _rms_at_rest(robot, dataclasses.replace(record, held_friction=None), folder / "test.csv")
    assert np.all(rre <= 1.5 * rre_ideal), (rre, rre_ideal)
    assert np.all(rest <= 1.5 * rest_ideal), (rest, rest_ideal)
    # the peer (no held friction: a smooth Coulomb term at rest) is worse at rest on every joint
    assert np.all(rest < rest_none), (rest, rest_none)


def test_exports_say_which_held_friction_they_leave_out(held_case, tmp_path):
    from robid.cli import main

    _, result, _ = held_case
    write_result(tmp_path / "r.json", result.record)
    assert main(["export-model", str(tmp_path / "r.json"), "--format", "python", "--out", str(tmp_path / "m.py"),
                 "--base", "tx200_3axis"]) == 0
    text = (tmp_path / "m.py").read_text()
    assert "Held friction at standstill (not in this model" in text and "J1 decay (h " in text


def test_a_record_with_a_bad_held_friction_is_refused(held_case, tmp_path):
    import json

    from robid.errors import RobidInputError

    _, result, _ = held_case
    write_result(tmp_path / "r.json", result.record)
    data = json.loads((tmp_path / "r.json").read_text())
    data["held_friction"]["joints"][0]["time_constant"] = None
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(RobidInputError, match=r"held_friction.joints\[0\].time_constant"):
        read_result(tmp_path / "bad.json")


def test_the_runs_torque_figures_predict_the_holds(held_case):
    """The record's run series (the report's torque figures) hold the prediction at rest on the held rows; the fit
    metrics stay on the rows the data selection kept."""
    from robid.identification.friction_fit import held_still_rows
    from robid.identification.held_friction import rest_grid
    from robid.identification.run_records import predict_dataset

    robot, result, _ = held_case
    d = result.datasets[0]
    held = held_still_rows(d.processed)
    with_held = predict_dataset(robot, d, result.model).mean
    without = predict_dataset(robot, d, dataclasses.replace(result.model, held=None)).mean
    at_rest_only, _, _ = rest_grid(dataclasses.replace(result.model, held=None), robot, d.processed)
    tau = np.asarray(d.processed.tau, dtype=float)
    for j in range(robot.dof):
        rows = held[:, j]
        assert np.all(without[rows, j] == 0.0)  # before: nothing predicted at rest (the data selection's rows)
        rms = [np.sqrt(np.mean((tau[rows, j] - p[rows, j]) ** 2)) for p in (with_held, at_rest_only)]
        assert rms[0] < rms[1], (j, rms)  # the held friction explains part of the torque at rest
    keep = np.asarray(d.processed.keep, dtype=bool)
    np.testing.assert_array_equal(with_held[keep], without[keep])


def test_without_identification_holds_held_out_holds_choose_nothing():
    """A joint never held still after a motion in the identification runs (KR300 campaign, measured): only the
    simplest candidate is fitted, whatever the held-out holds show."""
    empty = HoldRows(np.zeros(0), np.zeros(0), np.zeros(0), 0)
    chosen, fits, _ = select_held(empty, _rows(2.0, 0.5, 0.1, 1))
    assert chosen.model == "none" and [f.model for f in fits] == ["none"]
