"""What the logged values themselves tell the signal stage: the controller's measured velocity gives the sign of
the Coulomb term (robid.signals.measured_velocity), and the rounding of the logged positions is noise that
repeats with the motion (robid.signals.noise.logged_step, quantisation_variance).

References are closed forms; the peer on the rounding case is a zero-phase Butterworth(4) + central differences
at the best cut-off chosen in hindsight.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

import robid
from robid.identification.datasets import regressor_of
from robid.signals import Measurement, ProcessingOptions, process
from robid.signals.noise import logged_step, quantisation_variance


def test_logged_step_is_the_resolution_of_the_log():
    rng = np.random.default_rng(0)
    four_decimals = np.round(rng.uniform(-3, 3, (500, 2)), 4)
    assert logged_step(four_decimals) == pytest.approx([1e-4, 1e-4], rel=1e-6)
    assert logged_step(rng.normal(size=(500, 1)))[0] < 1e-4  # full float resolution: negligible
    assert logged_step(np.zeros((50, 1)))[0] == 0.0  # one value: no step to see
    assert quantisation_variance([1e-4])[0] == pytest.approx(1e-8 / 12)


# ---- rounding that repeats with the motion ------------------------------------------------------------------
PERIOD, RATE, K, STEP = 10.0, 100.0, 5, 1e-4
W = 2.0 * np.pi / PERIOD


def _rounded_periodic(dof: int = 2):
    """A single-joint style motion (a sine of 1.5 rad and a small third harmonic) repeated exactly K times, logged
    to 4 decimals and nothing else: its rounding error is periodic, the scatter between periods is zero."""
    t = np.arange(0.0, K * PERIOD, 1.0 / RATE)
    amp = np.array([1.5, 0.8])[:dof]
    q = np.outer(np.sin(W * t), amp) + 0.002 * np.sin(3 * W * t)[:, None]
    qdd = -np.outer(np.sin(W * t), amp) * W**2 - 0.002 * 9 * W**2 * np.sin(3 * W * t)[:, None]
    rng = np.random.default_rng(3)
    tau = 0.05 * rng.standard_normal(q.shape)
    return t, np.round(q, 4), qdd, tau


def _best_butterworth(t, q, qdd):
    inner = slice(int(RATE), -int(RATE))
    best = np.inf
    for fc in np.geomspace(0.15, 20.0, 40):
        sos = signal.butter(4, fc, fs=RATE, output="sos")
        x = signal.sosfiltfilt(sos, q, axis=0)
        est = np.gradient(np.gradient(x, t, axis=0), t, axis=0)
        best = min(best, float(np.sqrt(np.mean((est - qdd)[inner] ** 2))))
    return best


@pytest.mark.parametrize("average", [False, True])
def test_rounding_that_repeats_with_the_motion_is_noise_not_motion(average):
    """Without the rounding floor the periodic paths read the rounding error (a deterministic function of the
    phase, the same in every period) as motion and keep harmonics up to Nyquist/2; with it, the accelerations
    are within 1.3x of the best Butterworth in hindsight."""
    t, q, qdd, tau = _rounded_periodic()
    m = Measurement(source="rounded", t=t, q=q, tau=tau)
    options = ProcessingOptions(average_periods=average)
    p = process(m, options)
    assert p.n_periods == K
    blind = process(m, ProcessingOptions(average_periods=average, position_step=(0.0, 0.0)))
    exact = qdd[: K * int(PERIOD * RATE)]
    if average:
        exact = qdd[: int(PERIOD * RATE)]
    err = float(np.sqrt(np.mean((p.qdd - exact) ** 2)))
    err_blind = float(np.sqrt(np.mean((blind.qdd - exact) ** 2)))
    peer = _best_butterworth(t, q, qdd)
    print(f"\nqdd rms error: robid {err:.3g}, without the rounding floor {err_blind:.3g}, best Butterworth {peer:.3g}")
    assert err < 1.3 * peer
    assert err_blind > 3.0 * err  # the floor is what makes the difference
    assert p.noise.q_std[0] >= np.sqrt(STEP**2 / 12) * 0.99  # the rounding is counted in the raw noise


# ---- Coulomb sign from the controller's velocity --------------------------------------------------------------
def test_coulomb_sign_at_rest_comes_from_the_measured_velocity():
    """A rest-to-rest move with a long rest in the middle, positions with encoder noise (3e-5 rad) logged to 4
    decimals, so that they flicker between neighbouring values at rest. The controller's velocity is exactly zero
    at rest (as on the UR10e logs), so its Coulomb column is 0 there; the velocity differentiated from the
    rounded positions gives a Coulomb column that is not, and the prediction would carry friction at rest."""
    robot = robid.load_robot("tx200_3axis")
    rate = 200.0
    t = np.arange(0.0, 12.0, 1.0 / rate)

    def move(a, b):  # quintic rest-to-rest from a to b seconds, 0 -> 1
        s = np.clip((t - a) / (b - a), 0.0, 1.0)
        ds = np.where((t > a) & (t < b), 1.0 / (b - a), 0.0)
        return 10 * s**3 - 15 * s**4 + 6 * s**5, (30 * s**2 - 60 * s**3 + 30 * s**4) * ds

    s1, v1 = move(1.0, 4.0)
    s2, v2 = move(7.0, 10.0)
    amp = np.array([0.8, -0.5, 0.6])
    q = np.outer(s1 - s2, amp) + np.array([0.1, -1.2, 1.0])
    qd = np.outer(v1 - v2, amp)
    rng = np.random.default_rng(5)
    logged = np.round(q + 3e-5 * rng.standard_normal(q.shape), 4)
    m = Measurement(source="rest", t=t, q=logged, qd=np.round(qd, 4), tau=0.05 * rng.standard_normal(q.shape))
    p = process(m, ProcessingOptions(mode="nonperiodic"))
    assert p.qd_measured is not None and "controller's measured velocity" in p.method
    base = robot.base_parameters()
    cols = [base.names.index(f"fc_{j}") for j in robot.joint_names]
    measured, notes = regressor_of(robot, p, "noise")
    assert any("controller's measured velocity" in n for n in notes)
    differentiated, _ = regressor_of(robot, p, "differentiated")
    rest = (p.t > 4.5) & (p.t < 6.5)
    moving = (p.t > 2.0) & (p.t < 3.0)
    for j, c in enumerate(cols):
        assert np.all(measured[rest, j, c] == 0.0)
        assert np.mean(np.abs(differentiated[rest, j, c])) > 0.05  # the rounding noise's sign, smoothed
        assert np.all(np.abs(measured[moving, j, c]) > 0.999)
    print(
        "\nmean |Coulomb column| at rest: measured velocity 0, differentiated "
        + ", ".join(f"{np.mean(np.abs(differentiated[rest, j, c])):.2f}" for j, c in enumerate(cols))
    )
