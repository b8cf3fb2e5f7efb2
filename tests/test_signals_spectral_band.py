"""The automatic band of the periodic path (robid/signals/spectral_band.py), on an averaged period of two joints
whose true accelerations are known in closed form, against what a peer does (zero-phase Butterworth(4) +
central differences on the raw periods, at the best cut-off in hindsight -- an oracle no user has).

* Joint 1 sticks at each velocity reversal and breaks away (qd = sign(s) max(|s| - d, 0), s = V sin(w t)): its
  acceleration steps, its spectrum continues under the noise.
* Joint 2 follows a Fourier series of harmonics 1, 3, 5 exactly (a designed excitation tracked closely).

The shared hard band is the union over the joints (harmonics up to ~35, for joint 1), so joint 2 needs its own.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal
from scipy.integrate import cumulative_trapezoid

from robid.signals import bands, noise, periodic
from robid.signals.periodic_samples import block_weights
from robid.signals.spectral_band import SpectralBand, butterworth, choose_band

T, M, K, SIGMA, MIN_SPEED = 4.0, 1000, 4, 1e-4, 0.1
W0 = 2.0 * np.pi / T


def _truth() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, qd, qdd (M, 2) on one period: joint 1 stick-slip, joint 2 a Fourier series."""
    t = np.arange(M) * T / M
    fine = np.arange(M * 100) * T / (M * 100)
    s_fine = np.sin(W0 * fine)
    q1 = cumulative_trapezoid(np.sign(s_fine) * np.maximum(np.abs(s_fine) - 0.15, 0.0), fine, initial=0.0)[::100]
    s = np.sin(W0 * t)
    qd1 = np.sign(s) * np.maximum(np.abs(s) - 0.15, 0.0)
    qdd1 = np.where(np.abs(s) > 0.15, W0 * np.cos(W0 * t), 0.0)
    amp, phase, harm = np.array([0.5, 0.2, 0.05]), np.array([0.0, 1.0, 2.0]), np.array([1, 3, 5])
    arg = np.outer(t, harm * W0) + phase
    q2 = np.sin(arg) @ amp
    qd2 = np.cos(arg) @ (amp * harm * W0)
    qdd2 = -np.sin(arg) @ (amp * (harm * W0) ** 2)
    return np.column_stack([q1, q2]), np.column_stack([qd1, qd2]), np.column_stack([qdd1, qdd2])


def _rms_on(error: np.ndarray, used: np.ndarray) -> np.ndarray:
    return np.sqrt((np.where(used, error, 0.0) ** 2).sum(axis=0) / used.sum(axis=0))


