"""The designer on a stand-in 2R regressor (closed form, independent of robid's symbolic stage)."""

import math

import numpy as np
import pytest

from robid.excitation.constraints import JointLimitSet, check_trajectory
from robid.excitation.criteria import condition_number, evaluate_criteria, log_det, objective_and_gradient, stack
from robid.excitation.fourier import FourierTrajectory, rest_nullspace
from robid.excitation.optimiser import DesignProblem, _Evaluator, design_excitation
from robid.excitation.planar2r import NOMINAL, Planar2R, base_regressor, planar_2r_model

LIMITS = JointLimitSet.create(2, [(-2.5, 2.5), (-2.0, 2.0)], [1.5, 2.0], [3.0, 4.0])
REG = Planar2R().base_parameters().regressor


def _problem(**kw):
    base = dict(
        period=6.0,
        harmonics=5,
        center=[0.2, 0.4],
        limits=LIMITS,
        grid_points=120,
        starts=2,
        seed=3,
        max_iterations=60,
        joint_names=("J1", "J2"),
    )
    base.update(kw)
    return DesignProblem(**base)


def test_standin_regressor_matches_lagrangian_energy_balance():
    # d/dt (T + V) = sum tau_i qd_i without friction: check on a smooth motion, independent of the regressor form
    traj = FourierTrajectory(4.0, [0.3, -0.5], [[0.8, 0.3], [0.5, -0.6]], [[0.2, -0.1], [0.4, 0.3]])
    t = np.linspace(0, 4, 4001)
    q, qd, qdd = traj.evaluate(t, 2)
    p = NOMINAL.copy()
    p[6:] = 0.0
    tau = base_regressor(q, qd, qdd) @ p
    zz1r, mx1r, my1, zz2, mx2, my2 = p[:6]
    l1, g = 0.5, 9.81
    w = qd[:, 0] + qd[:, 1]
    kin = (
        0.5 * zz1r * qd[:, 0] ** 2
        + 0.5 * zz2 * w**2
        + l1 * qd[:, 0] * w * (mx2 * np.cos(q[:, 1]) - my2 * np.sin(q[:, 1]))
    )
    q12 = q[:, 0] + q[:, 1]
    pot = g * (mx1r * np.sin(q[:, 0]) + my1 * np.cos(q[:, 0]) + mx2 * np.sin(q12) + my2 * np.cos(q12))
    power = np.gradient(kin + pot, t)
    np.testing.assert_allclose(power[5:-5], np.sum(tau * qd, axis=1)[5:-5], atol=2e-4)


def test_criteria_definitions():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((200, 5)) * [1, 10, 100, 0.1, 1]
    s = np.linalg.svd(w, compute_uv=False)
    assert math.isclose(condition_number(w, False), s[0] / s[-1], rel_tol=1e-12)
    ws = w / np.linalg.norm(w, axis=0)
    s2 = np.linalg.svd(ws, compute_uv=False)
    assert math.isclose(condition_number(w, True), s2[0] / s2[-1], rel_tol=1e-12)
    assert math.isclose(log_det(w), np.log(np.linalg.det(w.T @ w / 200)), rel_tol=1e-10)
    assert math.isclose(objective_and_gradient(w, "cond_raw")[0], math.log(s[0] / s[-1]), rel_tol=1e-9)
    assert math.isclose(
        objective_and_gradient(w, "cond_both")[0], math.log(s[0] / s[-1] * s2[0] / s2[-1]), rel_tol=1e-9
    )
    for crit in ("cond", "logdet", "cond_raw", "cond_both"):
        f, g = objective_and_gradient(w, crit)
        h = 1e-4  # kappa(W) ~ 900 here: smaller steps drown in rounding
        for idx in [(0, 0), (17, 3), (150, 2)]:
            dw = np.zeros_like(w)
            dw[idx] = h
            num = (objective_and_gradient(w + dw, crit)[0] - objective_and_gradient(w - dw, crit)[0]) / (2 * h)
            assert math.isclose(num, g[idx], rel_tol=1e-4, abs_tol=1e-9), (crit, idx)


@pytest.mark.parametrize("criterion", ["cond", "logdet"])
def test_objective_gradient_matches_finite_differences(criterion):
    # periodic design: no sample sits at rest, so the Coulomb sign() columns are differentiable everywhere
    ev = _Evaluator(_problem(rest_order=None, criterion=criterion), REG)
    z = np.random.default_rng(1).standard_normal(ev.p.dof * ev.r) * 0.3
    grad = ev.gradient(z)
    h = 1e-6
    num = np.array([(ev.objective(z + h * e) - ev.objective(z - h * e)) / (2 * h) for e in np.eye(z.size)])
    assert np.max(np.abs(grad - num)) < 1e-5 * np.max(np.abs(num))


