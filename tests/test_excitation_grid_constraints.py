"""Vectorised grid constraints against a sample-by-sample evaluation, and the window screening."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robid.excitation.cartesian import CartesianLimit, point_positions_and_jacobians
from robid.excitation.constraints import QUANTITIES, JointLimitSet
from robid.excitation.fourier import FourierTrajectory, rest_nullspace
from robid.excitation.grid_constraints import GridConstraints, _soft_min
from robid.excitation.planar2r import Planar2R, planar_2r_model

PERIOD, H, G = 5.0, 4, 60
CENTER = np.array([0.4, -0.2])
LIMITS = JointLimitSet.create(2, [(-2.0, 2.5), (-2.0, 2.0)], [1.5, 1.6], [3.0, 3.5], jerk=[20, 20])


def _coefficients(seed=5, size=0.2):
    return np.random.default_rng(seed).standard_normal((2, 2 * H)) * size


def _per_sample_joint_rows(x: np.ndarray) -> np.ndarray:
    """The certified rows written out one sample at a time from the trajectory's own evaluation:
    (L - s q^(k)(t_i) - M_{k+2} h^2 / 8) / L, in the order quantity -> joint -> (upper, lower) -> sample."""
    traj = FourierTrajectory(PERIOD, CENTER, x[:, :H], x[:, H:])
    h = PERIOD / G
    rows = []
    for k, quantity in enumerate(QUANTITIES):
        delta = traj.derivative_bound(k + 2) * h**2 / 8.0
        for j in range(2):
            if k == 0:
                lo, hi = LIMITS.position[j]
                bounds = [(hi - CENTER[j], 1.0), (CENTER[j] - lo, -1.0)]
            else:
                value = LIMITS.symmetric(quantity)[j]
                bounds = [(value, 1.0), (value, -1.0)]
            for L, sign in bounds:
                for i in range(G):
                    x_i = traj.derivative(np.array([i * h]), k)[0, j] - (CENTER[j] if k == 0 else 0.0)
                    rows.append((L - sign * x_i - delta[j]) / L)
    return np.array(rows)


def test_vectorised_rows_equal_the_per_sample_evaluation():
    gc = GridConstraints(LIMITS, PERIOD, H, G, CENTER)
    x = _coefficients()
    g, jac = gc.evaluate(x)
    reference = _per_sample_joint_rows(x)
    assert g.shape == reference.shape == (gc.rows,)
    np.testing.assert_allclose(g, reference, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(gc.values(x), g)
    step = 1e-6
    for i in range(x.size):
        dx = np.zeros(x.size)
        dx[i] = step
        num = (_per_sample_joint_rows((x.ravel() + dx).reshape(x.shape))
               - _per_sample_joint_rows((x.ravel() - dx).reshape(x.shape))) / (2 * step)
        np.testing.assert_allclose(jac[:, i], num, atol=1e-7)


def test_cartesian_and_torque_rows_equal_the_per_sample_evaluation():
    model, robot = planar_2r_model(), Planar2R()
    limits = JointLimitSet.create(2, [(-2.0, 2.5), (-2.0, 2.0)], [1.5, 1.6], [3.0, 3.5], torque=[40.0, 20.0])
    floor = CartesianLimit.from_box_and_planes("tip", 1, [0, 0, 0], box_min=[-2, -0.95, -1], box_max=[2, 2, 1])
    gc = GridConstraints(limits, PERIOD, H, G, CENTER, [floor], model, robot.inverse_dynamics)
    x = _coefficients(7)
    g = gc.values(x)
    traj = FourierTrajectory(PERIOD, CENTER, x[:, :H], x[:, H:])
    t = np.arange(G) * PERIOD / G
    n_joint = gc._blocks[0].size * G
    n_cart = len(floor.offsets) * G
    travel = np.max(np.abs(limits.position), axis=1)
    from robid.excitation.cartesian import lever_arms

    delta = PERIOD / G / 2 * float(lever_arms(model, floor, travel) @ traj.derivative_bound(1))
    cart = []
    for n, d in zip(floor.normals, floor.offsets, strict=True):
        for ti in t:
            p, _ = point_positions_and_jacobians(model, traj.derivative(np.array([ti]), 0), floor)
            cart.append(float(p[0] @ n) - d - delta)
    np.testing.assert_allclose(g[n_joint : n_joint + n_cart], cart, atol=1e-12)
    torque = []
    for r in range(2):
        for sign in (1.0, -1.0):
            for ti in t:
                tau = robot.inverse_dynamics(*traj.evaluate(np.array([ti]), 2))[0, r]
                torque.append((limits.torque[r] - sign * tau) / limits.torque[r])
    np.testing.assert_allclose(g[n_joint + n_cart :], torque, atol=1e-12)


def test_windows_bound_the_samples_and_keep_the_limits():
    gc = GridConstraints(LIMITS, PERIOD, H, G, CENTER, softness=1e-3)
    null = rest_nullspace(H, 4)
    z = np.random.default_rng(2).standard_normal((2, null.shape[1])) * 0.3
    x = z @ null.T
    full = gc.values(x).reshape(-1, G)
    soft, jac = gc.evaluate_windows(x, 12, null)
    soft = soft.reshape(full.shape[0], 12)
    window_min = full.reshape(full.shape[0], 12, G // 12).min(axis=2)
    # a soft minimum never exceeds the window's minimum and is below it by at most tau log(samples)
    assert np.all(soft <= window_min + 1e-15)
    assert np.all(soft >= window_min - 1e-3 * math.log(G // 12) - 1e-15)
    # its Jacobian, in the rest-to-rest coordinates
    step = 1e-7
    for i in range(z.size):
        dz = np.zeros(z.size)
        dz[i] = step
        up = gc.evaluate_windows((z.ravel() + dz).reshape(z.shape) @ null.T, 12, null)[0]
        down = gc.evaluate_windows((z.ravel() - dz).reshape(z.shape) @ null.T, 12, null)[0]
        np.testing.assert_allclose(jac[:, i], (up - down) / (2 * step), atol=1e-6)


@pytest.mark.parametrize("samples, windows", [(60, 7), (61, 8), (5, 9)])
def test_soft_min_windows_cover_every_sample_once(samples, windows):
    g = np.random.default_rng(samples).standard_normal((3, samples))
    soft, weights = _soft_min(g, windows, 1e-9)
    size = weights.shape[2]
    padded = np.full((3, weights.shape[1] * size), np.inf)
    padded[:, :samples] = g
    np.testing.assert_allclose(soft, padded.reshape(3, -1, size).min(axis=2), atol=1e-8)
    np.testing.assert_allclose(weights.sum(axis=2), 1.0)
    assert weights.shape[1] * size >= samples > (weights.shape[1] - 1) * size


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.floats(0.01, 1.5))
def test_all_met_is_every_row_of_values_non_negative(seed, size):
    """The feasibility test that stops at the first violated block (joint rows, torque, Cartesian) answers what
    ``min(values) >= 0`` answers, on trajectories from well inside to far outside the limits."""
    model, robot = planar_2r_model(), Planar2R()
    limits = JointLimitSet.create(2, [(-2.0, 2.5), (-2.0, 2.0)], [1.5, 1.6], [3.0, 3.5], torque=[40.0, 20.0])
    floor = CartesianLimit.from_box_and_planes("tip", 1, [0, 0, 0], box_min=[-2, -0.95, -1], box_max=[2, 2, 1])
    gc = GridConstraints(limits, PERIOD, H, G, CENTER, [floor], model, robot.inverse_dynamics)
    x = _coefficients(seed, size)
    assert gc.all_met(x) == bool(np.min(gc.values(x), initial=0.0) >= 0.0)
    joint_only = GridConstraints(LIMITS, PERIOD, H, G, CENTER)
    assert joint_only.all_met(x) == bool(np.min(joint_only.values(x), initial=0.0) >= 0.0)
