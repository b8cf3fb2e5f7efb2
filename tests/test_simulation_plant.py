"""Closed-loop plant of the virtual robot: energy conservation, equations of motion against pinocchio, static
deflection of elastic joints, tracking."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from robid.excitation.fourier import FourierTrajectory
from robid.model.loader import read_robot
from robid.model.robot_model import Drive, Friction
from robid.simulation import ControllerSettings, IntegratorSettings, Plant, ReferenceMotion, SensorSettings, simulate

pin = pytest.importorskip("pinocchio")

DATA = Path(__file__).resolve().parent / "data"
HOME = np.radians([0.0, -90.0, 90.0, 0.0, 45.0, 0.0])  # kr_heavy: upper arm vertical, forearm horizontal


def fourier(center, scale, period=4.0, harmonics=4, seed=0, rest_order=None):
    rng = np.random.default_rng(seed)
    dof = len(center)
    a = rng.normal(scale=scale, size=(dof, harmonics))
    b = rng.normal(scale=scale, size=(dof, harmonics))
    return FourierTrajectory(period, np.asarray(center, float), a, b, rest_order).project_rest()


def constant(center):
    dof = len(center)
    return FourierTrajectory(10.0, np.asarray(center, float), np.zeros((dof, 1)), np.zeros((dof, 1)))


def replace_joints(model, **changes):
    return dataclasses.replace(model, joints=tuple(dataclasses.replace(j, **changes) for j in model.joints))


def pin_model(model, path=None):
    if path is not None:
        return pin.buildModelFromUrdf(str(path))
    from tests.oracles.pinocchio_model import model_from_robid

    return model_from_robid(model)


TIGHT = IntegratorSettings(rtol=1e-11, atol_position=1e-12, atol_velocity=1e-11)


def test_rigid_plant_conserves_energy_without_friction_and_control():
    """Free motion of the UR10e-like arm under gravity, motors off: T + V from pinocchio stays constant."""
    path = DATA / "ur10e_like.urdf"
    model = read_robot(path)
    ref = ReferenceMotion(fourier(np.zeros(6), 0.3, seed=1), 1)  # only sets the initial state (moving)
    plant = Plant(model, ref, ControllerSettings(enabled=False), TIGHT, 0.0, 1.5)
    sol, _ = plant.integrate()
    pm = pin_model(model, path)
    data = pm.createData()
    t = np.linspace(0.0, 1.5, 61)
    x = sol.sol(t).T
    energy = np.array(
        [pin.computeKineticEnergy(pm, data, s[:6], s[6:12]) + pin.computePotentialEnergy(pm, data, s[:6]) for s in x]
    )
    kinetic = np.array([pin.computeKineticEnergy(pm, data, s[:6], s[6:12]) for s in x])
    assert kinetic.max() > 10.0  # it really moved
    assert np.abs(energy - energy[0]).max() < 1e-8 * kinetic.max()


def test_elastic_plant_conserves_energy_without_damping_friction_and_control():
    """kr_heavy with its elastic gears (damping, friction, compensator removed), motors unpowered: link kinetic and
    potential energy (pinocchio) + rotor kinetic energy + spring energy is constant."""
    model = read_robot("kr_heavy")
    joints = []
    for j in model.joints:
        el = None if j.elasticity is None else dataclasses.replace(j.elasticity, damping=0.0)
        joints.append(dataclasses.replace(j, friction=Friction(), elasticity=el, compensator=None))
    model = dataclasses.replace(model, joints=tuple(joints))
    ref = ReferenceMotion(fourier(HOME, 0.05, seed=2), 1)
    plant = Plant(model, ref, ControllerSettings(enabled=False), TIGHT, 0.0, 0.4)
    sol, _ = plant.integrate()
    pm = pin_model(model)
    data = pm.createData()
    ia = plant.data.reflected_inertia
    stiff = plant.data.stiffness
    t = np.linspace(0.0, 0.4, 41)
    q, qd, theta, thetad = plant.split(sol.sol(t).T)
    kinetic = np.array(
        [pin.computeKineticEnergy(pm, data, q[k], qd[k]) + 0.5 * np.sum(ia * thetad[k] ** 2) for k in range(t.size)]
    )
    potential = np.array(
        [
            pin.computePotentialEnergy(pm, data, q[k]) + 0.5 * np.sum(stiff * (theta[k] - q[k]) ** 2)
            for k in range(t.size)
        ]
    )
    energy = kinetic + potential
    assert np.abs(theta - q).max() > 1e-4  # the springs work
    assert kinetic.max() > 10.0
    assert np.abs(energy - energy[0]).max() < 1e-8 * kinetic.max()


def _accelerations(plant, t, x):
    rates = np.array([plant.rhs(tk, xk) for tk, xk in zip(t, x, strict=True)])
    n, ne = plant.model.dof, len(plant.elastic_index)
    qdd = rates[:, plant.model.dof : 2 * n]
    thetadd = qdd.copy()
    thetadd[:, plant.elastic_index] = rates[:, 2 * n + ne :]
    return qdd, thetadd


def test_rigid_closed_loop_satisfies_pinocchio_inverse_dynamics():
    """Recorded drive torque = M qdd + c + g (pinocchio) + Ia qdd + fv qd + fc tanh(qd/eps) + f0."""
    path = DATA / "ur10e_like.urdf"
    model = replace_joints(
        read_robot(path),
        drive=Drive(gear_ratio=100.0, rotor_inertia=1e-4),
        friction=Friction(viscous=2.0, coulomb=3.0, offset=0.5),
    )
    eps = 1e-3
    plant = Plant(
        model,
        ReferenceMotion(fourier(np.zeros(6), 0.4, seed=3), 1),
        None,
        IntegratorSettings(coulomb_epsilon=eps),
        0.0,
        1.0,
    )
    sol, _ = plant.integrate()
    t = np.linspace(0.0, 1.0, 21)
    x = sol.sol(t).T
    q, qd, theta, thetad = plant.split(x)
    tau = plant.motor_torque(t, q, qd, theta, thetad)
    qdd, _ = _accelerations(plant, t, x)
    pm = pin_model(model, path)
    data = pm.createData()
    rigid = np.array([pin.rnea(pm, data, q[k], qd[k], qdd[k]) for k in range(t.size)])
    expected = rigid + 1.0 * qdd + 2.0 * qd + 3.0 * np.tanh(qd / eps) + 0.5
    assert np.abs(tau - expected).max() < 1e-9 * np.abs(expected).max()


def test_elastic_closed_loop_satisfies_the_spong_equations():
    """kr_heavy: link side M qdd + c + g (pinocchio) + tau_comp = K (theta - q) + D (thetad - qd) on A1-A3, the
    drive torque on A4-A6; motor side Ia thetadd + f(thetad) + K (theta - q) + D (thetad - qd) = tau."""
    model = read_robot("kr_heavy")
    plant = Plant(model, ReferenceMotion(fourier(HOME, 0.05, seed=4), 1), None, None, 0.0, 0.5)
    sol, _ = plant.integrate()
    t = np.linspace(0.0, 0.5, 11)
    x = sol.sol(t).T
    q, qd, theta, thetad = plant.split(x)
    tau = plant.motor_torque(t, q, qd, theta, thetad)
    qdd, thetadd = _accelerations(plant, t, x)
    pm = pin_model(model)
    data = pm.createData()
    link = np.array([pin.rnea(pm, data, q[k], qd[k], qdd[k]) for k in range(t.size)])
    link += plant.compensator.torque(q)
    d = plant.data
    eps = plant.integrator.coulomb_epsilon
    spring = d.stiffness * (theta - q) + d.damping * (thetad - qd)
    friction = d.fv * thetad + d.fc * np.tanh(thetad / eps) + d.f0
    e, r = plant.elastic_index, plant.rigid_index
    assert list(e) == [0, 1, 2]
    scale = np.abs(tau).max()
    assert np.abs(link[:, e] - spring[:, e]).max() < 1e-9 * scale
    assert np.abs(tau[:, e] - (d.reflected_inertia[e] * thetadd[:, e] + friction[:, e] + spring[:, e])).max() < (
        1e-9 * scale
    )
    rigid_side = link[:, r] + d.reflected_inertia[r] * qdd[:, r] + friction[:, r]
    assert np.abs(tau[:, r] - rigid_side).max() < 1e-9 * scale


def test_elastic_static_deflection_under_gravity():
    """Pure motor-side PD holding a pose, no friction: at rest theta - q = (g(q) + tau_comp(q)) / K on the elastic
    joints (gravity from pinocchio) and theta_ref - theta = (g + tau_comp) / Kp on every joint."""
    model = replace_joints(read_robot("kr_heavy"), friction=Friction())
    plant = Plant(model, ReferenceMotion(constant(HOME), 1), ControllerSettings(feedforward="none"), None, 0.0, 4.0)
    sol, _ = plant.integrate()
    q, qd, theta, thetad = plant.split(sol.sol(4.0))
    assert np.abs(qd).max() < 1e-6 and np.abs(thetad).max() < 1e-6
    pm = pin_model(model)
    load = pin.computeGeneralizedGravity(pm, pm.createData(), q) + plant.compensator.torque(q)[0]
    d = plant.data
    e = plant.elastic_index
    np.testing.assert_allclose(theta[e] - q[e], load[e] / d.stiffness[e], rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(HOME - theta, load / d.kp, rtol=1e-5, atol=1e-10)
    assert np.abs(theta[e] - q[e]).max() > 1e-4  # a real deflection (A2 carries the arm)


def test_tracking_with_pd_and_feed_forward():
    """Slow rest-to-rest Fourier motion of kr_heavy: with the rigid feed-forward the lag is the friction the PD
    loop must overcome (|e| <~ fc / Kp); with friction in the feed-forward the link follows within 2e-5 rad."""
    traj = fourier(HOME, 0.05, period=5.0, harmonics=3, seed=5, rest_order=4)
    quiet = SensorSettings(encoder_counts=None, link_encoder_counts=None)
    res = simulate("kr_heavy", traj, periods=1, sensors=quiet)
    model = read_robot("kr_heavy")
    bound = np.array([j.friction.coulomb / j.controller.position_gain for j in model.joints])
    assert np.all(res.tracking_error < 2.0 * bound + 1e-4)
    assert res.tracking_error.max() < 3e-3
    full = simulate("kr_heavy", traj, periods=1, sensors=quiet, controller=ControllerSettings(feedforward="full"))
    assert full.tracking_error.max() < 2e-5


def test_recorded_torque_matches_the_generated_inverse_dynamics(tmp_path):
    """Two independent implementations meet: the torque the virtual robot records along its simulated motion equals
    robid's generated inverse dynamics (regressor @ nominal parameters: rigid bodies, rotor, viscous, Coulomb sign,
    offset) at the true q, qd, qdd -- wherever |qd| is far from the Coulomb smoothing band."""
    import yaml

    import robid

    doc = yaml.safe_load((DATA / "rrr_mdh.yaml").read_text())
    for k, joint in enumerate(doc["joints"]):
        joint["drive"] = {"gear_ratio": 50.0 + 10 * k, "rotor_inertia": 2e-4}
        joint["friction"] = {"viscous": 1.5 + k, "coulomb": 2.0 + k, "offset": 0.3 * (k - 1)}
    path = tmp_path / "rrr_drives.yaml"
    path.write_text(yaml.safe_dump(doc))
    quiet = SensorSettings(encoder_counts=None, link_encoder_counts=None)
    res = simulate(path, fourier([0.2, -0.3, 0.5], 0.4, period=2.0, seed=6), periods=1, sensors=quiet)
    qdd, _ = res.accelerations()
    predicted = robid.load_robot(path).inverse_dynamics(res.q, res.qd, qdd)
    away = (np.abs(res.qd) > 0.01).all(axis=1)  # tanh(v / 1e-4) = sign(v) to 1e-40 there
    assert away.sum() > 300
    assert np.abs(predicted - res.tau)[away].max() < 1e-9 * np.abs(res.tau).max()
