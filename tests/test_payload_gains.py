"""Drive-gain calibration from a known payload (robid/payload/gains.py, docs/payload.md "Drive-gain calibration"):
known gain factors recovered on synthetic rows (property-based) and on the virtual UR10e, a joint the payload
cannot load left uncorrected, the gains file written and read back, and bad gains files refused in one line."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from robid.estimation.correlated import RowBlock, RowCorrelation
from robid.model.loader import read_robot
from robid.payload import PayloadBody, PayloadDesignSettings, design_payload_excitation, identify_payload
from robid.payload.data import PayloadRows
from robid.payload.gains import calibrate_gains
from robid.payload.identify import calibrate_drive_gains
from robid.payload.regressor import payload_regressor, with_payload
from robid.robot import Robot

#: the virtual robot's true-over-measured gain ratios: the recorded torque is tau / G
G_TRUE = np.array([1.15, 0.90, 1.20, 1.10, 0.95, 1.05])
LOAD = PayloadBody(3.0, (0.04, -0.03, 0.08), (0.01, 0.012, 0.008, 0.0, 0.0, 0.0))


def _static_rows(gains, com, noise: float, seed: int) -> PayloadRows:
    """Rows of random static poses of the UR10e (only gravity: joint 1, a vertical axis, carries no payload
    torque), the payload torque divided by the gains, white noise."""
    rigid = Robot(read_robot("ur10e"), terms=("rigid",))
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (300, 6))
    Y = payload_regressor(rigid, q, np.zeros_like(q), np.zeros_like(q))
    truth = PayloadBody(2.5, tuple(com)).standard()
    dtau = Y @ truth / np.asarray(gains) + noise * rng.standard_normal(q.shape)
    return PayloadRows("static", "unloaded run", Y, dtau, np.ones(q.shape, bool),
                       RowCorrelation((RowBlock(samples=300),)), 0.0, ())


@settings(max_examples=12, deadline=None, derandomize=True)
@given(gains=st.lists(st.floats(0.8, 1.25), min_size=6, max_size=6),
       com=st.tuples(st.floats(-0.1, 0.1), st.floats(-0.1, 0.1), st.floats(0.0, 0.15)),
       seed=st.integers(0, 1000))
def test_static_rows_recover_any_gains_within_four_std_and_leave_joint_1_alone(gains, com, seed):
    """Static poses: gravity cannot load joint 1 (vertical axis), so it gets no correction (scale 1, one note);
    every other joint's known factor is recovered within 4 of its standard deviations (mass known, COM estimated).
    Joint 6 sees the payload only through the COM's lever arm about its axis; a COM nearly on that axis leaves it
    too weak to calibrate, which the same rule says."""
    rows = _static_rows(gains, com, noise=0.05, seed=seed)
    cal = calibrate_gains(rows, 2.5, joint_names=[f"q{j + 1}" for j in range(6)])
    assert not cal.calibrated[0] and cal.scale[0] == 1.0 and math.isnan(cal.std[0])
    assert any(n.startswith("q1: not calibrated (scale 1)") for n in cal.notes)
    for j in range(1, 6):
        if not cal.calibrated[j]:
            assert cal.payload_rms[j] < 3.0 * 0.05 * 1.5, (j, cal.payload_rms)  # weak: a few noise stds at most
            continue
        z = (cal.scale[j] - gains[j]) / cal.std[j]
        assert abs(z) < 4.0, (j, cal.scale[j], gains[j], cal.std[j])
    assert np.allclose(cal.com, com, atol=4 * max(cal.com_std) + 1e-4)


def test_no_joint_loaded_is_refused():
    rows = _static_rows(np.ones(6), (0.0, 0.0, 0.05), noise=0.05, seed=1)
    import dataclasses

    quiet = dataclasses.replace(rows, dtau=rows.dtau * 0 + 0.05 * np.random.default_rng(2).standard_normal(
        rows.dtau.shape), Y=rows.Y * 1e-6)
    with pytest.raises(Exception, match="cannot calibrate the drive gains"):
        calibrate_gains(quiet, 2.5)
    with pytest.raises(Exception, match="^mass: "):  # the library's field; the command line words it --mass
        calibrate_gains(rows, -1.0)


@pytest.fixture(scope="module")
def virtual_pair(tmp_path_factory):
    """The virtual UR10e (defaults, realistic sensor noise, seeds 11/12) on a designed payload motion of all six
    joints, with and without LOAD; the recorded torques divided by G_TRUE, as drive gains that are off would."""
    from robid.simulation import SensorSettings, simulate

    model = read_robot("ur10e")
    rigid = Robot(model, terms=("rigid",))
    design = design_payload_excitation(rigid, PayloadDesignSettings(
        joints=(0, 1, 2, 3, 4, 5), pose=(0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, math.pi / 2, 0.0),
        period=10.0, seed=0, starts=1))
    folder = tmp_path_factory.mktemp("gains")
    files = {}
    for label, m, seed in (("unloaded", model, 11), ("loaded", with_payload(model, LOAD), 12)):
        res = simulate(m, design.trajectory, periods=2, sensors=SensorSettings.with_noise_level("realistic"),
                       seed=seed)
        res.write_csv(folder / "true.csv")
        header = (folder / "true.csv").read_text().splitlines()[0]
        table = np.loadtxt(folder / "true.csv", delimiter=",", skiprows=1)
        table[:, 7:13] /= G_TRUE
        files[label] = folder / f"{label}.csv"
        np.savetxt(files[label], table, delimiter=",", header=header, comments="", fmt="%.12g")
    return files


@pytest.mark.parametrize("com", [None, LOAD.com], ids=["com-estimated", "com-given"])
def test_virtual_robot_gain_factors_recovered_within_their_std(virtual_pair, com):
    """Acceptance (issue 32): every factor within 3 of its std (defaults, seeds), all six joints calibrated."""
    cal = calibrate_drive_gains("ur10e", virtual_pair["loaded"], virtual_pair["unloaded"], LOAD.mass, com=com)
    z = (cal.scale - G_TRUE) / cal.std
    print(f"\nvirtual UR10e, COM {'given' if com else 'estimated'}: scale {np.round(cal.scale, 4)} "
          f"+- {np.round(cal.std, 4)} against {G_TRUE}; z {np.round(z, 2)}; COM {np.round(cal.com, 4)} m")
    assert all(cal.calibrated) and cal.converged
    assert np.all(np.abs(z) < 3.0), z
    assert np.all(np.abs(cal.scale / G_TRUE - 1) < 0.01)
    if com is None:
        assert np.allclose(cal.com, LOAD.com, atol=1e-3)


def test_identify_with_the_gains_file_recovers_the_payload(virtual_pair, tmp_path, capsys):
    """The command line end to end: calibrate-gains writes GAINS.yaml (provenance included), payload identify
    --gains uses it: the mass within 0.5 % and each joint's own mass within 2 %, where the wrong gains give
    -13 % and per-joint errors up to +22 %."""
    from robid.cli import main

    gains = tmp_path / "gains.yaml"
    args = ["payload", "calibrate-gains", "ur10e", "--loaded", str(virtual_pair["loaded"]), "--unloaded",
            str(virtual_pair["unloaded"]), "--mass", "3.0", "--out", str(gains)]
    assert main(args) == 0
    doc = yaml.safe_load(gains.read_text())
    assert doc["robid_gains"] == 1 and doc["joints"] == list(read_robot("ur10e").joint_names)
    assert np.allclose(doc["scale"], G_TRUE, rtol=0.01) and all(doc["calibrated"])
    prov = doc["provenance"]
    assert prov["mass"] == 3.0 and prov["com"] is None and prov["loaded"].endswith("loaded.csv")
    assert "Gautier & Briot 2014" in prov["method"] and len(prov["sha256"]["loaded"]) == 64
    assert "mapping_gains" not in doc  # no mapping with current gains
    capsys.readouterr()
    plain = identify_payload("ur10e", virtual_pair["loaded"], unloaded=virtual_pair["unloaded"])
    corrected = identify_payload("ur10e", virtual_pair["loaded"], unloaded=virtual_pair["unloaded"], gains=gains)
    per_joint = [m for m in corrected.mass_by_joint if m is not None]
    print(f"\nvirtual UR10e 3 kg: wrong gains {plain.body.mass:.4f} kg, calibrated {corrected.body.mass:.4f} kg; "
          f"per joint {np.round(per_joint, 3)}")
    assert abs(plain.body.mass / 3.0 - 1) > 0.1
    assert abs(corrected.body.mass / 3.0 - 1) < 0.005
    assert np.all(np.abs(np.array(per_joint) / 3.0 - 1) < 0.02)
    assert any(str(gains) in n and "drive-gain scales" in n for n in corrected.notes)
    out = tmp_path / "load.json"
    assert main(["payload", "identify", "ur10e", "--loaded", str(virtual_pair["loaded"]), "--unloaded",
                 str(virtual_pair["unloaded"]), "--gains", str(gains), "--out", str(out)]) == 0


BAD_FILES = {
    "not-a-mapping": ("- 1\n- 2\n", "not a robid gains file"),
    "version": ("robid_gains: 2\njoints: [J1]\nscale: [1]\n", "robid_gains"),
    "joints": ("robid_gains: 1\njoints: 3\nscale: [1]\n", "joints"),
    "wrong-joints": ("robid_gains: 1\njoints: [a, b, c, d, e, f]\nscale: [1, 1, 1, 1, 1, 1]\n", "joints"),
    "count": ("robid_gains: 1\njoints: [J1, J2, J3, J4, J5, J6]\nscale: [1, 1]\n", "scale"),
    "negative": ("robid_gains: 1\njoints: [J1, J2, J3, J4, J5, J6]\nscale: [1, 1, -1, 1, 1, 1]\n", "scale[3]"),
    "text": ("robid_gains: 1\njoints: [J1, J2, J3, J4, J5, J6]\nscale: [1, 1, 1, x, 1, 1]\n", "scale[4]"),
    "calibrated": ("robid_gains: 1\njoints: [J1, J2, J3, J4, J5, J6]\nscale: [1, 1, 1, 1, 1, 1]\ncalibrated: 1\n",
                   "calibrated"),
    "yaml": ("robid_gains: [1\n", "gains.yaml"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_gains_file_is_one_line_naming_file_and_field_exit_2(case, tmp_path, capsys):
    from robid.cli import main

    text, field = BAD_FILES[case]
    path = tmp_path / "gains.yaml"
    path.write_text(text)
    meas = tmp_path / "missing.csv"  # the gains file is read before any measurement
    assert main(["payload", "identify", "ur10e", "--loaded", str(meas), "--unloaded", str(meas), "--gains",
                 str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("robid: error:") and "\n" not in err and "Traceback" not in err, err
    assert str(path) in err and field in err, err


def test_calibrate_gains_refuses_bad_options(tmp_path, capsys):
    from robid.cli import main

    meas = tmp_path / "missing.csv"
    base = ["payload", "calibrate-gains", "ur10e", "--loaded", str(meas), "--unloaded", str(meas)]
    for extra, word in ((["--mass", "0", "--out", str(tmp_path / "g.yaml")], "--mass"),
                        (["--mass", "2", "--com", "1,2", "--out", str(tmp_path / "g.yaml")], "--com"),
                        (["--mass", "2", "--out", str(tmp_path / "no" / "g.yaml")], "--out")):
        assert main(base + extra) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("robid: error:") and word in err and "\n" not in err, err


MAPPING = """robid_mapping: 1
format: csv
header: false
dof: 6
time: {column: 1, unit: s}
positions: {columns: [2, 3, 4, 5, 6, 7], unit: rad}
velocities: {columns: [8, 9, 10, 11, 12, 13], unit: rad/s}
currents:
  columns: [14, 15, 16, 17, 18, 19]
  unit: A
  gains: [10.0, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232]
