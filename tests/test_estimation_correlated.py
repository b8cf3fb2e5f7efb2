"""Least squares on rows correlated by a known low-pass (robid.estimation.correlated).

Reference: Monte Carlo over noise seeds of a linear model whose regressor and parameters are known exactly; the
noise is white on the recorded samples and low-passed with the torque (scipy's filter, not robid's), so the
observed scatter of the estimates is the truth the reported standard deviations are held to.
"""

from __future__ import annotations

import numpy as np
from scipy import signal

from robid.estimation import ols, wls
from robid.estimation.correlated import RowBlock, RowCorrelation
from robid.signals.nonperiodic_path import _row_noise

RATE, CUTOFF, N, DOF, P = 250.0, 12.0, 4000, 3, 8
SOS = signal.butter(4, CUTOFF, fs=RATE, output="sos")
EDGE = 70
PICK = slice(EDGE, N - EDGE)
SIGMA = np.array([10.0, 1.0, 0.3])


def smooth_regressor(rng):
    """(N, dof, p) columns made of a few sines below 3 Hz, some columns absent on some joints."""
    t = np.arange(N) / RATE
    W = np.zeros((N, DOF, P))
    for j in range(DOF):
        for k in range(P):
            f, phase = rng.uniform(0.1, 3.0, 5), rng.uniform(0, 2 * np.pi, 5)
            W[:, j, k] = np.sin(2 * np.pi * f[None] * t[:, None] + phase).sum(axis=1) * rng.uniform(0.5, 2.0)
    return W * (rng.random((1, DOF, P)) > 0.3)


def monte_carlo(seeds=40):
    rng = np.random.default_rng(0)
    W = smooth_regressor(rng)
    beta = rng.normal(size=P)
    Wf = signal.sosfiltfilt(SOS, W.reshape(N, -1), axis=0).reshape(N, DOF, P)[PICK]
    noise = _row_noise(SOS, CUTOFF, RATE, N, PICK)
    correlation = RowCorrelation((RowBlock(Wf.shape[0], noise.transpose, noise.power_gain),))
    runs = {"ols": [], "wls": [], "ols independent": [], "wls independent": []}
    white = []
    for _ in range(seeds):
        tau = signal.sosfiltfilt(SOS, W @ beta + rng.normal(size=(N, DOF)) * SIGMA, axis=0)[PICK]
        for name, fn in (("ols", ols), ("wls", wls)):
            fit = fn(Wf, tau, correlation=correlation)
            runs[name].append((fit.values, fit.std))
            plain = fn(Wf, tau)
            runs[name + " independent"].append((plain.values, plain.std))
            if name == "wls":
                white.append(fit.white_sigma)
    return runs, np.array(white), noise.power_gain


def median_ratio(pairs):
    values = np.array([v for v, _ in pairs])
    std = np.array([s for _, s in pairs])
    return float(np.median(values.std(axis=0, ddof=1) / np.median(std, axis=0)))


def test_reported_std_matches_the_scatter_of_filtered_rows():
    runs, white, gain = monte_carlo()
    ratios = {name: median_ratio(pairs) for name, pairs in runs.items()}
    print("\nobserved scatter / reported std:", {k: round(v, 3) for k, v in ratios.items()}, "power gain", gain)
    assert 0.85 <= ratios["ols"] <= 1.15 and 0.85 <= ratios["wls"] <= 1.15
    # rows treated as independent: optimistic by about sqrt(1 / power gain)
    assert ratios["ols independent"] > 2.0 and ratios["wls independent"] > 2.0
    assert np.allclose(white.mean(axis=0), SIGMA, rtol=0.03)


def test_power_gain_is_that_of_the_zero_phase_filter():
    f, h = signal.sosfreqz(SOS, worN=1 << 16, fs=RATE)
    expected = np.trapezoid(np.abs(h) ** 4, f) / (RATE / 2)
    assert np.isclose(_row_noise(SOS, CUTOFF, RATE, N, PICK).power_gain, expected, rtol=1e-3)


def test_independent_blocks_change_nothing():
    rng = np.random.default_rng(3)
    W = rng.normal(size=(300, DOF, P))
    tau = W @ rng.normal(size=P) + rng.normal(size=(300, DOF)) * SIGMA
    plain = wls(W, tau)
    blocks = wls(W, tau, correlation=RowCorrelation((RowBlock(100), RowBlock(200))))
    assert np.allclose(plain.values, blocks.values) and np.allclose(plain.covariance, blocks.covariance)
    assert blocks.white_sigma is None


def test_decimated_rows_keep_honest_std_and_lose_little():
    """Parallel decimation (every 4th row: 62.5 Hz, above 5 times the 12 Hz cut-off): the covariance from the band
    of F F^T on the decimated rows (RowNoise.gram, no F^T) matches the scatter over seeds, the white noise level is
    found, and the estimates scatter hardly more than with every row."""
    rng = np.random.default_rng(0)
    W = smooth_regressor(rng)
    beta = rng.normal(size=P)
    full = signal.sosfiltfilt(SOS, W.reshape(N, -1), axis=0).reshape(N, DOF, P)
    pick = slice(EDGE, N - EDGE, 4)
    noise = _row_noise(SOS, CUTOFF, RATE, N, pick)
    assert noise.gram is not None
    decimated = RowCorrelation((RowBlock(full[pick].shape[0], noise.transpose, noise.power_gain, gram=noise.gram),))
    every = _row_noise(SOS, CUTOFF, RATE, N, PICK)
    dense = RowCorrelation((RowBlock(full[PICK].shape[0], every.transpose, every.power_gain),))
    runs = {"decimated": [], "every row": []}
    white = []
    for _ in range(40):
        tau = signal.sosfiltfilt(SOS, W @ beta + rng.normal(size=(N, DOF)) * SIGMA, axis=0)
        fit = wls(full[pick], tau[pick], correlation=decimated)
        runs["decimated"].append((fit.values, fit.std))
        white.append(fit.white_sigma)
        ref = wls(full[PICK], tau[PICK], correlation=dense)
        runs["every row"].append((ref.values, ref.std))
    ratio = median_ratio(runs["decimated"])
    scatter = {k: np.array([v for v, _ in pairs]).std(axis=0, ddof=1) for k, pairs in runs.items()}
    loss = float(np.median(scatter["decimated"] / scatter["every row"]))
    print(f"\ndecimated by 4: scatter / reported std {ratio:.3f}, scatter against every row {loss:.3f}")
    assert 0.85 <= ratio <= 1.15
    assert np.allclose(np.mean(white, axis=0), SIGMA, rtol=0.05)
    assert loss < 1.1
