"""Identification of non-periodic runs without the stacked regressor (robid.identification.compact_regressor,
robid.signals.streamed_filter, robid.estimation.compressed) against the stacked path.

References: ``scipy.signal.sosfiltfilt`` on the whole record for the streamed filter; the dense regressor for the
compact one; and the whole identification with the regressor stacked and factored whole (the path taken before,
and still for the methods that need the stacked rows): estimate, WLS weights, covariance, classes, and every
number of RESULT.json (fit, prediction bands, series, spectra) of the identification and the validation run.
"""

from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest
from scipy import signal

import robid
from robid.identification import IdentificationOptions, run_identification
from robid.identification.compact_regressor import CompactRegressor
from robid.io.result_file import write_result
from robid.signals import ProcessingOptions
from robid.signals.nonperiodic_path import _row_noise, streamed_parallel_filter
from robid.signals.streamed_filter import zero_phase_blocks

identify_module = importlib.import_module("robid.identification.identify")  # the package exports a function so named
SOS = signal.butter(4, 3.0, fs=500.0, output="sos")


def record_with_zero_channels(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).cumsum(axis=0)
    x[:, 2] = 0.0  # never excited
    x[:3100, 4] = 0.0  # excited from the middle on
    x[:, 5] = 0.0
    x[4000:, 5] = 1.0  # a step
    return x


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("cuts", [[0, 6000], [0, 100, 101, 3099, 3100, 5990, 6000], [0, 37, 2048, 6000]])
def test_streamed_zero_phase_filter_is_scipys_on_the_whole_record(padded, cuts):
    x = record_with_zero_channels()
    if padded and cuts[1] < 40:  # the first block must hold the odd extension
        cuts = [0, 1000] + cuts[2:]
    reference = signal.sosfiltfilt(SOS, x, axis=0, padtype="odd" if padded else None)
    out = np.zeros_like(x)
    starts = []
    blocks = [x[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    for start, cols, y in zero_phase_blocks(blocks, x.shape[0], 6, SOS, padded):
        out[start : start + y.shape[0], cols] = y
        starts.append(start)
        assert 2 not in cols  # a channel never excited is never filtered
    assert starts == sorted(starts, reverse=True)
    assert np.array_equal(out, reference)  # the same operations in the same order: bit for bit


@pytest.mark.parametrize("step", [1, 3])
def test_streamed_parallel_filter_and_transpose_products(step):
    n = 6000
    pick = slice(200, n - 200, step)
    rng = np.random.default_rng(1)
    states = [rng.normal(size=(n, 2)).cumsum(axis=0) for _ in range(3)]

    def evaluate(q, qd, qdd, window):
        return np.column_stack([q * qd, np.zeros(len(q)), qdd, q[:, :1] ** 2])

    reference = signal.sosfiltfilt(SOS, evaluate(*states, None), axis=0)[pick]
    columns, rows = streamed_parallel_filter(evaluate, states, SOS, pick, 1000)
    assert columns.tolist() == [0, 1, 3, 4, 5]  # channel 2 is zero throughout
    assert np.array_equal(rows, reference[:, columns])
    noise = _row_noise(SOS, 3.0, 500.0, n, pick)
    z = noise.transpose(reference)
    gram = noise.transpose_gram(lambda lo, hi: reference[lo:hi], reference.shape[1], 777)
    assert np.allclose(gram, z.T @ z, rtol=1e-12, atol=1e-13 * np.abs(z.T @ z).max())


def test_compact_regressor_behaves_as_the_dense_one():
    rng = np.random.default_rng(2)
    dense = rng.normal(size=(50, 3, 4))
    dense[:, 2, :2] = 0.0
    dense[10:20, 1] = 0.0
    columns = np.flatnonzero(np.any(dense.reshape(50, 12) != 0, axis=0))
    W = CompactRegressor(columns=columns, data=dense.reshape(50, 12)[:, columns], shape=(50, 3, 4))
    v = rng.normal(size=4)
    tau = rng.normal(size=(50, 3))
    tau[12:15, 1] = 0.0
    assert np.allclose(W @ v, dense @ v)
    assert np.array_equal(np.asarray(W), dense)
    assert np.array_equal(W[::7, 1, [0, 3]], dense[::7, 1, [0, 3]])
    assert np.array_equal(W[5], dense[5]) and np.array_equal(W[3:9, 2], dense[3:9, 2])
    assert np.array_equal(W.used_rows(tau), np.any(dense != 0, axis=2) | (tau != 0))
    with pytest.raises(TypeError):
        W != 0  # noqa: B015 -- an elementwise comparison must not silently compare objects


def write_run(robot, path, seed, duration=24.0, rate=500.0):
    """Nominal-model torques plus 1 % noise on incommensurate sines (non-periodic), 1e-5 rad encoder noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 1.0 / rate)
    f = rng.uniform(0.05, 0.6, size=(5, robot.dof))
    a = rng.uniform(0.1, 0.4, size=(5, robot.dof)) / (2 * np.pi * f)
    phi = rng.uniform(0, 2 * np.pi, size=(5, robot.dof))
    arg = 2 * np.pi * f[None] * t[:, None, None] + phi[None]
    q = np.sum(a * np.sin(arg), axis=1)
    qd = np.sum(a * 2 * np.pi * f * np.cos(arg), axis=1)
    qdd = -np.sum(a * (2 * np.pi * f) ** 2 * np.sin(arg), axis=1)
    tau = robot.inverse_dynamics(q, qd, qdd)
    tau = tau + rng.normal(size=tau.shape) * 0.01 * tau.std(axis=0)
    q = q + rng.normal(size=q.shape) * 1e-5
    header = ",".join(["t"] + [f"q{j + 1}" for j in range(robot.dof)] + [f"tau{j + 1}" for j in range(robot.dof)])
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=header, comments="", fmt="%.12g")
    return path


#: tolerance of the semidefinite programme's answer (its solver's, not rounding)
SOLVER = 1e-3


def assert_same(a, b, path="", rtol=1e-7):
    """Every number of two RESULT.json documents equal to ``rtol`` (the series carry 6 significant digits: a
    rounding flip there is allowed one unit of the last digit)."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            # the nearest consistent set is an interior-point solver's answer: equal to its tolerance, not to rounding
            assert_same(a[k], b[k], f"{path}.{k}", SOLVER if k == "physical_consistency" else rtol)
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]", rtol)
    elif isinstance(a, float) and isinstance(b, float) and rtol == SOLVER:  # SI values of order 1e-3 .. 10
        assert abs(a - b) <= 1e-3 * max(abs(a), abs(b)) + 1e-6, (path, a, b)
    elif isinstance(a, float) and isinstance(b, float):
        scale = max(abs(a), abs(b))
        last_digit = 10.0 ** (math.floor(math.log10(scale)) - 5) if scale > 0 else 0.0
        assert abs(a - b) <= max(rtol * scale, 1.01 * last_digit if scale < 1e300 else 0.0, 1e-14), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize(("method", "decimate"), [("wls", 1), ("ols", 1), ("wls", None)])
def test_streamed_identification_equals_the_stacked_one(tmp_path, monkeypatch, method, decimate):
    robot = robid.load_robot("puma560")
    ident = write_run(robot, tmp_path / "id.csv", 1)
    val = write_run(robot, tmp_path / "val.csv", 2, duration=12.0)
    # the estimate's two paths compared; the stacked path's friction model comparison (run by default where the
    # regressor is stacked) is not the subject here
    options = IdentificationOptions(method=method, processing=ProcessingOptions(mode="nonperiodic", min_speed=0.05,
                                                                                decimate=decimate), friction_models=())
    streamed = run_identification(robot, [ident], options, validation_files=[val])
    assert isinstance(streamed.datasets[0].W, CompactRegressor)
    assert isinstance(streamed.validation_sets[0].W, CompactRegressor)
    assert streamed.datasets[0].rows_used < streamed.datasets[0].W.shape[0] * robot.dof  # a data selection
    monkeypatch.setattr(identify_module, "streamed_runs", lambda robot, o: False)
    stacked = run_identification(robot, [ident], options, validation_files=[val])
    assert isinstance(stacked.datasets[0].W, np.ndarray)
    if decimate is None:  # automatic: rate >= 5 fc, and the largest such factor
        p = streamed.datasets[0].processed
        r = p.decimation
        assert r > 1 and p.sample_rate >= 5 * p.cutoff_hz > 500.0 / (r + 1)

    s, t = streamed.estimate, stacked.estimate
    assert np.allclose(s.values, t.values, rtol=1e-9, atol=1e-12 * np.abs(t.values).max())
    assert np.allclose(s.weights, t.weights, rtol=1e-9)
    assert np.allclose(s.sigma, t.sigma, rtol=1e-9) and np.allclose(s.white_sigma, t.white_sigma, rtol=1e-9)
    scale = np.sqrt(np.outer(np.diag(t.covariance), np.diag(t.covariance)))
    assert np.allclose(s.covariance, t.covariance, rtol=0, atol=1e-9 * scale.max())
    assert np.allclose(s.covariance / scale, t.covariance / scale, rtol=0, atol=1e-9)
    assert np.allclose(s.residual, t.residual, rtol=0, atol=1e-10 * np.abs(t.residual).max())
    assert s.dof_residual == t.dof_residual
    classes = [(p.name, p.numerical_class) for p in streamed.identifiability.parameters]
    assert classes == [(p.name, p.numerical_class) for p in stacked.identifiability.parameters]
    write_result(tmp_path / "streamed.json", streamed.record)
    write_result(tmp_path / "stacked.json", stacked.record)
    assert_same(json.loads((tmp_path / "streamed.json").read_text()),
                json.loads((tmp_path / "stacked.json").read_text()))


@pytest.mark.parametrize("step", [7, 40])
def test_decimated_rows_gram_is_the_transpose_products(step):
    """RowNoise.gram of decimated rows (the band of F F^T, robid.signals.nonperiodic_path.toeplitz_gram) against
    (F^T x)^T (F^T x) with F^T applied as a filter (RowNoise.transpose)."""
    n = 6000
    pick = slice(200, n - 200, step)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(len(range(n)[pick]), 5)).cumsum(axis=0)
    x[:, 3] = 0.0
    x[: x.shape[0] // 2, 4] = 0.0
    noise = _row_noise(SOS, 3.0, 500.0, n, pick)
    z = noise.transpose(x)
    reference = z.T @ z
    assert np.allclose(noise.gram(x), reference, rtol=1e-9, atol=1e-9 * np.abs(reference).max())