def _peer_best(periods: np.ndarray, qdd: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Butterworth(4) forwards and backwards + two np.gradient steps on the K raw periods, scored on an inner
    period, at the best of 60 cut-offs from 0.5 to 50 Hz per joint."""
    raw, fs = periods.reshape(-1, periods.shape[2]), M / T
    best = np.full(raw.shape[1], np.inf)
    for fc in np.geomspace(0.5, 50.0, 60):
        y = signal.sosfiltfilt(signal.butter(4, fc, fs=fs, output="sos"), raw, axis=0)
        a = np.gradient(np.gradient(y, 1.0 / fs, axis=0), 1.0 / fs, axis=0)[M : 2 * M]
        best = np.minimum(best, _rms_on(a - qdd, used))
    return best


@pytest.fixture(scope="module")
def runs():
    q, qd, qdd = _truth()
    used = np.abs(qd) >= MIN_SPEED
    rng = np.random.default_rng(0)
    out = []
    for _ in range(5):
        periods = q[None] + SIGMA * rng.standard_normal((K, M, 2))
        avg = periods.mean(axis=0)
        x = np.fft.rfft(periods, axis=1) / M
        harm = np.sum(np.abs(x - x.mean(axis=0)) ** 2, axis=0) / ((K - 1) * K)
        floor = noise.pooled_noise_floor(harm, K)
        harmonics, how = bands.snr_band(avg, harm, K, 20.0, None)
        hard = SpectralBand.hard(periodic.harmonic_mask(M // 2 + 1, harmonics), how)
        band, risk = choose_band(avg, floor, T, 1, hard, MIN_SPEED, 20.0)

        def error(weights, avg=avg):
            return _rms_on(periodic.spectral_derivatives(avg, weights, T, 2)[2] - qdd, used)

        grid = [error(np.repeat(butterworth(np.arange(M // 2 + 1), hc)[:, None], 2, axis=1)) for hc in risk.grid]
        out.append(
            {
                "band": band,
                "risk": risk,
                "chosen": error(band.weights()),
                "hard": error(hard.weights()[:, [0, 0]]),
                "best_smooth": np.min(grid, axis=0),
                "peer": _peer_best(periods, qdd, used),
            }
        )
    return out


def test_a_band_limited_joint_keeps_only_its_own_harmonics(runs):
    for r in runs:
        assert "own harmonics 1, 3, 5" in r["band"].describe(T), r["band"].describe(T)
        # measured: 6e-5 - 2e-4 rad/s^2 against the peer's 3e-3 and the shared hard band's 1e-2
        assert r["chosen"][1] < 0.15 * r["peer"][1], (r["chosen"], r["peer"])
        assert r["chosen"][1] < 0.05 * r["hard"][1]
    # the predicted error is the expected one: the noise of three harmonics (6 degrees of freedom per record),
    # so compared as the rms over the five records
    predicted = np.sqrt(np.mean([r["risk"].error()[1] ** 2 for r in runs]))
    actual = np.sqrt(np.mean([r["chosen"][1] ** 2 for r in runs]))
    assert 0.67 < predicted / actual < 1.5, (predicted, actual)


def test_a_joint_that_sticks_is_never_worse_than_the_hard_band(runs):
    chosen = np.array([r["chosen"][0] for r in runs])
    hard = np.array([r["hard"][0] for r in runs])
    peer = np.array([r["peer"][0] for r in runs])
    best = np.array([r["best_smooth"][0] for r in runs])
    print(f"\njoint 1 rms qdd error: chosen {chosen}, hard {hard}, best smooth in hindsight {best}, peer {peer}")
    assert np.all(chosen <= hard * (1 + 1e-12))
    # Known limit (docs/signals.md section 11): the motion under the noise is invisible, so the predicted
    # errors favour the hard band here; measured: chosen 1.1-1.5 x the peer's oracle and 1.9-2.4 x the best
    # smooth response in hindsight.
    assert np.median(chosen / peer) < 1.35
    assert np.all(chosen / peer < 1.6)


def test_weights_of_a_mixed_band():
    mask = periodic.harmonic_mask(11, np.arange(1, 5))
    own = np.column_stack([mask, periodic.harmonic_mask(11, np.array([1, 3]))])
    band = SpectralBand(mask, "test", (None, None, 3.0), own=np.column_stack([own, mask]))
    w = band.weights()
    assert np.array_equal(w[:, 0], mask) and np.array_equal(w[:, 1], own[:, 1])
    assert np.allclose(w[:-1, 2], 1.0 / (1.0 + (np.arange(10) / 3.0) ** 4)) and w[-1, 2] == 0.0
    # the torque band shared by every joint passes what each passes
    common = band.common("shared").weights()[:, 0]
    assert np.all(common[:-1] >= w[:-1].max(axis=1) - 1e-12)
    # a K-period block samples the band at the fractional harmonics b / K
    assert np.allclose(block_weights(band, 1, 20), w)
    assert np.allclose(block_weights(band, 3, 20)[::3], w)
    lifted = band.with_extra(periodic.harmonic_mask(11, np.array([7])), "plus 7").weights()
    assert np.all(lifted[7] == 1.0) and np.array_equal(lifted[8], w[8])
