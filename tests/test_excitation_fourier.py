"""Fourier trajectory model: derivatives, rest-to-rest boundary values, continuity order, file round trip."""

import math

import numpy as np
import pytest

from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory, basis, rest_constraint_matrix, rest_nullspace
from robid.excitation.trajectory_file import TrajectoryFile, load_trajectory, save_trajectory


def _random(rest_order, harmonics=6, dof=3, seed=0, period=7.3):
    rng = np.random.default_rng(seed)
    traj = FourierTrajectory(
        period,
        rng.uniform(-1, 1, dof),
        rng.standard_normal((dof, harmonics)),
        rng.standard_normal((dof, harmonics)),
        rest_order,
    )
    return traj.project_rest()


def _closed_form(traj, t):
    """Independent evaluation of q straight from the Swevers formula, one term at a time."""
    w = 2 * math.pi / traj.period
    q = np.tile(traj.center, (len(t), 1))
    for j in range(traj.dof):
        for l in range(1, traj.harmonics + 1):
            q[:, j] += traj.a[j, l - 1] / (l * w) * np.sin(l * w * t) - traj.b[j, l - 1] / (l * w) * np.cos(l * w * t)
    return q


@pytest.mark.parametrize("rest_order", [None, 4])
def test_position_matches_swevers_formula(rest_order):
    traj = _random(rest_order)
    t = np.linspace(0.1, 20.0, 57)
    np.testing.assert_allclose(traj.derivative(t, 0), _closed_form(traj, t), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rest_order", [None, 4, 6])
def test_analytic_derivatives_match_numerical_differentiation(rest_order):
    traj = _random(rest_order)
    t = np.linspace(0.05, 7.0, 41)
    h = 1e-4
    for k in range(4):
        # fourth-order central difference of the (k)-th derivative against the analytic (k+1)-th
        num = (
            -traj.derivative(t + 2 * h, k)
            + 8 * traj.derivative(t + h, k)
            - 8 * traj.derivative(t - h, k)
            + traj.derivative(t - 2 * h, k)
        ) / (12 * h)
        ana = traj.derivative(t, k + 1)
        scale = np.max(np.abs(ana))
        assert np.max(np.abs(num - ana)) < 1e-8 * scale, k
    # and the position itself, differenced from the closed form (independent of basis())
    num = (_closed_form(traj, t + h) - _closed_form(traj, t - h)) / (2 * h)
    np.testing.assert_allclose(num, traj.derivative(t, 1), atol=1e-6)


@pytest.mark.parametrize("rest_order", [2, 4, 5, 6])
def test_rest_to_rest_boundary_values_are_exact(rest_order):
    traj = _random(rest_order, harmonics=7)
    ends = np.array([0.0, traj.period, 2 * traj.period, 5 * traj.period])
    assert np.array_equal(traj.derivative(ends, 0), np.tile(traj.center, (4, 1)))
    for k in range(1, rest_order + 1):
        assert np.array_equal(traj.derivative(ends, k), np.zeros((4, traj.dof))), k
    # the series itself (no snapping) satisfies the conditions to rounding
    x = traj.coefficients()
    for k in range(rest_order + 1):
        raw = basis(np.array([0.0]), traj.period, traj.harmonics, k) @ x.T
        assert np.max(np.abs(raw)) < 1e-12 * max(1.0, traj.derivative_bound(k).max()), k
    # the first derivative beyond the rest order does not vanish in general
    nxt = basis(np.array([0.0]), traj.period, traj.harmonics, rest_order + 1) @ x.T
    assert np.max(np.abs(nxt)) > 1e-3


def test_continuity_order_is_reported():
    assert _random(4).continuity_order() == 4
    assert _random(6, harmonics=8).continuity_order() == 6
    assert _random(None).continuity_order() == 0
    tf = TrajectoryFile(_random(5, harmonics=7), JointLimitSet.create(3))
    from robid.excitation.trajectory_file import trajectory_to_dict

    d = trajectory_to_dict(tf)
    assert d["continuity_order"] == 5 and d["rest_to_rest"] is True


def test_nullspace_is_orthonormal_and_exact():
    for h, m in [(5, 4), (7, 4), (8, 6)]:
        n = rest_nullspace(h, m)
        assert n.shape == (2 * h, 2 * h - m - 1)
        np.testing.assert_allclose(n.T @ n, np.eye(n.shape[1]), atol=1e-13)
        assert np.max(np.abs(rest_constraint_matrix(h, m) @ n)) < 1e-13


def test_derivative_bounds_hold():
    traj = _random(None, harmonics=5, seed=4)
    t = np.linspace(0, traj.period, 20001)
    for k in range(5):
        sampled = np.max(np.abs(traj.derivative(t, k) - (traj.center if k == 0 else 0.0)), axis=0)
        assert np.all(sampled <= traj.derivative_bound(k) * (1 + 1e-12))


def test_trajectory_file_round_trip_is_bit_exact(tmp_path):
    traj = _random(4, harmonics=7, dof=6, seed=9)
    limits = JointLimitSet.create(6, [(-3, 3)] * 6, [2.0] * 6, [4.0] * 6, jerk=[50.0] * 6)
    path = tmp_path / "t.json"
    save_trajectory(path, TrajectoryFile(traj, limits, 0.05, (), {"criterion": "cond"}))
    back = load_trajectory(path)
    assert np.array_equal(back.trajectory.a, traj.a) and np.array_equal(back.trajectory.b, traj.b)
    assert np.array_equal(back.trajectory.center, traj.center)
    assert back.trajectory.period == traj.period and back.trajectory.rest_order == 4
    t = np.linspace(0, 30, 777)
    assert np.array_equal(back.trajectory.derivative(t, 2), traj.derivative(t, 2))
    assert np.array_equal(back.limits.jerk, limits.jerk) and np.all(np.isinf(back.limits.torque))
    assert back.margin == 0.05
