"""KUKA KR300 real data (Weigand et al. 2021): joint stiffness of axes 1-3 from the link and motor encoders.

The recordings hold link ("secondary") and motor encoders on axes 1-3 (anchors README A.1-4). The link torque
comes from the virtual robot's CAD model kr_heavy.yaml (rigid bodies, wrist and 200 kg payload, hydraulic
counterbalance) at the processed link states; robid.elastic.stiffness fits K with the encoder time offset and one
offset per run. Compared in the output with the values stored with the recordings (4.58e6, 7.52e6, 4.10e6 N m/rad).

What the data show: the link encoder reads 3.0-3.1 ms after the motor encoder on every axis and run; that time
offset is 90 % of the recorded motor-link difference. Once it is fitted, axes 2 and 3 give the stored stiffness
within their spread over the three runs; axis 1, whose link torque is a third of the others' (vertical axis, no
gravity), is less determined and comes out stiffer.

The elastic campaign (measurements/kuka_kr300_elastic/campaign.yaml, last two tests): the stiffness identified
in the elastic layout from run A with the encoder delay undone by the mapping, and the same encoders' stiffness
with the campaign's identified link model, against the stored values (docs/validation.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import robid
from robid.elastic.stiffness import StiffnessRun, joint_stiffness
from robid.io.measurement_file import read_measurement
from robid.model.loader import read_robot
from robid.signals import ProcessingOptions, process

ROOT = Path(__file__).resolve().parents[1]
STORED = {"A1": 4.5778e6, "A2": 7.5189e6, "A3": 4.0999e6}  # para.c_rad (anchors README A.1-4)
HOME_DEG = [0.0, -90.0, 90.0, 0.0, 45.0, 0.0]  # the start pose (tests/test_compensator_identification.py)
CUTOFF_HZ = 20.0


@pytest.fixture(scope="module")
def kr300_runs(tmp_path_factory):
    from conftest import shared_dir

    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared (real data sets) not present")
    data = shared / "anchors" / "data" / "Robot_Identification" / "data" / "recorded_trajectories"
    files = sorted(data.glob("* 08ms/data.mat"))
    if len(files) != 3:
        pytest.skip(f"KR300 recordings not found under {data}")
    mapping = yaml.safe_load((ROOT / "examples" / "mappings" / "kuka_kr300.yaml").read_text())
    offsets = [f"{a}deg" for a in HOME_DEG]
    mapping["positions"]["offset"] = offsets
    mapping["motor_positions"]["offset"] = offsets
    path = tmp_path_factory.mktemp("kr300") / "kr300_home.yaml"
    path.write_text(yaml.safe_dump(mapping))
    model = read_robot("kr_heavy")
    link_side = robid.load_robot(model, terms=("rigid", "compensator"))
    runs = []
    for f in files:
        p = process(read_measurement(f, model, mapping=path), ProcessingOptions(mode="nonperiodic",
                                                                                  cutoff_hz=CUTOFF_HZ))
        runs.append((p, link_side.inverse_dynamics(p.q, p.qd, p.qdd)))
    return runs


def test_kr300_stiffness_from_link_and_motor_encoders(kr300_runs):
    print()
    results = {}
    for j, name in enumerate(STORED):
        runs = [StiffnessRun(p.t, p.q[:, j], p.theta[:, j], p.qd[:, j], tau[:, j], p.qdd[:, j])
                for p, tau in kr300_runs]
        r = joint_stiffness(name, runs)
        results[name] = r
        print(r.summary(STORED[name]))
    for r in results.values():
        assert 2.5e-3 < r.lag < 3.5e-3  # the encoder time offset, the same on every axis
        assert r.elastic_rms < 0.25 * r.deflection_rms  # the spring is a small part of the recorded difference
    for name in ("A2", "A3"):
        r = results[name]
        assert abs(r.stiffness / STORED[name] - 1) < 0.25, name
        spread = max(r.per_run) - min(r.per_run)
        assert min(r.per_run) - spread < STORED[name] < max(r.per_run) + spread, name
    assert STORED["A1"] / 2 < results["A1"].stiffness < 4 * STORED["A1"]


def test_kr300_without_the_lag_the_deflection_is_not_a_spring(kr300_runs):
    """The naive fit (deflection against link torque, one offset per run; the peer recipe without the time
    offset) leaves ten times the residual and scatters K over runs, changing its sign on axis 1."""
    print()
    for j, name in enumerate(STORED):
        ks, naive, fitted = [], [], []
        for p, tau in kr300_runs:
            d = p.q[:, j] - p.theta[:, j]
            a = np.column_stack([np.ones_like(d), -tau[:, j]])
            x = np.linalg.lstsq(a, d, rcond=None)[0]
            ks.append(1.0 / x[1])
            naive.append(np.std(d - a @ x))
        r = joint_stiffness(name, [StiffnessRun(p.t, p.q[:, j], p.theta[:, j], p.qd[:, j], tau[:, j],
                                                p.qdd[:, j]) for p, tau in kr300_runs])
        fitted = r.residual_rms
        print(f"{name}: naive K per run {', '.join(f'{k:.3g}' for k in ks)} (stored {STORED[name]:.3g}); residual "
              f"{np.degrees(np.mean(naive)):.4f} deg against {np.degrees(fitted):.4f} deg with the lag")
        assert np.mean(naive) > 5 * fitted
    assert min(ks) < 0 or max(ks) / min(ks) > 2  # axis 3's naive values scatter by more than a factor 2


# ------------------------------------------------------------------------------------------------------------------
# The elastic campaign (measurements/kuka_kr300_elastic/campaign.yaml): stiffness of axes 1-3 identified with the
# rigid bodies, rotors, friction and counterbalance from run A in the elastic layout, the link encoders' delay
# undone by the mapping; validated on runs B and C.
ELASTIC_CAMPAIGN = ROOT / "measurements" / "kuka_kr300_elastic" / "campaign.yaml"
ELASTIC_MAPPING = ROOT / "measurements" / "kuka_kr300_elastic" / "kuka_kr300_elastic.yaml"
TERMS = ("rigid", "rotor", "viscous", "coulomb", "offset", "compensator", "stiffness")


@pytest.fixture(scope="module")
def elastic_campaign(tmp_path_factory):
    from dataclasses import replace

    from conftest import shared_dir

    from robid.campaign import run_campaign
    from robid.campaign.campaign_file import read_campaign

    if shared_dir() is None or not (shared_dir() / "anchors" / "data" / "Robot_Identification").exists():
        pytest.skip("../shared (the KR300 recordings) not present")
    spec = replace(read_campaign(ELASTIC_CAMPAIGN), report=None)  # the report is not what is tested here
    return run_campaign(spec, tmp_path_factory.mktemp("kr300el"), log=lambda s: None).record


@pytest.fixture(scope="module")
def identified_link_torque(elastic_campaign):
    """Per run (A, B, C, processed with the campaign's mapping at 20 Hz, the band of the first test): the
    processed signals and the link torque of axes 1-3 of the campaign's identified model -- link row J of the
    elastic layout without its spring, L_J beta' (docs/elastic.md section 2: k_J delta = -L_J beta')."""
    from robid.identification.datasets import elastic_rows, load_dataset

    robot = robid.load_robot("kr_heavy", terms=TERMS)
    names = list(robot.base_parameters().names)
    values = {p.name: p.value for p in elastic_campaign.base_parameters}
    beta = np.array([values[n] for n in names])
    beta[[names.index(f"k_{a}") for a in STORED]] = 0.0
    data = ELASTIC_CAMPAIGN.parent / "../../../shared/anchors/data/Robot_Identification/data/recorded_trajectories"
    out = {}
    for run in "ABC":
        d = load_dataset(robot, data / f"2020-10-21 10s FF {run} 08ms" / "data.mat", mapping=ELASTIC_MAPPING,
                         options=ProcessingOptions(mode="nonperiodic", cutoff_hz=CUTOFF_HZ, min_speed=0))
        W, _tau, _keep = elastic_rows(robot, d.processed, run)
        out[run] = (d.processed, W[:, :3] @ beta)
    return out


def _deflection_fit(runs, j, name):
    return joint_stiffness(name, [StiffnessRun(p.t, p.q[:, j], p.theta[:, j], p.qd[:, j], tau[:, j])
                                  for p, tau in runs])


def test_kr300_elastic_campaign_stiffness_against_the_stored_values(elastic_campaign, identified_link_torque,
                                                                      kr300_runs):
    """robid's stiffness of axes 1-3 from link and motor encoders, three ways, next to the stored values.

    * layout: the campaign's k_J (elastic layout, WLS on run A, torque domain: k_J delta = -L_J beta);
    * identified model, deflection domain: robid.elastic.stiffness on runs A, B, C with the link torque of the
      campaign's identified model (delta = c_run - L_J beta' / K, the deflection as the target, a residual
      encoder lag fitted: it must be ~0, the mapping undid it);
    * CAD model, deflection domain (the first test of this file, lag fitted, raw mapping).

    What the data say: pooled over the three runs, the identified model gives the stored stiffness in the
    deflection domain (A2 within 0.2 std, A3 within 1.6 std). The layout's k is 2-3 times lower, and lower still
    from other runs (B alone: 1.9e5 / 7e3; A, B and C together: 3.5e5 / 2.9e5): the torque-domain layout regresses
    the link torque on a deflection that carries more than a spring and an unknown reference per run, which it has
    no term for, and the spring's scale trades with the split of link and rotor inertia, which the drive rows do
    not fix (docs/validation.md, "Why the campaign's k is low"). Run A's own encoders give the same low spring
    (3.1e6 / 1.7e6), runs B and C higher ones: the runs disagree beyond their std, and the campaign's std includes
    that run-to-run scatter (robid.identification.spring_spread: 2.5e5 -> 3.0e6 on A2), so it says so.
    A1's spring is not determined (vertical axis, deflection 0.001 deg).
    """
    values = {p.name: p for p in elastic_campaign.base_parameters}
    runs = [identified_link_torque[r] for r in "ABC"]
    print("\naxis  stored     | layout (run A)      | identified model, runs A B C      | CAD model, lag fitted")
    results = {}
    for j, name in enumerate(STORED):
        k = values[f"k_{name}"]
        mine = _deflection_fit(runs, j, name)
        cad = joint_stiffness(name, [StiffnessRun(p.t, p.q[:, j], p.theta[:, j], p.qd[:, j], tau[:, j], p.qdd[:, j])
                                     for p, tau in kr300_runs])
        results[name] = (k, mine, cad)
        print(f"{name}    {STORED[name]:.3e}  | {k.value:9.3e} +- {k.std:8.2e} | {mine.stiffness:9.3e} +- "
              f"{mine.std:8.2e} (runs {', '.join(f'{x:.2e}' for x in mine.per_run)}) | {cad.stiffness:9.3e} +- "
              f"{cad.std:.2e}; lag {1e3 * mine.lag:+.3f} ms left after the mapping's delay")
    for name, (_k, mine, _cad) in results.items():
        assert abs(mine.lag) < 0.2e-3, name  # the mapping's delay removed the 3.0-3.1 ms encoder lag
        assert mine.deflection_rms < 0.25 * np.radians(0.035), name  # was 0.035 deg with the lag in it
    for name in ("A2", "A3"):
        k, mine, _cad = results[name]
        # pooled over the runs, the identified model gives the stored spring within its uncertainty (2.5 std)
        assert abs(mine.stiffness - STORED[name]) < 2.5 * mine.std, name
        assert mine.std < 0.2 * mine.stiffness, name
        # the campaign's k: positive, well below the stored value (run A's own encoders say the same: 3.1e6 /
        # 1.7e6), and its std says how little the data pin it: the runs' encoders disagree beyond their std
        # (robid.identification.spring_spread), so the std includes the run-to-run scatter and the stored value
        # lies within 2.5 of it -- the measured reason of docs/validation.md, in the record itself
        assert 0 < k.value < 0.5 * STORED[name], name
        assert abs(k.value - STORED[name]) < 2.5 * k.std, (name, k.value, k.std)
        assert k.identifiability != "well-identified", name
        spread = [n for n in elastic_campaign.notes if n.startswith(f"springs: k_{name} ")]
        assert spread and "disagree beyond their std" in spread[0], spread
    k1 = results["A1"][0]
    assert k1.identifiability != "well-identified" and k1.std > 0.5 * abs(k1.value)  # A1 undetermined


def test_kr300_elastic_campaign_does_not_collapse(elastic_campaign):
    """The WLS of the elastic layout used to run to beta = 0 on these data (NRMSE 100 % on every axis, the link
    rows' weights growing without bound, docs/elastic.md section 3); with the link rows' sigma held at the OLS
    step it fits run A like the rigid campaign, and predicts B and C on axes 2-3 within 26 %."""
    fit = np.array([f.nrmse_percent for f in elastic_campaign.metrics.per_joint])
    print("\nNRMSE [%] A (identification): " + " ".join(f"{x:.1f}" for x in fit))
    for v in elastic_campaign.validation_data:
        print(f"NRMSE [%] {v.file[-22:-9]}: " + " ".join(f"{f.nrmse_percent:.1f}" for f in v.fit.per_joint))
        assert all(f.nrmse_percent < 30 for f in v.fit.per_joint[1:3])
    assert np.all(fit[:3] < 16)
    assert any("keep the sigma of the OLS step" in n for n in elastic_campaign.estimation.notes)


def test_kr300_elastic_campaign_friction_against_the_stored_values(elastic_campaign):
    """Drive friction of axes 1-3 in the elastic layout (at the motor side, joint units) against the values stored
    with the recordings (para: f_vis, f_coul + f_a; tests/test_kr300_campaign.py explains the comparison). As in
    the rigid campaign: axis 1 within 12-15 % of the stored fv and fc; on axes 2-3 the recordings show about twice
    the stored Coulomb friction (rigid campaign 564 / 638 N m, stored 242 / 295)."""
    import scipy.io
    from conftest import shared_dir

    data = shared_dir() / "anchors" / "data" / "Robot_Identification" / "data" / "recorded_trajectories"
    para = scipy.io.loadmat(data / "2020-10-21 10s FF A 08ms" / "data.mat", squeeze_me=True,
                            struct_as_record=False)["para"]
    values = {p.name: p for p in elastic_campaign.base_parameters}
    print("\naxis  fv elastic campaign  stored | fc elastic campaign  stored")
    for j, axis in enumerate(STORED):
        fv, fc = values[f"fv_{axis}"], values[f"fc_{axis}"]
        print(f"{axis}   {fv.value:6.0f} +- {fv.std:4.0f}  {para.f_vis[j]:7.0f} | {fc.value:6.0f} +- {fc.std:3.0f}"
              f"  {para.f_coul[j] + para.f_a[j]:7.0f}")
    assert abs(values["fv_A1"].value / para.f_vis[0] - 1) < 0.15
    assert abs(values["fc_A1"].value / (para.f_coul[0] + para.f_a[0]) - 1) < 0.20
    for j, axis in ((1, "A2"), (2, "A3")):
        assert values[f"fc_{axis}"].value > 1.5 * (para.f_coul[j] + para.f_a[j]), axis
