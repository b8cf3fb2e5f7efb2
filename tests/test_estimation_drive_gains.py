"""Drive gains from loaded / unloaded runs: synthetic recovery and the UR10e data set (anchors A.1-1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_estimation_synthetic import smooth_regressor

from robid.errors import RobidInputError
from robid.estimation import identify_drive_gains

K_TRUE = np.array([9.0, 11.0, 8.0])


def _runs(seed, current_noise=(0.02, 0.02, 0.01), n=500):
    """Unloaded and loaded runs of a 3-joint robot; payload: known mass column plus 2 unknown parameters."""
    dof, nb = 3, 7
    Wu = smooth_regressor(n, dof, nb, seed=21)
    Wl = smooth_regressor(n, dof, nb, seed=21)  # same trajectory, as on the real robot
    Wl = Wl * (1 + 0.1 * smooth_regressor(n, dof, nb, seed=22) / np.abs(smooth_regressor(n, dof, nb, seed=22)).max())
    beta = np.random.default_rng(5).uniform(0.5, 2.0, nb)
    Yp = smooth_regressor(n, dof, 3, seed=23) * 0.5
    tau_known = Yp[:, :, 0] * 2.8  # payload mass 2.8 kg, its column known
    pi_u = np.array([0.3, -0.2])
    rng = np.random.default_rng(seed)
    noise = np.asarray(current_noise)
    iu = (Wu @ beta) / K_TRUE + rng.normal(size=(n, dof)) * noise
    il = (Wl @ beta + Yp[:, :, 1:] @ pi_u + tau_known) / K_TRUE + rng.normal(size=(n, dof)) * noise
    return Wu, iu, Wl, il, tau_known, Yp[:, :, 1:], beta, pi_u


def test_output_error_recovers_gains_within_three_std():
    Wu, iu, Wl, il, tp, Yu, beta, pi_u = _runs(seed=0)
    res = identify_drive_gains(Wu, iu, Wl, il, tp, payload_regressor=Yu, joint_names=["A1", "A2", "A3"])
    assert res.converged and res.method == "output-error"
    z = (res.gains - K_TRUE) / res.gains_std
    assert np.all(np.abs(z) < 3), z
    assert np.all(np.abs(res.payload_values - pi_u) < 3 * res.estimate.std[-2:])
    assert res.estimate.names[:3] == ("K_A1", "K_A2", "K_A3")
    print(
        f"\nsynthetic drive gains: true {K_TRUE}, output-error {np.round(res.gains, 3)} +- {np.round(res.gains_std, 3)}"
    )


def test_monte_carlo_gain_std_is_honest():
    est, std = [], []
    for seed in range(20):
        res = identify_drive_gains(*_runs(seed=seed)[:5], payload_regressor=_runs(seed=seed)[5])
        est.append(res.gains)
        std.append(res.gains_std)
    ratio = np.array(est).std(axis=0, ddof=1) / np.sqrt(np.mean(np.array(std) ** 2, axis=0))
    print(f"\ndrive gains: observed scatter / reported std per joint = {np.round(ratio, 2)}")
    assert 0.7 <= np.median(ratio) <= 1.4


def test_equation_error_is_biased_towards_zero_with_noisy_currents():
    Wu, iu, Wl, il, tp, Yu, beta, pi_u = _runs(seed=1, current_noise=(0.2, 0.2, 0.1))
    eq = identify_drive_gains(Wu, iu, Wl, il, tp, payload_regressor=Yu, method="equation-error")
    oe = identify_drive_gains(Wu, iu, Wl, il, tp, payload_regressor=Yu)
    assert np.all(eq.gains < K_TRUE)
    assert np.all(np.abs(oe.gains - K_TRUE) < np.abs(eq.gains - K_TRUE))
    print(
        f"\nnoisy currents: equation-error {np.round(eq.gains, 2)}, output-error {np.round(oe.gains, 2)}, true {K_TRUE}"
    )


def test_fixed_gain():
    Wu, iu, Wl, il, tp, Yu, beta, pi_u = _runs(seed=2)
    res = identify_drive_gains(Wu, iu, Wl, il, tp, payload_regressor=Yu, fixed_gains={0: K_TRUE[0]})
    assert res.fixed == (True, False, False) and res.gains[0] == K_TRUE[0] and res.gains_std[0] == 0
    assert np.all(np.abs(res.gains[1:] - K_TRUE[1:]) < 3 * res.gains_std[1:])
    assert any("fixed" in n for n in res.notes)
    with pytest.raises(RobidInputError):
        identify_drive_gains(Wu, iu, Wl, il, tp, fixed_gains={5: 1.0})


# --- UR10e (Mamedov et al.): ur-20_01_31-unload.csv / -load.csv, 2.805 kg payload ------------------------------

PUBLISHED = np.array([10.0000, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232])  # N m / A, K1 >= 10 imposed


def _ur10e_runs(shared: Path):
    pin = pytest.importorskip("pinocchio")
    DATA = shared / "anchors" / "data" / "dynamic_calibration"
    if not (DATA / "URe" / "urdf" / "ur10e.urdf").exists():
        pytest.skip(f"UR10e anchor data not found at {DATA}")
    from scipy.linalg import qr
    from scipy.signal import butter, filtfilt

    model = pin.buildModelFromUrdf(str(DATA / "URe" / "urdf" / "ur10e.urdf"))
    data = model.createData()

    def extra(qd, qdd):  # rotor inertia, viscous, Coulomb, offset columns per joint (anchors README B.1)
        E = np.zeros((len(qd), 6, 24))
        for j in range(6):
            E[:, j, j] = qdd[:, j]
            E[:, j, 6 + 3 * j] = qd[:, j]
            E[:, j, 7 + 3 * j] = np.sign(qd[:, j])
            E[:, j, 8 + 3 * j] = 1.0
        return E

    def regressor(q, qd, qdd):
        Y = np.stack([pin.computeJointTorqueRegressor(model, data, *x) for x in zip(q, qd, qdd, strict=True)])
        return np.concatenate([Y, extra(qd, qdd)], axis=2), Y[:, :, 50:60]  # link-6 columns = payload columns

    # base columns: pivoted QR on random states (independent of the project's symbolic core)
    rng = np.random.default_rng(0)
    states = rng.uniform(-3, 3, size=(3, 100, 6))
    Ys = regressor(*states)[0].reshape(-1, 84)
    _, R, piv = qr(Ys, pivoting=True, mode="economic")
    base = np.sort(piv[: int(np.sum(np.abs(np.diag(R)) > 1e-8 * abs(R[0, 0])))])

    def run(name, first, last):  # the authors' processing: Butterworth 5, cut-off 0.15 (qd) / 0.20 (i), filtfilt
        M = np.loadtxt(DATA / "dataset_ur10e" / "identification_data" / name, delimiter=",")[first - 1 : last]
        t, q, qd, i = M[:, 0], M[:, 1:7], M[:, 7:13], M[:, 13:19]
        qd = filtfilt(*butter(5, 0.15), qd, axis=0)
        i = filtfilt(*butter(5, 0.20), i, axis=0)
        qdd = np.gradient(qd, t, axis=0)
        W, Yp = regressor(q, qd, qdd)
        return W[:, :, base], i, Yp

    Wu, iu, _ = run("ur-20_01_31-unload.csv", 199, 2515)  # rows with motion (1-based, inclusive)
    Wl, il, Yp = run("ur-20_01_31-load.csv", 345, 2662)
    return Wu, iu, Wl, il, Yp, len(base)


def test_ur10e_drive_gains_compared_with_published(shared):
    Wu, iu, Wl, il, Yp, nb = _ur10e_runs(shared)
    assert nb == 58  # 40 inertial + rotor base + 18 friction (anchors README B.1)
    m_payload = 2.805
    args = (Wu, iu, Wl, il, Yp[:, :, 0] * m_payload)  # known: mass; unknown: first moments and inertia
    oe = identify_drive_gains(*args, payload_regressor=Yp[:, :, 1:])
    eq = identify_drive_gains(*args, payload_regressor=Yp[:, :, 1:], method="equation-error")
    print("\nUR10e drive gains [N m/A], ur-20_01_31 unload/load, 2.805 kg payload:")
    print(f"  published (Mamedov, PC-OLS, K1 >= 10): {PUBLISHED}")
    print(f"  output error (robid default):          {np.round(oe.gains, 3)} +- {np.round(oe.gains_std, 3)}")
    print(f"  equation error (stacked LS):           {np.round(eq.gains, 3)}")
    print(f"  ratio output error / published:        {np.round(oe.gains / PUBLISHED, 3)}")
    assert oe.converged
    assert np.all(np.abs(oe.gains / PUBLISHED - 1) < 0.25)
    # equation error collapses the low-current joints (errors in variables); output error does not
    assert np.linalg.norm(oe.gains / PUBLISHED - 1) < 0.5 * np.linalg.norm(eq.gains / PUBLISHED - 1)
