"""Acceptance tests of the periodic (spectral) and non-periodic processing against closed forms.

Reference signals are analytic: a Swevers Fourier trajectory q_j(t) = sum_l a_jl/(l w) sin(l w t) - b_jl/(l w)
cos(l w t) whose derivatives are written out by hand, never produced by the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from robid.errors import RobidInputError
from robid.signals import Measurement, ProcessingOptions, process


class Fourier:
    """q, qd, qdd, qddd, qdddd of a finite Fourier series in closed form."""

    def __init__(self, period: float, harmonics: int, dof: int, seed: int = 0, scale: float = 0.4):
        rng = np.random.default_rng(seed)
        self.w = 2.0 * np.pi / period
        self.n = harmonics
        self.a = rng.normal(size=(harmonics, dof)) * scale
        self.b = rng.normal(size=(harmonics, dof)) * scale
        self.q0 = rng.normal(size=dof)

    def derivative(self, t: np.ndarray, order: int) -> np.ndarray:
        out = np.zeros((t.size, self.a.shape[1])) + (self.q0 if order == 0 else 0.0)
        for l in range(1, self.n + 1):
            wl = l * self.w
            # q = a/wl sin - b/wl cos ; d^k/dt^k sin(wl t) = wl^k sin(wl t + k pi/2)
            phase = order * np.pi / 2
            s = np.sin(wl * t + phase)[:, None]
            c = np.cos(wl * t + phase)[:, None]
            out += wl ** (order - 1) * (self.a[l - 1] * s - self.b[l - 1] * c)
        return out


def torque(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """A nonlinear 'robot-like' torque: inertia, gravity, viscous friction."""
    return 2.0 * qdd + 9.81 * np.cos(q) + 0.3 * qd + 0.1 * qd**2


def rel(err: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(err)) / np.max(np.abs(ref)))


PERIOD, HARMONICS, DOF, RATE, PERIODS = 8.0, 6, 3, 250.0, 8


@pytest.fixture(scope="module")
def traj() -> Fourier:
    return Fourier(PERIOD, HARMONICS, DOF)


def make(traj: Fourier, periods: int = PERIODS, rate: float = RATE, sq: float = 0.0, st: float = 0.0, seed=1):
    t = np.arange(int(round(periods * PERIOD * rate))) / rate
    q, qd, qdd = (traj.derivative(t, k) for k in range(3))
    tau = torque(q, qd, qdd)
    rng = np.random.default_rng(seed)
    noisy_q = q + rng.normal(size=q.shape) * sq
    noisy_tau = tau + rng.normal(size=tau.shape) * st
    return t, Measurement(source="analytic", t=t, q=noisy_q, tau=noisy_tau), tau


def test_spectral_derivatives_match_closed_form_without_noise(traj):
    _, m, _ = make(traj)
    p = process(m, ProcessingOptions(period=PERIOD, harmonics=tuple(range(1, HARMONICS + 1)), derivatives=4))
    assert p.mode == "periodic" and p.n_periods == PERIODS and p.period == PERIOD
    for order, got in enumerate([p.q, p.qd, p.qdd, p.qddd, p.qdddd]):
        ref = traj.derivative(p.t, order)
        assert rel(got - ref, ref) < 1e-9, f"derivative {order}"
    print(
        f"\nrelative error qd {rel(p.qd - traj.derivative(p.t, 1), traj.derivative(p.t, 1)):.2e}, "
        f"qdd {rel(p.qdd - traj.derivative(p.t, 2), traj.derivative(p.t, 2)):.2e}"
    )


def test_detected_period_and_automatic_harmonics_without_noise(traj):
    _, m, _ = make(traj)
    p = process(m)  # period detected, harmonics chosen from the data
    assert p.period_source == "detected"
    assert abs(p.period - PERIOD) < 1e-9 * PERIOD
    assert set(range(1, HARMONICS + 1)) <= set(p.harmonics)
    for order, got in enumerate([p.qd, p.qdd], start=1):
        ref = traj.derivative(p.t, order)
        assert rel(got - ref, ref) < 1e-9


def test_accelerations_beat_butterworth_central_differences_with_encoder_noise(traj):
    sq = 2e-4  # rad, encoder noise
    t, m, _ = make(traj, sq=sq, st=0.05)
    p = process(m, ProcessingOptions(period=PERIOD, harmonics=tuple(range(1, HARMONICS + 1))))
    qdd_ref = traj.derivative(p.t, 2)
    err_spectral = np.sqrt(np.mean((p.qdd - qdd_ref) ** 2))

    # baseline: zero-phase Butterworth (order 4) + central differences, at the best of several cut-offs
    f_max = HARMONICS / PERIOD
    h = 1.0 / RATE
    inner = slice(int(2 * RATE), -int(2 * RATE))  # filter edges excluded from the baseline's score
    baseline = {}
    for factor in (1.5, 2.0, 3.0, 5.0, 10.0):
        sos = signal.butter(4, factor * f_max, fs=RATE, output="sos")
        q_f = signal.sosfiltfilt(sos, m.q, axis=0)
        qdd_b = np.gradient(np.gradient(q_f, h, axis=0), h, axis=0)
        baseline[factor] = np.sqrt(np.mean((qdd_b[inner] - traj.derivative(t, 2)[inner]) ** 2))
    best = min(baseline, key=baseline.get)
    err_baseline = baseline[best]
    ratio = err_baseline / err_spectral
    print(
        f"\nqdd rms error: spectral {err_spectral:.3e}; Butterworth+central differences "
        + ", ".join(f"fc={k:g} f_max: {v:.3e}" for k, v in baseline.items())
        + f"; ratio to the best baseline {ratio:.1f}"
    )
    assert ratio >= 5.0
    # the predicted noise on the processed accelerations matches the actual error
    predicted = np.sqrt(np.mean(np.square(p.noise.qdd_std_processed)))
    assert 0.7 < err_spectral / predicted < 1.4


def test_noise_std_from_period_scatter(traj):
    sq = np.array([1e-4, 3e-4, 5e-5])
    st = np.array([0.05, 0.2, 0.02])
    t = np.arange(int(PERIODS * PERIOD * RATE)) / RATE
    rng = np.random.default_rng(7)
    q = traj.derivative(t, 0)
    tau = torque(q, traj.derivative(t, 1), traj.derivative(t, 2))
    m = Measurement(
        source="analytic", t=t, q=q + rng.normal(size=q.shape) * sq, tau=tau + rng.normal(size=tau.shape) * st
    )
    p = process(m, ProcessingOptions(period=PERIOD))
    est_q, est_tau = np.array(p.noise.q_std), np.array(p.noise.tau_std)
    err_q, err_tau = np.abs(est_q / sq - 1), np.abs(est_tau / st - 1)
    print(f"\nnoise std relative error: q {np.round(100 * err_q, 2)} %, tau {np.round(100 * err_tau, 2)} %")
    assert np.all(err_q < 0.10) and np.all(err_tau < 0.10)
    # per harmonic: white noise gives var(X_mean[h]) = s^2 / (K M) at every harmonic
    m_per = int(PERIOD * RATE)
    per_h = p.noise.per_harmonic_tau[1:-1].mean(axis=0)
    assert np.allclose(per_h, st**2 / (PERIODS * m_per), rtol=0.1)
    # processed torque noise: averaging over K and keeping few harmonics shrinks it
    # default torque band "all": period averaging only, so the processed noise is sigma / sqrt(K)
    assert np.allclose(p.noise.tau_std_processed, st / np.sqrt(PERIODS), rtol=0.1)


def test_lead_in_and_transient_period_are_left_out(traj):
    rate, periods = 200.0, 5
    lead = 3.0
    t = np.arange(int((lead + periods * PERIOD + 1.0) * rate)) / rate
    tm = t - lead
    q = traj.derivative(tm, 0)
    start = traj.derivative(np.zeros(1), 0)[0]
    # approach: rest at a home pose, smooth move to the start pose, then the periodic excitation
    home = start - 0.5
    u = np.clip(t / lead, 0.0, 1.0)[:, None]
    s = 6 * u**5 - 15 * u**4 + 10 * u**3
    q = np.where(tm[:, None] < 0, home + (start - home) * s, q)
    end = lead + periods * PERIOD
    q = np.where(t[:, None] > end, traj.derivative(np.array([periods * PERIOD]), 0)[0], q)
    q = q.copy()
    # a transient on the first period: a decaying oscillation
    first = (tm >= 0) & (tm < PERIOD)
    q[first] += 0.05 * np.exp(-tm[first])[:, None] * np.sin(7.0 * tm[first])[:, None]
    tau = 9.81 * np.cos(q)
    p = process(Measurement(source="lead-in", t=t, q=q, tau=tau))
    assert p.mode == "periodic"
    assert abs(p.period - PERIOD) < 1e-4
    assert p.n_periods >= 3
    assert p.rejected_periods, p.method
    assert "left out of the average" in p.method


def test_non_integer_samples_per_period_are_resampled(traj):
    rate = 251.3  # T * rate is not an integer
    t = np.arange(int(6 * PERIOD * rate)) / rate
    q = traj.derivative(t, 0)
    m = Measurement(source="analytic", t=t, q=q, tau=torque(q, traj.derivative(t, 1), traj.derivative(t, 2)))
    p = process(m, ProcessingOptions(period=PERIOD, harmonics=tuple(range(1, HARMONICS + 1))))
    assert "resampled by cubic spline" in p.method
    ref = traj.derivative(p.t, 2)
    assert rel(p.qdd - ref, ref) < 1e-5


def test_single_rest_to_rest_period_with_different_end_poses():
    # rest - smooth motion from A to B with a wiggle - rest, all in closed form (polynomials)
    rate, t_rest, t_move = 200.0, 1.0, 6.0
    t = np.arange(int((2 * t_rest + t_move) * rate) + 1) / rate
    u = np.clip((t - t_rest) / t_move, 0.0, 1.0)
    moving = (t > t_rest) & (t < t_rest + t_move)
    step = np.polynomial.Polynomial([0, 0, 0, 0, 35, -84, 70, -20])  # C3 smooth step
    bump = np.polynomial.Polynomial.fromroots([0] * 5 + [1] * 5) * 40.0  # u^5 (u-1)^5, C4 at both ends
    wig = np.polynomial.Polynomial([0.0, 3.0, -2.0])
    shapes = [(0.8, 1.0), (-0.5, -2.0)]
    q = np.zeros((t.size, 2))
    ref = {k: np.zeros((t.size, 2)) for k in (1, 2)}
    for j, (jump, amp) in enumerate(shapes):
        poly = jump * step + amp * bump * wig
        q[:, j] = poly(u)
        for k in (1, 2):
            ref[k][:, j] = np.where(moving, poly.deriv(k)(u) / t_move**k, 0.0)
    tau = 5.0 * np.cos(q) + ref[2]
    p = process(Measurement(source="r2r", t=t, q=q, tau=tau))
    assert p.mode == "rest-to-rest" and p.n_periods == 1
    i = np.searchsorted(t, p.t)
    for k, got in ((1, p.qd), (2, p.qdd)):
        err = rel(got - ref[k][i], ref[k][i])
        print(f"\nrest-to-rest derivative {k}: relative error {err:.2e}")
        assert err < 2e-3


def test_nonperiodic_path_trims_edges_and_estimates_noise(traj):
    st = 0.1
    t, m, tau = make(traj, periods=3, sq=5e-5, st=st, seed=3)
    p = process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=4.0, decimate=1))  # every row
    assert p.mode == "nonperiodic" and p.cutoff_hz == 4.0
    n_edge = p.trimmed[0]
    auto = process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=4.0))  # the default: every r-th of those rows
    r = int(np.floor((1.0 / (t[1] - t[0])) / (5 * 4.0) + 1e-6))  # the largest r with rate / r >= 5 fc
    assert r > 1 and np.allclose(auto.t, t[n_edge:-n_edge:r])
    assert n_edge > 0 and p.n_samples == t.size - 2 * n_edge
    assert np.allclose(p.t, t[n_edge:-n_edge])
    assert f"{n_edge} samples trimmed" in p.method
    ref = traj.derivative(p.t, 2)
    assert np.sqrt(np.mean((p.qdd - ref) ** 2)) < 0.02 * np.sqrt(np.mean(ref**2))
    assert np.allclose(p.noise.tau_std, st, rtol=0.1)
    # decimation keeps every R-th sample of the filtered record
    d = process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=4.0, decimate=5))
    assert np.allclose(d.t, p.t[::5]) and np.allclose(d.tau, p.tau[::5])
    with pytest.raises(RobidInputError, match="decimate"):
        process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=40.0, decimate=5))


def test_same_filter_is_available_for_parallel_filtering(traj):
    _, m, _ = make(traj, sq=1e-4, st=0.05)
    p = process(m, ProcessingOptions(period=PERIOD, harmonics=(1, 2, 3, 4, 5, 6)))
    m_per = p.n_samples
    mean_tau = np.asarray(m.tau).reshape(PERIODS, m_per, DOF).mean(axis=0)
    assert np.allclose(p.apply_filter(mean_tau), p.tau, atol=1e-12)


def test_zero_velocity_selection_and_standstill_are_reported(traj):
    _, m, _ = make(traj)
    p = process(m, ProcessingOptions(period=PERIOD, min_speed=0.05))
    assert not p.keep.all()
    assert np.all(np.abs(p.qd[~p.keep]) < 0.05) and np.all(np.abs(p.qd[p.keep]) >= 0.05)
    assert "near-zero velocity" in p.method
