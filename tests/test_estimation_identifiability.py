"""Numerical identifiability classes, correlated pairs, structural classes and essential parameters."""

from __future__ import annotations

import numpy as np
import pytest
from test_estimation_synthetic import linear_problem, smooth_regressor

from robid.estimation import (
    ClassificationThresholds,
    classify,
    correlated_pairs,
    correlation_matrix,
    essential_parameters,
    wls,
)

NAMES = [f"b{i}" for i in range(8)]


def test_correlation_matrix_independent_formula():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(4, 4))
    cov = L @ L.T
    rho = correlation_matrix(cov)
    for i in range(4):
        for j in range(4):
            assert rho[i, j] == pytest.approx(cov[i, j] / np.sqrt(cov[i, i] * cov[j, j]))


def test_constructed_collinear_pair_is_flagged_by_name():
    W, beta, tau, noise = linear_problem(seed=2)
    rng = np.random.default_rng(7)
    W = W.copy()
    # column 5 nearly a copy of column 2 (like the compensator B1 cos q2 against link-2 gravity)
    W[:, :, 5] = W[:, :, 2] * 1.3 + 0.02 * np.abs(W[:, :, 2]).mean() * rng.normal(size=W.shape[:2])
    tau = W @ beta + rng.normal(size=tau.shape) * noise
    r = wls(W, tau, names=NAMES)
    report = classify(r, W)
    names = {(p.first, p.second) for p in report.correlated_pairs}
    assert ("b2", "b5") in names
    assert len(report.correlated_pairs) == 1, report.correlated_pairs
    assert abs(report.correlated_pairs[0].correlation) > 0.95
    assert report.by_name("b2").correlated_with == ("b5",)
    assert report.by_name("b5").correlated_with == ("b2",)
    assert "0.95" in report.notes[0] and "10 %" in report.notes[0]
    # the stand-alone helper with a threshold just above the pair's correlation finds nothing
    rho = abs(report.correlated_pairs[0].correlation)
    assert correlated_pairs(r.covariance, NAMES, rho + 1e-9) == ()
    print(f"\nconstructed collinear pair: corr(b2, b5) = {report.correlated_pairs[0].correlation:.4f}")


def test_classes_follow_the_stated_thresholds():
    W, beta, tau, noise = linear_problem(seed=3)
    W = W.copy()
    W[:, :, 7] *= 1e-4  # barely excited column
    beta = beta.copy()
    tau = W @ beta + np.random.default_rng(1).normal(size=tau.shape) * noise
    r = wls(W, tau, names=NAMES)
    rep = classify(r, W)
    cls = rep.classes()
    assert cls["b7"] == "barely-excited"
    assert rep.by_name("b7").isolated_relative_std_percent >= 10.0
    well = [n for n, c in cls.items() if c == "well-identified"]
    for n in well:
        assert rep.by_name(n).relative_std_percent < 10.0
    assert len(well) >= 5
    # thresholds are parameters: with a 1e-6 % threshold nothing is well identified
    strict = classify(r, W, thresholds=ClassificationThresholds(poor_relative_std_percent=1e-6))
    assert "well-identified" not in strict.classes().values()


def test_standard_parameter_classes_combine_structure_and_numbers():
    W, beta, tau, noise = linear_problem(seed=4, nb=3, dof=2, noise=(0.05, 0.5))
    W = W.copy()
    W[:, :, 2] *= 1e-5
    tau = W @ beta + np.random.default_rng(2).normal(size=tau.shape) * noise
    r = wls(W, tau, names=["b0", "b1", "b2"])
    standard = ["s0", "s1", "s2", "s3", "s4"]
    # b0 = s0 ; b1 = s1 + 0.5 s2 ; b2 = s3 ; s4 has no effect
    G = np.array([[1, 0, 0, 0, 0], [0, 1, 0.5, 0, 0], [0, 0, 0, 1, 0]], dtype=float)
    rep = classify(r, W, grouping=G, standard_names=standard)
    got = {s.name: (s.structural_class, s.base_parameters, s.numerical_class) for s in rep.standard}
    assert got["s0"] == ("identifiable", ("b0",), "well-identified")
    assert got["s1"] == ("grouped", ("b1",), "well-identified")
    assert got["s2"] == ("grouped", ("b1",), "well-identified")
    assert got["s3"] == ("identifiable", ("b2",), "barely-excited")
    assert got["s4"] == ("unidentifiable", (), None)
    # structural classes from the derivation take precedence
    rep2 = classify(r, W, grouping=G, standard_names=standard, structural_classes={"s0": "grouped"})
    assert rep2.standard[0].structural_class == "grouped"


def test_essential_parameters_drop_the_unexcited_ones():
    n, dof, nb = 400, 3, 8
    W = smooth_regressor(n, dof, nb, seed=9)
    beta = np.array([2.0, -1.5, 3.0, 1.0, -2.5, 1.2, 0.0, 0.0])  # two parameters truly absent
    W[:, :, 6] *= 1e-3
    W[:, :, 7] *= 1e-3
    noise = np.array([0.1, 0.3, 0.5])
    tau = W @ beta + np.random.default_rng(3).normal(size=(n, dof)) * noise
    res = essential_parameters(W, tau, NAMES, threshold_percent=10.0, max_residual_increase_percent=2.0)
    assert set(res.names) == {f"b{i}" for i in range(6)}
    assert {s.removed for s in res.steps} == {"b6", "b7"}
    assert all(s.residual_increase_percent < 1.0 for s in res.steps)
    assert res.stopped_by == "threshold"
    assert np.all(res.estimate.relative_std_percent < 10.0)
    print(
        "\nessential parameters:",
        [(s.removed, round(s.relative_std_percent), round(s.residual_increase_percent, 3)) for s in res.steps],
    )


def test_essential_parameters_keep_a_parameter_that_matters():
    W, beta, tau, noise = linear_problem(seed=5)
    W = W.copy()
    W[:, :, 3] *= 0.01  # poorly identified but it carries a visible torque
    beta = beta.copy()
    beta[3] = 80.0
    tau = W @ beta + np.random.default_rng(4).normal(size=tau.shape) * noise
    res = essential_parameters(W, tau, NAMES, threshold_percent=0.01, max_residual_increase_percent=5.0)
    assert res.stopped_by == "residual"
    assert "b3" in res.names
