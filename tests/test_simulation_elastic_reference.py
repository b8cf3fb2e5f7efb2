"""The virtual robot's motor-side reference on damped elastic joints (robid.simulation.deflection, used by the
feed-forward table of robid.simulation.plant).

References, none produced by the code under test:
* the quasi-static reference it replaces, delta = -tau_L / K with the rates of a periodic spline of tau_L (written
  out here, ``quasi_static_deflection``): exact without damping only;
* the deflection equation D delta' + K delta = -tau_L from standstill, integrated by scipy (DOP853) with tau_L from
  robid's generated inverse dynamics (not the simulator's Newton-Euler);
* robid.elastic.motor_reference (generated dynamics, its own per-harmonic solve and standstill transient).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

import robid
import robid.simulation.feedforward as feedforward_module
from robid.elastic.motor_reference import motor_reference
from robid.excitation.fourier import FourierTrajectory
from robid.model.loader import builtin_robot_path, read_robot
from robid.simulation import ControllerSettings, Plant, ReferenceMotion, SensorSettings, simulate

QUIET = SensorSettings(encoder_counts=None, link_encoder_counts=None)  # noise-free, unquantised
FULL = ControllerSettings(feedforward="full")
DAMPING = (8.0, 6.4)  # N m s/rad on the Do 2R (K = 2000, 1600): D / K = 4 ms on both joints
HOME = np.radians([0.0, -90.0, 90.0, 0.0, 45.0, 0.0])  # kr_heavy: upper arm vertical, forearm horizontal


def fourier(center, scale, period, harmonics=4, seed=0, rest_order=None) -> FourierTrajectory:
    rng = np.random.default_rng(seed)
    dof = len(center)
    a = rng.normal(scale=scale, size=(dof, harmonics))
    b = rng.normal(scale=scale, size=(dof, harmonics))
    return FourierTrajectory(period, np.asarray(center, float), a, b, rest_order).project_rest()


@pytest.fixture(scope="module")
def damped_2r(tmp_path_factory) -> Path:
    """The built-in Do 2R with joint damping D on theta' - q' (the built-in has none)."""
    doc = yaml.safe_load(builtin_robot_path("do_2r_elastic").read_text())
    for joint, d in zip(doc["joints"], DAMPING, strict=True):
        joint["elasticity"]["damping"] = d
    path = tmp_path_factory.mktemp("robots") / "do_2r_damped.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def quasi_static_deflection(torque, period, samples, stiffness, damping):
    """The reference before the per-harmonic solve: delta = -tau_L / K, delta' and delta'' from a periodic cubic
    spline of tau_L on the table grid (exact only for D = 0)."""
    t = np.linspace(0.0, period, samples + 1)
    tau = torque(t)
    tau[-1] = tau[0]
    spline = CubicSpline(t, tau, bc_type="periodic")
    return [-spline(t, k) / stiffness for k in range(3)]


def rms_error(result, joints=slice(None)) -> float:
    """RMS over the samples and the given joints of the link tracking error q - q_ref, rad."""
    return float(np.sqrt(np.mean((result.q - result.q_ref)[:, joints] ** 2)))


def test_damped_do_2r_tracks_its_reference_far_better_than_with_tau_over_k(damped_2r, monkeypatch):
    """Full feed-forward, noise-free sensors, two periods of a periodic 4-harmonic motion (|qd| up to 0.9 rad/s):
    the exact reference leaves the integrator's error (measured 1.3e-7 rad RMS on J1, as with D = 0), the quasi-static
    one the damper's torque D tau_L' / K (2.7e-4 rad RMS on J1)."""
    traj = fourier([0.3, 0.8], 0.15, period=3.0, seed=3)
    new = simulate(damped_2r, traj, periods=2, sensors=QUIET, controller=FULL)
    monkeypatch.setattr(feedforward_module, "periodic_deflection", quasi_static_deflection)
    old = simulate(damped_2r, traj, periods=2, sensors=QUIET, controller=FULL)
    assert rms_error(new) < 5e-7
    assert rms_error(old) > 1e-4
    assert rms_error(old) > 100 * rms_error(new)


def test_kr_heavy_elastic_axes_track_better_with_the_exact_reference(monkeypatch):
    """kr_heavy (A1-A3 elastic, D / K ~ 0.7 ms), full feed-forward: the damper error was already small; the exact
    reference removes it down to the level of the rigid axes' Coulomb reversals (measured 4e-9 against 1.1e-7 rad
    RMS over A1-A3)."""
    traj = fourier(HOME, 0.05, period=5.0, harmonics=3, seed=5, rest_order=4)
    new = simulate("kr_heavy", traj, periods=1, sensors=QUIET, controller=FULL)
    monkeypatch.setattr(feedforward_module, "periodic_deflection", quasi_static_deflection)
    old = simulate("kr_heavy", traj, periods=1, sensors=QUIET, controller=FULL)
    elastic = slice(0, 3)
    assert rms_error(new, elastic) < 2e-8
    assert rms_error(old, elastic) > 10 * rms_error(new, elastic)


def link_torque_function(path):
    """tau_L(q, qd, qdd) = rigid bodies (generated code) + link-side viscous friction, (N, dof)."""
    generated = robid.load_robot(path, terms=("rigid",))
    link_viscous = np.array([j.elasticity.link_viscous for j in read_robot(path).joints])
    return lambda q, qd, qdd: generated.inverse_dynamics(q, qd, qdd) + link_viscous * qd


def test_reference_solves_the_deflection_equation_from_standstill(damped_2r):
    """A rest-to-rest motion of rest order 2 (the periodic solution starts 5e-5 rad off the standstill deflection):
    theta_ref, thetad_ref of the table are q - delta, q' - delta' with delta integrated by scipy from standstill,
    before, during and after the motion (the motors relax while the links hold); the feed-forward torque is
    robid.elastic.motor_reference's; the integrator's scalar path gives the vectorised path's values."""
    model = read_robot(damped_2r)
    k = np.array([j.elasticity.stiffness for j in model.joints])
    d = np.array(DAMPING)
    traj = fourier([0.3, 0.8], 0.15, period=3.0, seed=3, rest_order=2)
    end = traj.period
    plant = Plant(model, ReferenceMotion(traj, 1), None, None, -0.1, end + 0.3)
    assert np.abs(plant.table.transient.offset).max() > 1e-5  # the transient is not negligible here
    tau_link = link_torque_function(damped_2r)

    def path(t, order):
        t = np.atleast_1d(t)
        out = traj.derivative(t, order)
        out[(t < 0.0) | (t > end)] = traj.center if order == 0 else 0.0
        return out

    def tau(t):
        return tau_link(*(path(t, i) for i in range(3)))

    rest = -tau(0.0)[0] / k
    # tau_L on [0, end] by a spline on 0.1 ms (exact to ~1e-15 relative; tau_L' jumps at the ends of a rest order 2
    # motion, so the spline stops there), constant after it (the links hold the centre)
    fine = np.linspace(0.0, end, 30001)
    tau_fine = CubicSpline(fine, tau(fine))
    sol = solve_ivp(
        lambda t, x: -(k * x + tau_fine(min(t, end))) / d,
        (0.0, end + 0.3),
        rest,
        "DOP853",
        rtol=1e-12,
        atol=1e-15,
        dense_output=True,
    )
    t = np.sort(np.random.default_rng(0).uniform(-0.1, end + 0.3, 800))
    delta = np.where(t[:, None] < 0.0, rest, sol.sol(np.clip(t, 0.0, None)).T)
    delta_rate = -(k * delta + tau(t)) / d
    q, qd, theta, thetad, tau_ff = plant.table(t)
    np.testing.assert_allclose(theta, path(t, 0) - delta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(thetad, path(t, 1) - delta_rate, rtol=0, atol=5e-9)
    ref = motor_reference(model, traj, t=t, periods=1, friction=False)
    np.testing.assert_allclose(tau_ff, ref.tau_motor, rtol=0, atol=1e-9 * np.abs(ref.tau_motor).max())
    for s in (-0.05, 0.0, 0.01, 1.3, end, end + 0.02):
        np.testing.assert_allclose(
            np.hstack(plant.table(s)), np.hstack(plant.table(np.array([s])))[0], rtol=1e-12, atol=1e-12
        )


def test_zero_damping_keeps_the_tau_over_k_reference():
    """The built-in Do 2R (D = 0) keeps the quasi-static reference: on the table's knots theta_ref, thetad_ref and
    tau_ff are q + tau_L / K, q' + tau_L' / K and Ia (q'' + tau_L'' / K) + tau_L + f(thetad_ref) with tau_L from the
    generated code and its rates from the spline written out here; the run tracks to the integrator's error. The
    per-harmonic path with a vanishing damper gives the same table (its exact spectral rates against the spline's,
    whose second derivative is good to ~6e-8 of the torque on 1 ms knots)."""
    traj = fourier([0.3, 0.8], 0.15, period=3.0, seed=3)
    model = read_robot("do_2r_elastic")
    k = np.array([j.elasticity.stiffness for j in model.joints])
    ia = np.array([j.drive.reflected_inertia for j in model.joints])
    fv = np.array([j.friction.viscous for j in model.joints])  # no Coulomb friction nor offset on this robot
    plant = Plant(model, ReferenceMotion(traj, 2), FULL)
    assert plant.table.damped.size == 0 and plant.table.transient is None
    samples = 3000  # the table's 1 ms knots over T = 3 s
    t = np.linspace(0.0, 3.0, samples + 1)
    q, qd, qdd = (traj.derivative(t, i) for i in range(3))
    tau_link = link_torque_function("do_2r_elastic")

    def torque(tk):
        return tau_link(*(traj.derivative(tk, i) for i in range(3)))

    delta = quasi_static_deflection(torque, 3.0, samples, k, np.zeros(2))
    thetad = qd - delta[1]
    expected = (q, qd, q - delta[0], thetad, ia * (qdd - delta[2]) + torque(t) + fv * thetad)
    for name, got, want in zip(("q", "qd", "theta", "thetad", "tau_ff"), plant.table(t), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max(), err_msg=name)
    undamped = simulate(model, traj, periods=2, sensors=QUIET, controller=FULL)
    assert rms_error(undamped) < 5e-7

    tiny = dataclasses.replace(
        model,
        joints=tuple(
            dataclasses.replace(j, elasticity=dataclasses.replace(j.elasticity, damping=1e-9)) for j in model.joints
        ),
    )
    vanishing = Plant(tiny, ReferenceMotion(traj, 2), FULL)
    assert vanishing.table.damped.size == 2  # the per-harmonic path
    t = np.random.default_rng(1).uniform(0.0, 6.0, 500)
    for name, new, old in zip(
        ("q", "qd", "theta", "thetad", "tau_ff"), vanishing.table(t), plant.table(t), strict=True
    ):
        np.testing.assert_allclose(new, old, rtol=0, atol=3e-7 * np.abs(old).max(), err_msg=name)
