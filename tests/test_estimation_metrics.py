"""Validation metrics and prediction bands."""

from __future__ import annotations

import numpy as np
import pytest
from test_estimation_synthetic import linear_problem, smooth_regressor

from robid.errors import RobidInputError
from robid.estimation import prediction_bands, torque_metrics, wls


def test_metrics_by_hand():
    T = np.array([[1.0, 10.0], [-1.0, -10.0], [2.0, 0.0], [0.0, 5.0]])
    P = np.array([[1.5, 10.0], [-1.0, -9.0], [1.0, 0.0], [0.0, 5.0]])
    m = torque_metrics(T, P, ["A1", "A2"])
    e1 = np.array([-0.5, 0.0, 1.0, 0.0])
    assert m.per_joint[0].joint == "A1"
    assert m.per_joint[0].rms == pytest.approx(np.sqrt(np.mean(e1**2)))
    assert m.per_joint[0].nrmse_percent == pytest.approx(100 * np.sqrt(1.25 / 4) / np.sqrt(6 / 4))
    assert m.per_joint[0].max_error == pytest.approx(1.0)
    assert m.per_joint[1].rms == pytest.approx(0.5)
    assert m.per_joint[1].max_error == pytest.approx(1.0)
    assert m.relative_error_norm_percent == pytest.approx(100 * np.sqrt(1.25 + 1.0) / np.sqrt(6 + 225))
    assert m.per_joint[1].nrmse_percent == pytest.approx(100 * 0.5 / np.sqrt(225 / 4))
    # rows the data selection left out count in no statistic: the second row of A2 holds its only error
    used = np.array([[True, True], [True, False], [True, True], [True, True]])
    u = torque_metrics(T, P, ["A1", "A2"], used)
    assert u.per_joint[1].rms == 0.0 and u.per_joint[1].max_error == 0.0
    assert u.per_joint[1].measured_rms == pytest.approx(np.sqrt((100 + 25) / 3))
    assert u.per_joint[0].rms == m.per_joint[0].rms
    with pytest.raises(RobidInputError):
        torque_metrics(T, P[:, :1])


def test_prediction_bands_cover_new_measurements():
    """Over repeated identifications, ~95 % of fresh measured torques fall within mean +- 1.96 std_total.

    (For one fit the coverage is not 95 %: its parameter error is fixed across the validation samples; the band
    is a statement about the ensemble of experiments.)
    """
    W_val = smooth_regressor(500, 3, 8, seed=2)  # another trajectory, same robot (same beta)
    hits = []
    for seed in range(20):
        W, beta, tau, noise = linear_problem(seed=seed)
        r = wls(W, tau)
        tau_val = W_val @ beta + np.random.default_rng(1000 + seed).normal(size=(500, 3)) * noise
        bands = prediction_bands(W_val, r)
        lo, hi = bands.interval(1.96)
        hits.append(np.mean((tau_val >= lo) & (tau_val <= hi), axis=0))
    inside = np.mean(hits, axis=0)
    print(f"\nprediction-band coverage per joint (nominal 0.95): {np.round(inside, 3)}")
    assert np.all((inside > 0.93) & (inside < 0.97))
    # the parameter part of the band is the std of W beta_hat: check one sample against the explicit form
    w = W_val[10, 1]
    assert bands.std_model[10, 1] == pytest.approx(np.sqrt(w @ r.covariance @ w))
    assert np.all(bands.std_model < bands.std_total)
