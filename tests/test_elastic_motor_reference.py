"""Motor-side references of elastic-joint robots (robid.elastic.motor_reference).

References, none produced by the code under test:
* Lismonde 2020 two-mass benchmark (reference notes 004 section 6.2, AT1 and AT2): the closed-form flat
  feed-forward u = (m1 m2 / k) y'''' + (m1 + m2) y'' (eq. 2.17) with its +-16.8 steps, the damped deflection
  d delta' + k delta = m2 y'' solved by scipy, and a forward simulation of the plant written out here (scipy
  DOP853) driven by the feed-forward motor torque;
* the Do planar 2R (``do_2r_elastic``, with joint damping added): the link torque of the virtual robot's own numeric
  Newton-Euler (robid.simulation.rnea, which shares nothing with the generated code the module uses), the generated
  elastic-layout inverse dynamics (link rows 0, motor rows the motor torque), the time-domain solution against the
  per-harmonic one, and a forward simulation of the elastic plant on the numeric Newton-Euler (notes 004 AT3).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numpy.polynomial import chebyshev
from scipy.integrate import solve_ivp

import robid
from robid.elastic.motor_reference import SampledPath, motor_reference
from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.fourier_polynomial import FourierPolynomialTrajectory
from robid.model.loader import read_robot
from robid.simulation.rnea import RigidBodyDynamics

M1, M2, K = 1.0, 2.0, 100.0  # notes 004 AT1: motor mass, link mass, spring
TWO_MASS = f"""robid: 1
name: two-mass
gravity: [0, -9.81, 0]   # normal to the joint axis z: no gravity force on the masses
kinematics: dh
joints:
  - name: J1
    type: prismatic
    a: 0
    alpha: 0
    d: 0
    theta: 0
    link: {{mass: {M2}, com: [0, 0, 0], inertia: [0, 0, 0, 0, 0, 0]}}
    drive: {{gear_ratio: 1, rotor_inertia: {M1}}}
    elasticity: {{stiffness: {K}, damping: 0.0}}
"""
# 7th-order rest-to-rest polynomial 0 -> 1 in T = 1 s (AT1): C3 from and into standstill
SEPTIC = np.array([[0.0, 0.0, 0.0, 0.0, 35.0, -84.0, 70.0, -20.0]])


def septic() -> FourierPolynomialTrajectory:
    return FourierPolynomialTrajectory(1.0, np.zeros((1, 1)), np.zeros((1, 1)), SEPTIC)


def y(t, order: int) -> np.ndarray:
    """The polynomial's derivative in closed form, at rest outside [0, 1]."""
    c = np.polynomial.polynomial.polyder(SEPTIC[0], order) if order else SEPTIC[0]
    inside = np.polynomial.polynomial.polyval(np.clip(t, 0.0, 1.0), c)
    return np.where((t < 0.0) | (t > 1.0), 0.0 if order else np.where(t < 0, 0.0, 1.0), inside)


def with_damping(model, damping):
    joints = tuple(
        dataclasses.replace(j, elasticity=dataclasses.replace(j.elasticity, damping=float(d)))
        for j, d in zip(model.joints, damping, strict=True)
    )
    return dataclasses.replace(model, joints=joints)


@pytest.fixture(scope="module")
def two_mass(tmp_path_factory):
    path = tmp_path_factory.mktemp("robots") / "two_mass.yaml"
    path.write_text(TWO_MASS)
    return read_robot(path)


def lobatto(a: float, b: float, n: int) -> np.ndarray:
    return a + (b - a) * 0.5 * (1.0 - np.cos(np.pi * np.arange(n + 1) / n))


def simulate_two_mass(u, x0, span, damping: float) -> tuple:
    """m1 q1'' + k (q1 - q2) + d (q1' - q2') = u,  m2 q2'' - k (q1 - q2) - d (q1' - q2') = 0; q1 motor, q2 link."""

    def rhs(t, x):
        spring = K * (x[0] - x[2]) + damping * (x[1] - x[3])
        return [x[1], (u(t) - spring) / M1, x[3], spring / M2]

    return solve_ivp(rhs, span, x0, method="DOP853", rtol=1e-13, atol=1e-15, dense_output=True)


