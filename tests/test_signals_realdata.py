"""The four real data sets of ../shared/anchors/data read into the canonical form through the shipped mappings.

Skipped with a message when the shared folder is absent. Locate it with ROBID_SHARED or as the sibling
``shared`` folder of the project. Reading times are printed (run with -s to see them).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.signals import process
from robid.signals.filtering import lowpass_sos, zero_phase
from robid.signals.noise import residual_variance
from robid.signals.resampling import resample

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ROBID_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DATA = SHARED / "anchors" / "data"
MAPPINGS = ROOT / "examples" / "mappings"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"real data sets not found at {DATA} (set ROBID_SHARED)")

UR = DATA / "dynamic_calibration" / "dataset_ur10e" / "identification_data"
PANDA = DATA / "FrankaEmikaPandaDynModel" / "matlab" / "data" / "Exciting_Traj" / "Trajectory_1" / "rbt_log"
TX40 = DATA / "figaroh-examples" / "examples" / "staubli_TX40" / "data"
KR300 = DATA / "Robot_Identification" / "data" / "recorded_trajectories"


def timed_read(path, mapping, **kw):
    start = time.perf_counter()
    m = read_measurement(path, mapping=MAPPINGS / mapping, **kw)
    print(f"\nread {Path(path).name}: {m.n_samples} samples x {m.dof} joints in {time.perf_counter() - start:.3f} s")
    return m


def test_ur10e_headerless_csv_with_currents():
    m = timed_read(UR / "ur-20_02_10-30sec_12harm.csv", "ur10e_mamedov.yaml")
    assert m.dof == 6 and m.n_samples == 3691 and m.qd is not None
    assert np.all(np.diff(m.t) > 0) and 1000.0 < m.t[0] < 1100.0  # controller clock kept as recorded
    raw = np.loadtxt(UR / "ur-20_02_10-30sec_12harm.csv", delimiter=",", max_rows=3)
    gains = np.array([10.0, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232])
    assert np.allclose(m.q[:3], raw[:, 1:7]) and np.allclose(m.tau[:3], raw[:, 13:19] * gains)


def test_ur10e_derived_velocities_agree_with_the_controller_velocities_within_their_noise():
    m = timed_read(UR / "ur-20_02_10-30sec_12harm.csv", "ur10e_mamedov.yaml")
    p = process(m)
    assert p.mode == "rest-to-rest"
    controller = resample(m.t, m.qd, p.t)
    diff = np.sqrt(np.mean((p.qd - controller) ** 2, axis=0))
    # noise of the controller's velocity column: what lies outside the band the processing keeps
    band = max(p.harmonics) / p.period
    smooth = zero_phase(m.qd, lowpass_sos(band, 1.0 / np.median(np.diff(m.t))))
    ctrl_noise = np.sqrt(residual_variance(m.qd, smooth, 1.0 - band / (0.5 / np.median(np.diff(m.t)))))
    print("\nUR10e |qd(positions) - qd(controller)| rms per joint:", np.round(diff, 5))
    print("UR10e controller velocity noise std per joint:     ", np.round(ctrl_noise, 5))
    assert np.all(diff < 1.5 * ctrl_noise)
    assert np.all(diff < 0.01 * np.sqrt(np.mean(controller**2, axis=0)))


def test_ur10e_garbage_rows_are_refused_or_dropped_and_recorded():
    f = UR / "ur-20_02_19_15harm50secLoad.csv"
    with pytest.raises(RobidInputError, match=r"ur-20_02_19_15harm50secLoad.csv: row 1, column 1 \(t\)"):
        read_measurement(f, mapping=MAPPINGS / "ur10e_mamedov.yaml")
    m = timed_read(f, "ur10e_mamedov.yaml", policy=ScreeningPolicy(drop_bad_rows=True))
    assert m.dropped.row_numbers == tuple(range(1, 11)) + (6107,)
    assert "truncated row: 20 of 31 columns" in m.dropped.rows[-1].reason
    assert m.n_samples == 6107 - 11
    # the corrupt run is refused by default, with the row and column of the first garbage value
    with pytest.raises(RobidInputError, match=r"11_32_02.csv: row \d+, column \d+ \(q\d\): value .* garbage row"):
        read_measurement(UR / "ur-19_09_27-11_32_02.csv", mapping=MAPPINGS / "ur10e_mamedov.yaml")


def test_panda_one_value_per_line_files():
    m = timed_read(PANDA, "panda_gaz.yaml")
    assert m.dof == 7 and m.n_samples == 20544
    q0 = np.loadtxt(PANDA / "exciting_traj_positions.txt", max_rows=7)
    tau0 = np.loadtxt(PANDA / "exciting_traj_torques.txt", max_rows=7)
    assert np.allclose(m.q[0], q0) and np.allclose(m.tau[0], tau0)
    assert m.qd is not None and np.all(np.diff(m.t) > 0)


def test_tx40_motor_angles_and_torques_with_coupled_wrist():
    m = timed_read(TX40, "staubli_tx40.yaml")
    assert m.dof == 6 and m.n_samples == 45000 and m.uniform_time
    assert np.isclose(m.t[-1], 44999 / 5000.0)
    theta = np.loadtxt(TX40 / "pos_read_data.csv", delimiter=",", skiprows=1, max_rows=5)
    tau_m = np.loadtxt(TX40 / "curr_data.csv", delimiter=",", skiprows=1, max_rows=5)
    ratios = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
    q = theta / ratios
    q[:, 5] = theta[:, 5] / 32.0 - q[:, 4]  # theta_m6 = 32 (q5 + q6)
    q[:, 1] -= np.pi / 2
    q[:, 2] += np.pi / 2
    tau = tau_m * ratios
    tau[:, 4] += 32.0 * tau_m[:, 5]  # tau = N^T tau_m, N[6,5] = 32
    assert np.allclose(m.q[:5], q) and np.allclose(m.tau[:5], tau)
    rms = np.sqrt(np.mean(m.tau[: int(4.95 * 5000)] ** 2, axis=0))
    assert np.allclose(rms, [37, 35, 14, 6, 11, 6], rtol=0.15)  # joint-torque RMS quoted in the README


@pytest.mark.parametrize("run", ["A", "B", "C"])
def test_kr300_mat_struct_link_and_motor_encoders(run):
    f = next(KR300.glob(f"* {run} 08ms/data.mat"))
    m = timed_read(f, "kuka_kr300.yaml")
    assert m.dof == 6 and m.n_samples == 2501 and np.allclose(np.diff(m.t), 0.004)
    import scipy.io

    rec = scipy.io.loadmat(f, squeeze_me=True, struct_as_record=False)["rec"]
    assert np.allclose(m.q[:, :3], np.radians(rec.act_pos_se_deg[:3].T))
    assert np.allclose(m.q[:, 3:], np.radians(rec.act_pos_mot_deg[3:].T))
    assert np.allclose(m.theta, np.radians(rec.act_pos_mot_deg.T))
    u = np.array([256.857142857143, 267.428571428571, 252.333333333333, 221.0, 239.619047619048, 154.323134328358])
    assert np.allclose(m.tau, rec.act_torque_abs_nm.T * u)
    deflection = np.degrees(m.theta[:, :3] - m.q[:, :3]).std(axis=0)
    assert np.all((deflection > 0.01) & (deflection < 0.1))  # README: 0.03-0.04 deg elastic deflection
