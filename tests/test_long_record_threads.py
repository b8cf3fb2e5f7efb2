"""The long-record path's threads give the same numbers as one thread: the streamed filter's channel groups
(robid.signals.streamed_filter) against scipy's ``sosfiltfilt`` on the whole record, bit for bit; the joints'
streaming QR on two threads (robid.identification.datasets) against one thread, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from robid.estimation.compressed import StreamingQR
from robid.identification import datasets
from robid.identification.compact_regressor import CompactRegressor
from robid.signals import streamed_filter

SOS = signal.butter(4, 3.0, fs=500.0, output="sos")


@pytest.mark.parametrize("workers", [2, 3])
def test_channel_groups_on_threads_are_scipys_filter(monkeypatch, workers):
    monkeypatch.setattr(streamed_filter, "WORKERS", workers)
    monkeypatch.setattr(streamed_filter, "MIN_THREADED", 0)
    calls = []
    original = signal.sosfilt

    def counted(*args, **kwargs):
        calls.append(args[1].shape[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(streamed_filter.signal, "sosfilt", counted)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5000, 41)).cumsum(axis=0)
    x[:, 7] = 0.0
    x[:2600, 30] = 0.0
    reference = signal.sosfiltfilt(SOS, x, axis=0)
    out = np.zeros_like(x)
    blocks = [x[a:b] for a, b in ((0, 1200), (1200, 2600), (2600, 5000))]
    for start, cols, y in streamed_filter.zero_phase_blocks(blocks, x.shape[0], x.shape[1], SOS):
        out[start : start + y.shape[0], cols] = y
    assert np.array_equal(out, reference)
    assert max(calls) < 40  # the wide blocks were cut into groups


def test_joint_qr_on_threads_is_the_same_as_on_one(monkeypatch):
    rng = np.random.default_rng(5)
    n, dof, nb = 9000, 4, 12
    columns = np.array([0, 1, 2, 3, 5, 8, 11, 13, 14, 20, 23, 26, 29, 31, 35, 38, 40, 46, 47])
    data = rng.normal(size=(n, columns.size))
    data[:5000, 4] = 0.0
    W = CompactRegressor(columns=columns, data=data, shape=(n, dof, nb))
    tau = rng.normal(size=(n, dof))
    tau[100:200, 2] = 0.0
    results = []
    for workers in (1, 2):
        monkeypatch.setattr(datasets, "QR_WORKERS", workers)
        acc = StreamingQR(dof, nb)
        datasets._compact_rows(acc, W, tau)
        results.append(acc.problem())
    one, two = results
    assert np.array_equal(one.W, two.W) and np.array_equal(one.tau, two.tau)
    assert one.samples == two.samples == n and np.array_equal(one.rows, two.rows)
    dense = np.asarray(W)
    for j in range(dof):  # and the factor is the QR of the joint's rows
        a = np.column_stack([dense[:, j, :], tau[:, j]])
        r = np.column_stack([two.W[:, j, :], two.tau[:, j]])
        assert np.allclose(r.T @ r, a.T @ a, rtol=1e-10, atol=1e-9)