def track_piecewise(model, damping: float) -> float:
    """Run the plant on the reference from rest: the motion [0, 1] and the hold [1, 1.5] (the feed-forward is smooth
    on each; a Chebyshev interpolant of degree 80 of the module's samples drives the plant), max |link - y|."""
    worst, x0 = 0.0, None
    for a, b in ((0.0, 1.0), (1.0, 1.5)):
        nodes = lobatto(a, b, 80)
        nodes[0] += 1e-12 * (a > 0)  # t = 1 itself belongs to the motion (the torque steps there without damping)
        ref = motor_reference(model, septic(), t=nodes)
        u = chebyshev.Chebyshev.fit(nodes, ref.tau_motor[:, 0], 80, domain=[a, b])
        if x0 is None:
            x0 = [ref.theta[0, 0], ref.thetad[0, 0], ref.q[0, 0], ref.qd[0, 0]]
        sol = simulate_two_mass(u, x0, (a, b), damping)
        dense = np.linspace(a, b, 2001)
        worst = max(worst, float(np.max(np.abs(sol.sol(dense)[2] - y(dense, 0)))))
        x0 = sol.y[:, -1]
    return worst


# ---- 1. Lismonde two-mass benchmark -------------------------------------------------------------------------------
def test_at1_flat_two_mass_feedforward_steps_and_tracking(two_mass):
    t = np.concatenate([[-0.1, -1e-9], lobatto(0.0, 1.0, 40), [1.0 + 1e-9, 1.2]])
    ref = motor_reference(two_mass, septic(), t=t)
    assert ref.method == "time-domain" and ref.continuity_order == 3
    flat = (M1 * M2 / K) * y(t, 4) + (M1 + M2) * y(t, 2)  # eq. 2.17
    np.testing.assert_allclose(ref.tau_motor[:, 0], flat, rtol=0, atol=1e-11 * np.max(np.abs(flat)))
    np.testing.assert_allclose(ref.theta[:, 0], y(t, 0) + M2 / K * y(t, 2), rtol=0, atol=1e-14)
    # the C3 polynomial: the torque steps by (m1 m2 / k) 840 / T^4 = 16.8 at both ends, and the caller is told
    assert ref.tau_motor[1, 0] == 0.0 and ref.tau_motor[-2, 0] == 0.0
    assert ref.tau_motor[2, 0] == pytest.approx(16.8, abs=1e-10)
    assert ref.tau_motor[-3, 0] == pytest.approx(-16.8, abs=1e-10)
    assert len(ref.warnings) == 1 and "C3" in ref.warnings[0] and "16.8" in ref.warnings[0]
    assert track_piecewise(two_mass, 0.0) < 1e-8  # AT1; measured 3.6e-13


