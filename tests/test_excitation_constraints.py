"""Continuous-time limit checks: inter-sample bounds, Cartesian points, torques, optimiser constraint rows."""

import math

import numpy as np

from robid.excitation.cartesian import CartesianLimit, chain_frames, point_positions_and_jacobians
from robid.excitation.constraints import JointLimitSet, check_trajectory
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.grid_constraints import GridConstraints
from robid.excitation.planar2r import Planar2R, planar_2r_model


def _single_harmonic(amplitude, harmonic=5, harmonics=5, period=10.0, order=0):
    """q = amplitude * sin(l w t): a = amplitude * l w (velocity amplitude)."""
    a = np.zeros((1, harmonics))
    a[0, harmonic - 1] = amplitude * harmonic * 2 * math.pi / period
    return FourierTrajectory(period, [0.0], a, np.zeros((1, harmonics)))


def test_coarse_grid_misses_a_violation_that_the_check_catches():
    # q = sin(pi t) peaks at t = 0.5 s + k; a 0.2 s grid only sees sin(0.4 pi) = 0.951 there
    traj = _single_harmonic(1.0)
    limits = JointLimitSet.create(1, [(-0.97, 0.97)], [10.0], [100.0])
    coarse = np.arange(0, traj.period, 0.2)
    assert np.max(np.abs(traj.derivative(coarse, 0))) < 0.96  # the coarse check passes
    report = check_trajectory(traj, limits)
    assert not report.ok
    bad = report.violations()
    assert [b.quantity for b in bad] == ["position"]
    assert bad[0].value > 0.999  # the true peak was found


def test_acceleration_violation_between_samples_is_caught():
    # |qdd| peaks at pi^2 = 9.87 between the 0.2 s samples (coarse max 9.39)
    traj = _single_harmonic(1.0)
    limits = JointLimitSet.create(1, [(-2, 2)], [10.0], [9.6])
    coarse = np.arange(0, traj.period, 0.2)
    assert np.max(np.abs(traj.derivative(coarse, 2))) < 9.6
    report = check_trajectory(traj, limits)
    assert [b.quantity for b in report.violations()] == ["acceleration"]


def test_tight_but_feasible_limit_is_certified_by_refinement():
    traj = _single_harmonic(1.0)
    limits = JointLimitSet.create(1, [(-1.0000005, 1.0000005)], [math.pi * 1.000001], [math.pi**2 * 1.000001])
    report = check_trajectory(traj, limits, initial_points=64)
    assert report.ok
    assert report.grid_points > 64  # it had to refine to certify
    assert all(i.certified and i.slack >= 0 for i in report.items)


def test_vectorised_kinematics_match_the_model():
    model = planar_2r_model()
    rng = np.random.default_rng(0)
    q = rng.uniform(-3, 3, (5, 2))
    poses, _, _ = chain_frames(model, q)
    for i in range(5):
        ref = model.forward_kinematics(q[i])
        for j in range(2):
            np.testing.assert_allclose(poses[i, j], ref[j], atol=1e-14)
    lim = CartesianLimit.from_box_and_planes("tip", 1, [0.1, 0.05, 0.0], box_min=[-1, -1, -1])
    p, jac = point_positions_and_jacobians(model, q, lim)
    h = 1e-7
    for j in range(2):
        dq = np.zeros(2)
        dq[j] = h
        p1, _ = point_positions_and_jacobians(model, q + dq, lim)
        p0, _ = point_positions_and_jacobians(model, q - dq, lim)
        np.testing.assert_allclose((p1 - p0) / (2 * h), jac[:, :, j], atol=1e-7)


def test_cartesian_floor_is_checked_in_continuous_time():
    model = planar_2r_model()  # arm in the x-y plane, gravity along -y: the "floor" is y >= d
    rng = np.random.default_rng(2)
    traj = FourierTrajectory(
        8.0, [math.pi / 2, 0.0], rng.standard_normal((2, 4)) * 0.3, rng.standard_normal((2, 4)) * 0.3
    )
    limits = JointLimitSet.create(2, [(-4, 4)] * 2, [10] * 2, [50] * 2)
    tip = lambda floor: CartesianLimit.from_box_and_planes(  # noqa: E731
        "tip", 1, [0, 0, 0], planes=[(np.array([0.0, 1.0, 0.0]), floor)]
    )
    t = np.linspace(0, 8, 20001)
    q = traj.derivative(t, 0)
    y = 0.5 * np.sin(q[:, 0]) + 0.4 * np.sin(q[:, 0] + q[:, 1])
    lowest = float(y.min())
    assert check_trajectory(traj, limits, [tip(lowest - 1e-3)], model).ok
    bad = check_trajectory(traj, limits, [tip(lowest + 1e-3)], model)
    assert not bad.ok and bad.violations()[0].quantity.startswith("cartesian")


def test_torque_limits_use_the_nominal_model():
    robot = Planar2R()
    traj = FourierTrajectory(6.0, [0.3, 0.2], [[0.5, 0.2, 0.1], [0.3, 0.2, 0.1]], [[0.1, 0.1, 0.0], [0.2, 0.0, 0.1]])
    t = np.linspace(0, 6, 5000)
    tau = robot.inverse_dynamics(*traj.evaluate(t, 2))
    peak = np.abs(tau).max(axis=0)
    ok = JointLimitSet.create(2, [(-4, 4)] * 2, [10] * 2, [50] * 2, torque=peak * 1.01)
    bad = JointLimitSet.create(2, [(-4, 4)] * 2, [10] * 2, [50] * 2, torque=peak * [0.9, 1.01])
    assert check_trajectory(traj, ok, torque_fn=robot.inverse_dynamics).ok
    report = check_trajectory(traj, bad, torque_fn=robot.inverse_dynamics)
    assert [(v.quantity, v.name) for v in report.violations()] == [("torque", "q1")]


def test_grid_constraint_rows_bound_the_continuous_motion_and_have_exact_jacobians():
    model = planar_2r_model()
    robot = Planar2R()
    limits = JointLimitSet.create(
        2, [(-2.0, 2.5), (-2.0, 2.0)], [1.5, 1.6], [3.0, 3.5], jerk=[20, 20], torque=[40.0, 20.0]
    )
    floor = CartesianLimit.from_box_and_planes("tip", 1, [0, 0, 0], box_min=[-2, -0.95, -1], box_max=[2, 2, 1])
    gc = GridConstraints(limits, 5.0, 4, 60, [0.4, -0.2], [floor], model, robot.inverse_dynamics)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8)) * 0.2
    g, jac = gc.evaluate(x)
    h = 1e-6
    num = np.zeros_like(jac)
    for i in range(x.size):
        dx = np.zeros(x.size)
        dx[i] = h
        num[:, i] = (
            gc.evaluate((x.ravel() + dx).reshape(2, 8))[0] - gc.evaluate((x.ravel() - dx).reshape(2, 8))[0]
        ) / (2 * h)
    # torque rows use forward-difference channel derivatives: looser tolerance there
    np.testing.assert_allclose(jac, num, atol=2e-4)
    # rows >= 0 imply the continuous-time check passes (with the same limits)
    scale = 0.0
    for s in np.linspace(0.1, 3.0, 30):
        if np.min(gc.evaluate(s * x)[0]) >= 0:
            scale = s
    traj = FourierTrajectory(5.0, [0.4, -0.2], scale * x[:, :4], scale * x[:, 4:])
    assert scale > 0 and check_trajectory(traj, limits, [floor], model).ok