def test_designer_improves_the_criterion_and_respects_limits():
    problem = _problem()
    result = design_excitation(problem, REG)
    # reference: the random feasible starting points the optimiser begins from (same seed)
    ev = _Evaluator(problem, REG)
    from robid.excitation.optimiser import initial_points

    starts = [math.exp(ev.objective(z)) for z in initial_points(problem, ev)]
    assert result.criteria.cond < 0.8 * min(starts)
    assert result.criteria.rank == 10
    assert result.check.ok
    traj = result.trajectory
    assert traj.rest_to_rest and traj.continuity_order() >= 4
    # independent re-sampling at 1 kHz over two periods: every hard limit holds, with the margin to spare
    t = np.arange(0, 2 * traj.period, 1e-3)
    q, qd, qdd = traj.evaluate(t, 2)
    margin = LIMITS.with_margin(problem.margin)
    assert np.all(q >= margin.position[:, 0]) and np.all(q <= margin.position[:, 1])
    assert np.all(np.abs(qd) <= margin.velocity) and np.all(np.abs(qdd) <= margin.acceleration)
    # the reported value is the criterion of the returned trajectory
    again = evaluate_criteria(traj, REG, problem.grid_points)
    assert again.cond == result.criteria.cond
    # log-det is reported too and is a finite number
    assert math.isfinite(result.criteria.logdet) and result.criteria.cond_raw >= 1.0


def test_design_is_deterministic_for_a_seed():
    a = design_excitation(_problem(starts=1, max_iterations=25), REG)
    b = design_excitation(_problem(starts=1, max_iterations=25), REG)
    c = design_excitation(_problem(starts=1, max_iterations=25, seed=4), REG)
    assert np.array_equal(a.trajectory.a, b.trajectory.a) and np.array_equal(a.trajectory.b, b.trajectory.b)
    assert a.criteria.cond == b.criteria.cond
    assert not np.array_equal(a.trajectory.a, c.trajectory.a)


def test_logdet_design_and_periodic_variant():
    result = design_excitation(_problem(criterion="logdet", rest_order=None, starts=1, max_iterations=40), REG)
    assert result.check.ok and not result.trajectory.rest_to_rest
    problem = _problem(criterion="logdet", rest_order=None, starts=1)
    start = _Evaluator(problem, REG)
    from robid.excitation.optimiser import initial_points

    z0 = initial_points(problem, start)[0]
    assert result.criteria.logdet > -start.objective(z0)


def test_cartesian_and_torque_limits_in_the_design():
    from robid.excitation.cartesian import CartesianLimit

    model = planar_2r_model()
    robot = Planar2R()
    floor = CartesianLimit.from_box_and_planes("tip", 1, [0, 0, 0], planes=[(np.array([0.0, 1.0, 0.0]), 0.25)])
    limits = JointLimitSet.create(2, [(-2.5, 2.5), (-2.0, 2.0)], [1.5, 2.0], [3.0, 4.0], torque=[60.0, 12.0])
    problem = _problem(
        center=[1.2, 0.3],
        limits=limits,
        cartesian=(floor,),
        model=model,
        torque_fn=robot.inverse_dynamics,
        starts=1,
        max_iterations=30,
    )
    result = design_excitation(problem, REG)
    assert result.check.ok
    t = np.linspace(0, problem.period, 20001)
    q, qd, qdd = result.trajectory.evaluate(t, 2)
    y = 0.5 * np.sin(q[:, 0]) + 0.4 * np.sin(q[:, 0] + q[:, 1])
    assert y.min() >= 0.25
    tau = robot.inverse_dynamics(q, qd, qdd)
    assert np.all(np.abs(tau) <= [60.0, 12.0])
    assert check_trajectory(result.trajectory, limits, (floor,), model, robot.inverse_dynamics).ok


def test_rest_nullspace_keeps_iterates_at_rest():
    ev = _Evaluator(_problem(), REG)
    z = np.random.default_rng(0).standard_normal(ev.p.dof * ev.r)
    x = ev.coefficients(z)
    n = rest_nullspace(5, 4)
    np.testing.assert_allclose(x @ n @ n.T, x, atol=1e-12)


def test_stack_layout():
    w3 = np.arange(24.0).reshape(2, 3, 4)
    assert stack(w3).shape == (6, 4) and np.array_equal(stack(w3)[3], w3[1, 0])