def test_at2_damped_two_mass_deflection_and_tracking(two_mass):
    d = 2.0
    model = with_damping(two_mass, [d])
    nodes = lobatto(0.0, 1.0, 60)
    ref = motor_reference(model, septic(), t=nodes)
    assert ref.method == "time-domain" and ref.warnings == () and ref.time_constants == (d / K,)
    # notes 004: delta = theta - q solves d delta' + k delta = m2 y'' from rest; u = m1 (y'' + delta'') + m2 y''
    sol = solve_ivp(
        lambda t, x: [(M2 * y(t, 2) - K * x[0]) / d],
        (0, 1),
        [0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-16,
        dense_output=True,
    )
    delta = sol.sol(nodes)[0]
    delta1 = (M2 * y(nodes, 2) - K * delta) / d
    delta2 = (M2 * y(nodes, 3) - K * delta1) / d
    np.testing.assert_allclose(ref.theta[:, 0] - ref.q[:, 0], delta, rtol=0, atol=1e-13)
    # tau_L = m2 y'' is quintic, so the Hermite interpolant is exact and the step only tests the exponential weights
    # (K h / D_s = 2.5 > 1: the incomplete-gamma branch)
    coarse = motor_reference(model, septic(), t=nodes, max_step=0.05)
    np.testing.assert_allclose(coarse.theta[:, 0] - coarse.q[:, 0], delta, rtol=0, atol=1e-13)
    u = M1 * (y(nodes, 2) + delta2) + M2 * y(nodes, 2)
    np.testing.assert_allclose(ref.tau_motor[:, 0], u, rtol=0, atol=1e-10)
    assert track_piecewise(model, d) < 1e-8  # AT2; measured 2.5e-13


def test_after_the_motion_the_damped_motor_settles_while_the_link_holds(two_mass):
    model = with_damping(two_mass, [2.0])
    ref = motor_reference(model, septic())  # default grid: the motion plus 20 time constants
    assert ref.t[0] == 0.0 and ref.t[-1] == pytest.approx(1.0 + 20 * 0.02)
    after = ref.t > 1.0
    assert np.all(ref.q[after, 0] == 1.0) and np.all(ref.qd[after, 0] == 0.0)
    assert abs(ref.theta[-1, 0] - 1.0) < 1e-8 * abs(ref.theta[after, 0][0] - 1.0) + 1e-15
    assert np.abs(ref.tau_motor[after, 0] - M1 * ref.thetadd[after, 0]).max() < 1e-12  # spring + link at rest


# ---- 2. a built-in elastic robot ----------------------------------------------------------------------------------
DO_DAMPING = (30.0, 20.0)  # N m s/rad on q - theta (the file has none): time constants 15 and 12.5 ms


@pytest.fixture(scope="module")
def do_2r():
    return read_robot("do_2r_elastic")


def do_trajectory(rest: bool) -> FourierTrajectory:
    rng = np.random.default_rng(7)
    a, b = rng.normal(0.0, 0.4, (2, 5)), rng.normal(0.0, 0.4, (2, 5))
    traj = FourierTrajectory(2.0, [0.3, 0.8], a, b, rest_order=4 if rest else None)
    return traj.project_rest()


def spring_data(model):
    return (
        np.array([getattr(j.elasticity, f) for j in model.joints]) for f in ("stiffness", "damping", "link_viscous")
    )


def test_per_harmonic_solution_satisfies_both_equations_to_rounding(do_2r):
    model = with_damping(do_2r, DO_DAMPING)
    traj = do_trajectory(rest=False)
    ref = motor_reference(model, traj, t=np.linspace(0.0, 4.0, 801))
    assert ref.method == "harmonic" and ref.continuity_order == np.inf and ref.warnings == ()
    k, d, dl = spring_data(model)
    qdd = traj.derivative(ref.t, 2)
    tau = RigidBodyDynamics(model).inverse_dynamics(ref.q, ref.qd, qdd) + dl * ref.qd
    link = tau + k * (ref.q - ref.theta) + d * (ref.qd - ref.thetad)
    assert np.abs(link).max() < 1e-12 * np.abs(tau).max()
    assert np.abs(ref.deflection).max() > 1e-2  # not trivially satisfied
    # the generated elastic-layout model: link rows vanish, motor rows are the motor torque
    elastic = robid.load_robot(model, terms=("rigid", "rotor", "viscous", "stiffness", "damping", "link_viscous"))
    rows = elastic.inverse_dynamics(ref.q, ref.qd, qdd, motor=(ref.theta, ref.thetad, ref.thetadd))
    assert np.abs(rows[:, :2]).max() < 1e-11 * np.abs(tau).max()
    np.testing.assert_allclose(rows[:, 2:], ref.tau_motor, rtol=0, atol=1e-11 * np.abs(ref.tau_motor).max())


def test_without_damping_theta_is_q_plus_inverse_stiffness_times_link_torque(do_2r):
    for traj in (do_trajectory(rest=False), do_trajectory(rest=True)):
        ref = motor_reference(do_2r, traj, t=np.linspace(-0.5, 2.5, 601), periods=1)
        k, _, dl = spring_data(do_2r)
        q = [traj.derivative(ref.t, i) for i in range(3)]
        if traj.rest_to_rest:  # at rest outside [0, T]
            outside = (ref.t < 0) | (ref.t > 2.0)
            q[0][outside] = traj.center
            q[1][outside] = q[2][outside] = 0.0
        tau = RigidBodyDynamics(do_2r).inverse_dynamics(*q) + dl * q[1]
        np.testing.assert_allclose(ref.theta, q[0] + tau / k, rtol=0, atol=1e-14 * np.abs(tau).max())
        assert ref.time_constants == (0.0, 0.0)
    # at standstill the motor sits K^-1 g(q0) away from the link (notes 004 AT3)
    q0 = np.array([traj.center])
    np.testing.assert_allclose(ref.theta[0], q0[0] + RigidBodyDynamics(do_2r).gravity_torque(q0)[0] / k, atol=1e-14)


def test_from_rest_harmonic_solution_equals_the_time_domain_integration(do_2r):
    """A rest-to-rest series run from standstill: per-harmonic solution plus the decaying homogeneous term, against
    the exponential integration of the same path given as samples (notes 004 AT3, without waiting for decay)."""
    model = with_damping(do_2r, DO_DAMPING)
    traj = do_trajectory(rest=True)
    t = np.arange(2001) * 1e-3
    harmonic = motor_reference(model, traj, t=t)
    sampled = motor_reference(model, SampledPath(t, tuple(traj.derivative(t, k) for k in range(5))))
    assert harmonic.method == "harmonic-from-rest" and sampled.method == "samples"
    for name, atol in (("theta", 1e-13), ("thetad", 1e-12), ("thetadd", 1e-10), ("tau_motor", 1e-10)):
        np.testing.assert_allclose(getattr(harmonic, name), getattr(sampled, name), rtol=0, atol=atol, err_msg=name)
    # the motor starts at rest on the standstill deflection
    np.testing.assert_allclose(harmonic.thetad[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(harmonic.thetadd[0], 0.0, atol=1e-9)


def trigonometric(samples: np.ndarray, period: float):
    """Periodic interpolant of uniform samples over one period (spectrum decayed to rounding)."""
    n = samples.shape[0]
    c = np.fft.rfft(samples, axis=0) / n
    c[1:] *= 2.0
    h = np.arange(c.shape[0] - 1)  # drop the Nyquist bin
    return lambda t: np.real(np.exp(2j * np.pi * h * t / period) @ c[:-1])


def test_feedforward_drives_the_elastic_2r_plant_along_the_link_path(do_2r):
    model = with_damping(do_2r, DO_DAMPING)
    traj = do_trajectory(rest=False)
    grid = np.arange(512) * (2.0 / 512)
    ref = motor_reference(model, traj, t=grid)
    u = trigonometric(ref.tau_motor, 2.0)
    rnea = RigidBodyDynamics(model)
    k, d, dl = spring_data(model)
    b = np.array([j.drive.reflected_inertia for j in model.joints])
    fv = np.array([j.friction.viscous for j in model.joints])

    def rhs(t, x):
        q, qd, th, thd = x[:2], x[2:4], x[4:6], x[6:]
        mass, bias = rnea.mass_matrix_and_bias(q, qd)
        spring = k * (q - th) + d * (qd - thd)
        qdd = np.linalg.solve(mass, -(bias + dl * qd + spring))
        return np.concatenate([qd, qdd, thd, (u(t) - fv * thd + spring) / b])

    x0 = np.concatenate([ref.q[0], ref.qd[0], ref.theta[0], ref.thetad[0]])
    sol = solve_ivp(rhs, (0.0, 2.0), x0, method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    check = np.linspace(0.0, 2.0, 401)
    error = np.abs(sol.sol(check)[:2].T - traj.derivative(check, 0)).max()
    assert error < 1e-8  # measured 1.3e-13


# ---- 3. bad input -------------------------------------------------------------------------------------------------
def test_a_sampled_path_that_is_not_c4_is_refused(two_mass):
    t = np.linspace(-0.2, 0.5, 701)  # across the start: q'''' jumps from 0 to 840 at t = 0
    samples = SampledPath(t, tuple(y(t, k)[:, None] for k in range(5)))
    with pytest.raises(RobidInputError, match=r"samples 200-201 \(t = -0.001..0 s\).*q''''.*C4"):
        motor_reference(two_mass, samples)
    inside = SampledPath(t[200:], tuple(y(t[200:], k)[:, None] for k in range(5)))  # the same path from t = 0: C4
    assert motor_reference(two_mass, inside).method == "samples"


def test_missing_derivatives_elasticity_or_smoothness_are_refused(two_mass):
    t = np.linspace(0.0, 1.0, 101)
    with pytest.raises(RobidInputError, match=r"q, q', q'' given; .* needs q, q', q'', q''' and q''''"):
        motor_reference(two_mass, SampledPath(t, tuple(y(t, k)[:, None] for k in range(3))))
    traj = do_trajectory(rest=False)
    with pytest.raises(RobidInputError, match="no elastic joint"):
        motor_reference(read_robot("puma560"), FourierTrajectory(2.0, np.zeros(6), np.zeros((6, 2)), np.zeros((6, 2))))
    with pytest.raises(RobidInputError, match="2 joints, the robot 'two-mass' has 1"):
        motor_reference(two_mass, traj)
    quintic = FourierPolynomialTrajectory(1.0, np.zeros((1, 1)), np.zeros((1, 1)), [[0, 0, 0, 10.0, -15.0, 6.0]])
    with pytest.raises(RobidInputError, match="C2 .* undamped elastic joints need C4 .* motor velocity would jump"):
        motor_reference(two_mass, quintic)
