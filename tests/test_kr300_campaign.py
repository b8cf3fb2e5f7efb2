"""KUKA KR300 real-data campaign (issue 13): measurements/kuka_kr300/campaign.yaml, identification on run A,
validation on runs B and C, per-axis errors, friction and counterbalance against the values stored with the
recordings (Weigand et al. 2021, anchors README A.1-4; docs/validation.md).

Yardsticks, computed here on the same processed data (5 Hz zero-phase low-pass, parallel-filtered regressor):
* "stored": the CAD model kr_heavy.yaml with the friction stored in the recordings' ``para`` (the authors'
  simulator, nonlinear_differential_model.m: tau_f = f_asym + f_vis qd + f_coul tanh(100 qd) + f_a tanh(f_b qd),
  link side, N m and rad; f_b >= 530 s/rad makes both tanh a sign above 0.01 rad/s, so Coulomb = f_coul + f_a);
* "peer": what the authors identify -- CAD rigid bodies, rotors and counterbalance held, per-axis viscous, Coulomb
  and offset friction by OLS on run A;
* "full OLS": every base parameter free, unconstrained OLS on run A (the textbook recipe).

Measured on 2026-11-27 (validation NRMSE %, B / C, axes 1-3): robid 11.8/14.0, 12.7/15.3, 10.7/7.6;
peer 13.0/15.4, 11.6/12.6, 10.4/7.3; stored 12.7/15.5, 38.8/25.3, 23.3/21.9; full OLS 88/149, 18.5/20.4, 36/46.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "measurements" / "kuka_kr300" / "campaign.yaml"
DATA = ROOT.parent / "shared" / "anchors" / "data" / "Robot_Identification" / "data" / "recorded_trajectories"
RUNS = {r: DATA / f"2020-10-21 10s FF {r} 08ms" / "data.mat" for r in "ABC"}
AXES = ("A1", "A2", "A3", "A4", "A5", "A6")

# Validation NRMSE bounds [%] per axis on B and C. Measured (B / C): A1 11.8 / 14.0, A2 12.7 / 15.3,
# A3 10.7 / 7.6, A4 82 / 36, A5 11.1 / 12.1, A6 15.5 / 12.5. Bounds: about 1.4x the measured value, so that a
# regression to the unconstrained fit (52-100 % on axes 1-2) or to the stored model (39 % on A2) fails. A4's
# torque is small (rms 170 N m against 940-3000 on axes 1-3) and its 80 % on B is a 126 N m rms error: bounded
# loosely, it is not a claim.
BOUNDS = {"A1": 20.0, "A2": 22.0, "A3": 16.0, "A4": 120.0, "A5": 18.0, "A6": 22.0}

pytestmark = pytest.mark.skipif(
    not all(p.exists() for p in RUNS.values()),
    reason=f"KR300 recordings (Weigand et al.) not found under {DATA}: the campaign needs ../shared/anchors/data",
)


def nrmse(tau: np.ndarray, pred: np.ndarray, keep: np.ndarray) -> np.ndarray:
    out = []
    for j in range(tau.shape[1]):
        k = keep[:, j]
        out.append(100 * np.sqrt(np.mean((tau[k, j] - pred[k, j]) ** 2) / np.mean(tau[k, j] ** 2)))
    return np.array(out)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    from robid.campaign import run_campaign
    from robid.campaign.campaign_file import read_campaign

    return run_campaign(read_campaign(CAMPAIGN), tmp_path_factory.mktemp("kr300camp"), log=lambda s: None)


@pytest.fixture(scope="module")
def yardsticks():
    """Processed runs (the campaign's mapping and processing) and the three yardsticks' base values."""
    import scipy.io

    import robid
    from robid.identification.datasets import load_dataset
    from robid.signals import ProcessingOptions

    robot = robid.load_robot("kr_heavy")
    names = list(robot.base_parameters().names)
    nominal = robot.base_parameters().values(robot.parameters)
    options = ProcessingOptions(mode="nonperiodic", cutoff_hz=5.0)
    mapping = CAMPAIGN.parent / "kuka_kr300.yaml"
    sets = {r: load_dataset(robot, f, mapping=mapping, options=options) for r, f in RUNS.items()}
    para = scipy.io.loadmat(RUNS["A"], squeeze_me=True, struct_as_record=False)["para"]
    stored_friction = {a: (para.f_vis[j], para.f_coul[j] + para.f_a[j], para.f_asym[j]) for j, a in enumerate(AXES)}
    friction = [names.index(f"{p}_{a}") for a in AXES for p in ("fv", "fc", "f0")]
    stored = nominal.copy()
    stored[friction] = np.concatenate([stored_friction[a] for a in AXES])
    a = sets["A"]
    keep = np.asarray(a.processed.keep, dtype=bool)
    held = [i for i in range(len(names)) if i not in friction]
    peer = nominal.copy()
    for j, axis in enumerate(AXES):
        idx = [names.index(f"{p}_{axis}") for p in ("fv", "fc", "f0")]
        y = a.tau[:, j] - a.W[:, j, held] @ nominal[held]
        peer[idx] = np.linalg.lstsq(a.W[keep[:, j], j][:, idx], y[keep[:, j]], rcond=None)[0]
    rows = keep.all(axis=1)
    full = np.linalg.lstsq(a.W[rows].reshape(-1, len(names)), a.tau[rows].reshape(-1), rcond=None)[0]
    errors = {}
    for label, beta in (("stored", stored), ("peer", peer), ("full OLS", full)):
        errors[label] = {r: nrmse(s.tau, s.W @ beta, np.asarray(s.processed.keep, bool)) for r, s in sets.items()}
    return {"names": names, "nominal": nominal, "peer": peer, "stored_friction": stored_friction, "errors": errors}


def robid_errors(record) -> dict[str, np.ndarray]:
    out = {"A": np.array([f.nrmse_percent for f in record.metrics.per_joint])}
    for run, v in zip("BC", record.validation_data, strict=True):
        out[run] = np.array([f.nrmse_percent for f in v.fit.per_joint])
    return out


def test_kr300_validation_errors_per_axis(campaign, yardsticks):
    record = campaign.record
    errors = robid_errors(record)
    print("\nNRMSE [%] per axis            A1     A2     A3     A4     A5     A6")
    rms = {"A": [f.rms for f in record.metrics.per_joint]}
    for run, v in zip("BC", record.validation_data, strict=True):
        assert f"FF {run} 08ms" in v.file
        rms[run] = [f.rms for f in v.fit.per_joint]
    for run in "ABC":
        print(f"robid {run} ({'identification' if run == 'A' else 'validation'})".ljust(28)
              + " ".join(f"{x:6.1f}" for x in errors[run]) + "   rms [N m] " + " ".join(f"{x:.0f}" for x in rms[run]))
    for label, per_run in yardsticks["errors"].items():
        for run in "ABC":
            print(f"{label} {run}".ljust(28) + " ".join(f"{x:6.1f}" for x in per_run[run]))
    for run in "BC":
        for j, axis in enumerate(AXES):
            assert errors[run][j] < BOUNDS[axis], (run, axis, errors[run][j])
    # axes 1-3 carry the identification: robid's consistent fit is as good as the peer that holds the CAD model
    # and fits friction only (within 25 %: measured 0.85-1.22x), and better than the unconstrained OLS of the
    # same data on the heavy axes (which overfits 10 s: 18-150 %)
    peer, full = yardsticks["errors"]["peer"], yardsticks["errors"]["full OLS"]
    for run in "BC":
        assert np.all(errors[run][:3] < 1.25 * peer[run][:3]), run
        assert np.mean(errors[run][:3]) < 0.6 * np.mean(full[run][:3]), run
    # the stored friction does not describe axes 2-3 of these recordings (Coulomb half of what the data show)
    stored = yardsticks["errors"]["stored"]
    assert np.all(errors["B"][1:3] < 0.6 * stored["B"][1:3])


def test_kr300_friction_against_the_stored_values(campaign, yardsticks):
    """Friction of axes 1-3 (the moving, link-encoder axes) against para and against the peer's fit.

    Meaningful: axis 1 (vertical, no gravity, no counterbalance: its friction is not confounded with a static
    term) -- robid's fv and fc are within 10-15 % of the stored values. Axes 2-3: the recordings show a Coulomb
    friction about twice the stored f_coul + f_a (robid 564 / 638 N m, the peer 573 / 626, stored 242 / 295); robid
    agrees with the peer, which is what is asserted. Not meaningful: the offsets (f0 absorbs the error of the CAD
    gravity and counterbalance on axes 2-3: stored f_asym -256 / -201 N m, peer +552 / +352) and the wrist axes
    (small torques, motion of 7-72 deg on motor encoders only)."""
    record = campaign.record
    values = {p.name: p for p in record.base_parameters}
    peer, names = yardsticks["peer"], yardsticks["names"]
    print("\naxis   fv robid   peer  stored |   fc robid   peer  stored")
    for axis in AXES[:3]:
        fv, fc = values[f"fv_{axis}"].value, values[f"fc_{axis}"].value
        pfv, pfc = peer[names.index(f"fv_{axis}")], peer[names.index(f"fc_{axis}")]
        sfv, sfc, _ = yardsticks["stored_friction"][axis]
        print(f"{axis}  {fv:9.0f} {pfv:6.0f} {sfv:7.0f} | {fc:9.0f} {pfc:6.0f} {sfc:7.0f}")
        assert abs(fc / pfc - 1) < 0.15, axis
        if axis != "A3":  # A3's viscous term trades with its inertia in 10 s (robid 912, peer 684)
            assert abs(fv / pfv - 1) < 0.15, axis
    sfv, sfc, _ = yardsticks["stored_friction"]["A1"]
    assert abs(values["fv_A1"].value / sfv - 1) < 0.15
    assert abs(values["fc_A1"].value / sfc - 1) < 0.20


def test_kr300_counterbalance_is_reported_collinear_with_gravity(campaign, yardsticks):
    """The 10 s runs move q2 over 30-35 deg: the counterbalance pre-charge p0 cannot be told from the first moment
    of link 2 (corr 1.0000). robid flags it and names the partner; the consistent estimate then leaves p0 where
    the regulariser holds it, the stored model's 162.8 bar (so it is no measurement of the pressure). The pressure
    from these data with mx_A2 held at CAD, 170.3 bar (+4.6 %, inside the measured 162-200 bar), is
    tests/test_compensator_identification.py's."""
    record = campaign.record
    entry = next(e for e in record.compensator.entries if e.name == "comp_p0_A2")
    print("\n" + entry.summary)
    assert entry.flagged and "mx_A2" in entry.flagged_pairs
    p0 = next(p for p in record.base_parameters if p.name == "comp_p0_A2")
    nominal = yardsticks["nominal"][yardsticks["names"].index("comp_p0_A2")]
    assert p0.identifiability != "well-identified"
    assert abs(p0.value / nominal - 1) < 0.05