"""
GAINS = ("robid_gains: 1\nrobot: ur10e\njoints: [J1, J2, J3, J4, J5, J6]\nscale: [1.0, 1.1, 1.2, 1.05, 1.0, 0.9]\n"
         "calibrated: [false, true, true, true, true, true]\n")


def test_a_mapping_points_to_a_gains_file_and_its_gains_are_scaled(tmp_path):
    """currents.gain_scale (relative to the mapping): the gains used are K_j * scale_j, and the torque note says
    which file scaled them."""
    from robid.io.mapping import read_mapping
    from robid.io.motor_side import currents_to_torque

    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "gains.yaml").write_text(GAINS)
    path = tmp_path / "map.yaml"
    path.write_text(MAPPING + "  gain_scale: cal/gains.yaml\n")
    group = read_mapping(path).groups["currents"]
    expected = np.array([10.0, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232]) * [1.0, 1.1, 1.2, 1.05, 1.0, 0.9]
    np.testing.assert_allclose(group.gains, expected, rtol=1e-12)
    assert group.gain_scale == str(tmp_path / "cal" / "gains.yaml")
    tau, notes = currents_to_torque(np.ones((3, 6)), group, None, "run.csv")
    np.testing.assert_allclose(tau[0], expected)
    assert "scaled by the drive-gain file" in notes[-1]


@pytest.mark.parametrize("extra, field", [
    ("  gain_scale: nowhere.yaml\n", "gain_scale"),
    ("  gain_scale: [1, 2]\n", "gain_scale"),
    ("  gain_scale: short.yaml\n", "gain_scale"),
    ("  gain_scale: bad.yaml\n", "scale[2]"),
])
def test_a_bad_gain_scale_in_a_mapping_is_one_line_naming_file_and_field(tmp_path, extra, field):
    from robid.errors import RobidInputError
    from robid.io.mapping import read_mapping

    (tmp_path / "short.yaml").write_text("robid_gains: 1\njoints: [J1, J2]\nscale: [1, 1]\n")
    (tmp_path / "bad.yaml").write_text(GAINS.replace("1.1,", "0,"))
    path = tmp_path / "map.yaml"
    path.write_text(MAPPING + extra)
    with pytest.raises(RobidInputError) as info:
        read_mapping(path)
    message = str(info.value)
    assert "\n" not in message and field in message and str(tmp_path) in message, message


def test_a_campaign_identifies_again_when_the_gains_file_its_mapping_points_to_changes(tmp_path):
    """The campaign's identification fingerprint holds the mapping's content and its gain_scale file's: a new
    calibration is not hidden by the cache."""
    from robid.campaign.runner import _mapping_fingerprint

    (tmp_path / "gains.yaml").write_text(GAINS)
    path = tmp_path / "map.yaml"
    path.write_text(MAPPING + "  gain_scale: gains.yaml\n")
    first = _mapping_fingerprint(path)
    (tmp_path / "gains.yaml").write_text(GAINS.replace("1.1,", "1.12,"))
    second = _mapping_fingerprint(path)
    assert first != second and first[:2] == second[:2]
    path.write_text(MAPPING)
    assert len(_mapping_fingerprint(path)) == 2 and _mapping_fingerprint(None) is None


def test_point_mass_inertia_and_its_derivative_against_the_parallel_axis_theorem():
    """Against robid.payload.body (parallel-axis theorem, an independent formula) and central differences."""
    from robid.payload.gains import point_mass_inertia

    rng = np.random.default_rng(4)
    for _ in range(5):
        mass, com = float(rng.uniform(0.5, 5)), rng.uniform(-0.2, 0.2, 3)
        inertia, jac = point_mass_inertia(mass, mass * com)
        np.testing.assert_allclose(inertia, PayloadBody(mass, tuple(com)).standard()[4:], atol=1e-14)
        h, eps = mass * com, 1e-6
        numeric = np.column_stack([(point_mass_inertia(mass, h + eps * e)[0] - point_mass_inertia(mass, h - eps * e)[0])
                                   / (2 * eps) for e in np.eye(3)])
        np.testing.assert_allclose(jac, numeric, atol=1e-8)


def test_gains_given_twice_are_refused(tmp_path):
    """--gains beside a mapping whose currents.gain_scale scales the gains already would count the scale twice."""
    from robid.errors import RobidInputError

    (tmp_path / "gains.yaml").write_text(GAINS)
    path = tmp_path / "map.yaml"
    path.write_text(MAPPING + "  gain_scale: gains.yaml\n")
    with pytest.raises(RobidInputError, match=r"^gains: the mapping .*map.yaml scales its current gains"):
        identify_payload("ur10e", tmp_path / "l.csv", unloaded=tmp_path / "u.csv", mapping=path,
                         gains=tmp_path / "gains.yaml")


def test_a_joint_without_rows_gets_no_correction_and_no_friction_change():
    """A joint that never moves faster than --min-speed has no rows: scale 1, its note, the others unaffected."""
    import dataclasses

    rows = _static_rows([1.0, 1.1, 0.9, 1.2, 1.0, 1.05], (0.03, -0.02, 0.09), noise=0.05, seed=3)
    keep = rows.keep.copy()
    keep[:, 2] = False
    rng = np.random.default_rng(5)
    friction = np.stack([np.sign(rng.standard_normal(keep.shape)), rng.standard_normal(keep.shape)], axis=2)
    rows = dataclasses.replace(rows, keep=keep, dtau=rows.dtau * keep, Y=rows.Y * keep[:, :, None],
                               friction=friction * keep[:, :, None])
    cal = calibrate_gains(rows, 2.5, joint_names=[f"q{j + 1}" for j in range(6)])
    assert cal.calibrated[:3] == (False, True, False) and cal.converged
    assert any(n.startswith("q3: not calibrated (scale 1)") for n in cal.notes)
    assert cal.friction_change[2].tolist() == [0.0, 0.0]
    assert abs(cal.scale[1] - 1.1) < 4 * cal.std[1] and abs(cal.scale[3] - 1.2) < 4 * cal.std[3]
    with pytest.raises(Exception, match="^com: "):
        calibrate_gains(rows, 2.5, com=(0.1, 0.2))
