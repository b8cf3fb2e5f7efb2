"""Elastic-joint regressors (robid.symbolic.terms, elastic layout) against independent formulations.

* Zollo et al. 2015 AT-1 (notes 002 section 6.2): the complete model of the 2-dof planar robot at the stated state,
  to 1e-6, and the closed-form B, C, g of notes section 2.11 at random states;
* a spatial 3R arm (modified DH, oblique twists, full inertias) with coupled rotors of small gear ratio, against
  the Euler-Lagrange oracle of tests/oracles/elastic_lagrangian.py (energy-based, no robid code);
* AT-2: 14 base parameters of 28, the unidentifiable set and the span of the paper's Table 1 combinations;
* AT-3: noise-free identification from a simulated trajectory (forward dynamics of the oracle) recovers all 14.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from oracles import lagrangian as lag
from oracles.elastic_lagrangian import Drive as OracleDrive
from oracles.elastic_lagrangian import ElasticLagrangian

import robid
from robid.errors import RobidInputError
from robid.model.loader import read_robot
from robid.model.robot_model import Drive, Elasticity, Friction

DATA = Path(__file__).parent / "data"
COMPLETE = ("rigid", "rotor_coupled", "viscous", "coulomb", "stiffness")
REDUCED = ("rigid", "rotor", "viscous", "coulomb", "stiffness")
K_M = 0.1  # Zollo's reduction k_m (rotor speed = k_m thetad)

#: notes 002 section 6.2 AT-1: state and expected Y Pi (link rows 1-2, motor rows 3-4)
AT1_STATE = dict(q=[0.3, -0.5], th=[0.31, -0.52], qd=[1.0, -0.8], thd=[1.1, -0.7], qdd=[2.0, 1.5], thdd=[2.5, 1.0])
AT1_TAU = [135.246143, 64.634973, 31.01744, -33.91397]


def zollo_parameters(names: list[str]) -> np.ndarray:
    """Eq. 45 of the paper with the notes' I1zz = 13.81667, I2zz = 0.858333 (origin frame), Ia = Y k_m^2."""
    values = dict.fromkeys(names, 0.0)
    values.update(
        m_J1=21.0, mx_J1=-5.0, Izz_J1=13.81667, m_J2=10.0, mx_J2=-2.5, Izz_J2=0.858333,
        Ia_J1=21.18 * K_M**2, Ia_J2=12.10 * K_M**2, fv_J1=0.1434, fv_J2=0.1391, fc_J1=0.3302, fc_J2=0.3576,
        k_J1=3000.0, k_J2=1800.0,
    )
    return np.array([values[n] for n in names])


def at1_states():
    s = {k: np.array([v]) for k, v in AT1_STATE.items()}
    return (s["q"], s["qd"], s["qdd"]), (s["th"], s["thd"], s["thdd"])


def test_zollo_at1_complete_model_value():
    robot = robid.load_robot("zollo_2dof_elastic", terms=COMPLETE)
    assert robot.rows == 4 and robot.motor_joints == (0, 1)
    assert len(robot.parameter_names) == 28
    joint, motor = at1_states()
    y = robot.regressor(*joint, motor=motor)
    assert y.shape == (1, 4, 28)
    tau = y[0] @ zollo_parameters(robot.parameter_names)
    np.testing.assert_allclose(tau, AT1_TAU, rtol=0, atol=1e-6)
    # the generated inverse dynamics agrees with the regressor
    np.testing.assert_allclose(
        robot.inverse_dynamics(*joint, zollo_parameters(robot.parameter_names), motor=motor)[0], tau, atol=1e-10
    )


def test_zollo_reduced_model_lacks_exactly_the_coupling_terms():
    """Spong's reduced model drops B_d: row 1 loses Y2 km2 thetadd2, row 4 loses Y2 km2 qdd1 (issue text)."""
    robot = robid.load_robot("zollo_2dof_elastic", terms=REDUCED)
    joint, motor = at1_states()
    tau = robot.regressor(*joint, motor=motor)[0] @ zollo_parameters(robot.parameter_names)
    coupling = 12.10 * K_M
    expected = np.array(AT1_TAU) - [coupling * 1.0, 0.0, 0.0, coupling * 2.0]
    np.testing.assert_allclose(tau, expected, atol=1e-6)
    np.testing.assert_allclose(tau, [134.036143, 64.634973, 31.01744, -36.33397], atol=1e-6)


ZOLLO = dict(a1=0.5, a2=0.5, g=9.81, m1=21.0, m2=10.0, c1x=-5.0, c1y=0.0, c2x=-2.5, c2y=0.0, i1=13.81667,
             i2=0.858333, y1=21.18, y2=12.10, k=K_M, stiffness=(3000.0, 1800.0), fv=(0.1434, 0.1391),
             fc=(0.3302, 0.3576))


def zollo_matrices(q, qd):
    """Notes 002 section 2.11: B(q), C(q, qd) and g(q) of the 2-dof model written out, for one state."""
    p = ZOLLO
    a1, a2, m1, m2, c1x, c1y, c2x, c2y = (p[k] for k in ("a1", "a2", "m1", "m2", "c1x", "c1y", "c2x", "c2y"))
    i1, i2, y1, y2, k, g = (p[k] for k in ("i1", "i2", "y1", "y2", "k", "g"))
    q1, q2 = q
    c2, s2 = np.cos(q2), np.sin(q2)
    b11 = i1 + i2 + a1**2 * (m1 + m2) + a2**2 * m2 + 2 * a1 * c1x + 2 * a2 * c2x \
        + 2 * a1 * (a2 * m2 + c2x) * c2 - 2 * a1 * c2y * s2
    b12 = i2 + a2**2 * m2 + 2 * a2 * c2x + a1 * (a2 * m2 + c2x) * c2 - a1 * c2y * s2
    b22 = i2 + a2**2 * m2 + 2 * a2 * c2x
    b = np.array([[b11, b12, 0, y2 * k], [b12, b22, 0, 0], [0, 0, y1 * k**2, 0], [y2 * k, 0, 0, y2 * k**2]])
    h = a1 * (a2 * m2 + c2x) * s2 + a1 * c2y * c2
    qd1, qd2 = qd
    cm = np.zeros((4, 4))
    cm[0, 0], cm[0, 1], cm[1, 0] = -h * qd2, -h * (qd1 + qd2), h * qd1
    c1, s1, c12, s12 = np.cos(q1), np.sin(q1), np.cos(q1 + q2), np.sin(q1 + q2)
    g1 = g * ((m1 + m2) * a1 * c1 + m2 * a2 * c12 + c1x * c1 - c1y * s1 + c2x * c12 - c2y * s12)
    g2 = g * (m2 * a2 * c12 + c2x * c12 - c2y * s12)
    return b, cm, np.array([g1, g2, 0.0, 0.0])


def zollo_bias(q, qd, th, thd):
    """C x_d + g + spring and motor friction: everything but B x_dd (eq. 2 of the paper)."""
    _, cm, gv = zollo_matrices(q, qd)
    kd = np.array(ZOLLO["stiffness"]) * (q - th)
    fric = np.array(ZOLLO["fv"]) * thd + np.array(ZOLLO["fc"]) * np.sign(thd)
    return cm @ np.concatenate([qd, thd]) + gv + np.concatenate([kd, fric - kd])


def zollo_closed_form(q, qd, qdd, th, thd, thdd):
    out = []
    for s in range(q.shape[0]):
        b, _, _ = zollo_matrices(q[s], qd[s])
        out.append(b @ np.concatenate([qdd[s], thdd[s]]) + zollo_bias(q[s], qd[s], th[s], thd[s]))
    return np.array(out)


def random_elastic_states(n, dof, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n, dof))
    joint = (q, rng.uniform(-2, 2, (n, dof)), rng.uniform(-5, 5, (n, dof)))
    motor = (q - rng.uniform(-0.05, 0.05, (n, dof)), rng.uniform(-2, 2, (n, dof)), rng.uniform(-5, 5, (n, dof)))
    return joint, motor


def test_zollo_complete_model_matches_closed_form_at_random_states():
    robot = robid.load_robot("zollo_2dof_elastic", terms=COMPLETE)
    joint, motor = random_elastic_states(30, 2, seed=3)
    tau = robot.regressor(*joint, motor=motor) @ zollo_parameters(robot.parameter_names)
    ref = zollo_closed_form(*joint, *motor)
    np.testing.assert_allclose(tau, ref, rtol=1e-12, atol=1e-9 * np.abs(ref).max())


# ---------------------------------------------------------------------------------------- spatial 3R, oracle
GEARS = (2.0, 0.5, 3.0)  # small ratios: the coupling terms (1/k of the reflected inertia) are large


def spatial_elastic_model():
    """tests/data/rrr_mdh.yaml (oblique twists, full inertias) with a drive and an elastic joint on every axis."""
    model = read_robot(DATA / "rrr_mdh.yaml")
    joints = []
    for k, j in enumerate(model.joints):
        joints.append(dataclasses.replace(
            j,
            drive=Drive(gear_ratio=GEARS[k], rotor_inertia=0.3 + 0.1 * k),
            friction=Friction(viscous=0.2 + k, coulomb=1.0 + k),
            elasticity=Elasticity(stiffness=1000.0 * (k + 1), damping=5.0 + k, link_viscous=0.7 + k),
        ))
    return dataclasses.replace(model, joints=tuple(joints))


def spatial_oracle(model):
    drives = [
        OracleDrive(j.drive.rotor_inertia, j.drive.gear_ratio, j.elasticity.stiffness, j.elasticity.damping,
                    j.elasticity.link_viscous, j.friction.viscous, j.friction.coulomb)
        for j in model.joints
    ]
    return ElasticLagrangian(lag.from_robid_model(model), drives)


def test_spatial_complete_model_matches_the_euler_lagrange_oracle():
    model = spatial_elastic_model()
    terms = COMPLETE + ("damping", "link_viscous")
    robot = robid.load_robot(model, terms=terms)
    assert robot.rows == 6
    joint, motor = random_elastic_states(25, 3, seed=7)
    ref = spatial_oracle(model).inverse_dynamics(*joint, *motor)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(robot.inverse_dynamics(*joint, motor=motor), ref, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(robot.regressor(*joint, motor=motor) @ robot.parameters, ref, rtol=0,
                               atol=1e-11 * scale)
    base = robot.base_parameters()
    np.testing.assert_allclose(base.regressor(*joint, motor=motor) @ base.values(robot.parameters), ref, rtol=0,
                               atol=1e-10 * scale)
    for name in ("k_K1", "k_K2", "k_K3", "d_K1", "d_K2", "d_K3", "fl_K1", "Ia_K1", "Ia_K2", "Ia_K3"):
        assert base.classes[name] == "identifiable", name


def test_spatial_reduced_model_differs_from_the_oracle_by_the_coupling():
    """The reduced (Spong) model is the oracle with Bd = 0: checked by zeroing the oracle's coupling."""
    model = spatial_elastic_model()
    robot = robid.load_robot(model, terms=REDUCED + ("damping", "link_viscous"))
    joint, motor = random_elastic_states(10, 3, seed=8)
    oracle = spatial_oracle(model)
    full = oracle.inverse_dynamics(*joint, *motor)
    reduced = robot.inverse_dynamics(*joint, motor=motor)
    assert np.abs(full - reduced).max() > 1.0  # the coupling is not small at these gear ratios
    oracle._bd = lambda q: tuple(np.zeros((q.shape[0], 1) + s) for s in ((3, 3), (3, 3, 3), (3,)))
    np.testing.assert_allclose(reduced, oracle.inverse_dynamics(*joint, *motor), atol=1e-11 * np.abs(full).max())


# ---------------------------------------------------------------------------------------- AT-2, structure
def paper_table1_rows(names: list[str]) -> np.ndarray:
    """The 14 combinations of Table 1 (notes 002 section 4.1) over robid's 28 standard parameters."""
    rows = []

    def row(**coeffs):
        r = np.zeros(len(names))
        for n, c in coeffs.items():
            r[names.index(n)] = c
        rows.append(r)

    row(k_J1=1)
    row(k_J2=1)
    row(m_J1=1, Izz_J1=-4, Izz_J2=4)
    row(m_J2=1, Izz_J2=-4)
    row(mx_J1=1, Izz_J1=2)
    row(my_J1=1)
    row(mx_J2=1, Izz_J2=2)
    row(my_J2=1)
    row(Ia_J1=1 / K_M**2)  # Y1
    row(Ia_J2=1 / K_M**2)  # Y2
    row(fc_J1=1)
    row(fc_J2=1)
    row(fv_J1=1)
    row(fv_J2=1)
    return np.array(rows)


def test_zollo_at2_base_structure_matches_table1():
    robot = robid.load_robot("zollo_2dof_elastic", terms=COMPLETE)
    names = robot.parameter_names
    base = robot.base_parameters()
    assert len(base.names) == 14 and len(names) == 28
    unidentifiable = {n for n, c in base.classes.items() if c == "unidentifiable"}
    assert unidentifiable == {f"{p}_J{j}" for j in (1, 2) for p in ("mz", "Ixx", "Iyy", "Ixy", "Ixz", "Iyz")}
    paper = paper_table1_rows(names)
    # the same identifiable combinations: the two 14-row groupings span the same space
    assert np.linalg.matrix_rank(np.vstack([base.grouping, paper]), tol=1e-9) == 14
    assert base.exact
    true = paper @ zollo_parameters(names)
    np.testing.assert_allclose(true, [3000, 1800, -30.8333, 6.5667, 22.6333, 0, -0.7833, 0, 21.18, 12.10, 0.3302,
                                      0.3576, 0.1434, 0.1391], atol=1e-4)


# ---------------------------------------------------------------------------------------- AT-3, identification
def simulate_zollo(duration=8.9, rate=1000.0):
    """Forward dynamics of the closed-form 2-dof model (notes section 2.11; Coulomb + viscous motor friction) under
    a motor-side PD with gravity feed-forward around a multi-sine reference (the paper's PD of De Luca et al.,
    gains of notes section 4.5), integrated by RK4 at the sampling step with the torque held over each step. The
    accelerations are those of the dynamics at the sampled states: the data satisfy the model exactly, whatever
    the integration error."""
    w = 2 * np.pi * 0.2
    stiffness = np.array(ZOLLO["stiffness"])

    def reference(t):
        q = np.array([-np.pi / 2 + 0.9 * np.sin(w * t) + 0.3 * np.sin(3 * w * t + 1),
                      0.8 * np.sin(2 * w * t + 0.5) + 0.3 * np.sin(5 * w * t)])
        qd = np.array([0.9 * w * np.cos(w * t) + 0.9 * w * np.cos(3 * w * t + 1),
                       1.6 * w * np.cos(2 * w * t + 0.5) + 1.5 * w * np.cos(5 * w * t)])
        return q, qd

    def control(t, x):
        qr, qdr = reference(t)
        g = zollo_matrices(qr, np.zeros(2))[2][:2]
        return np.array([800.0, 400.0]) * (qr + g / stiffness - x[2:4]) + np.array([30.0, 15.0]) * (
            qdr - x[6:8]) + g

    def accelerations(x, u):
        q, th, qd, thd = x[0:2], x[2:4], x[4:6], x[6:8]
        b, _, _ = zollo_matrices(q, qd)
        return np.linalg.solve(b, np.concatenate([np.zeros(2), u]) - zollo_bias(q, qd, th, thd))

    def f(x, u):
        return np.concatenate([x[4:8], accelerations(x, u)])

    q0, qd0 = reference(0.0)
    g0 = zollo_matrices(q0, np.zeros(2))[2][:2]
    x0 = np.concatenate([q0, q0 - g0 / stiffness, qd0, qd0])
    t = np.arange(int(duration * rate)) / rate
    h = 1.0 / rate
    x = np.empty((t.size, 8))
    u = np.empty((t.size, 2))
    acc = np.empty((t.size, 4))
    x[0] = x0
    for k in range(t.size):
        u[k] = control(t[k], x[k])
        acc[k] = accelerations(x[k], u[k])
        if k + 1 < t.size:
            k1 = np.concatenate([x[k, 4:], acc[k]])
            k2 = f(x[k] + h / 2 * k1, u[k])
            k3 = f(x[k] + h / 2 * k2, u[k])
            k4 = f(x[k] + h * k3, u[k])
            x[k + 1] = x[k] + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return (x[:, 0:2], x[:, 4:6], acc[:, 0:2]), (x[:, 2:4], x[:, 6:8], acc[:, 2:4]), u


@pytest.fixture(scope="module")
def zollo_run():
    return simulate_zollo()


def test_zollo_at3_noise_free_identification_recovers_all_14(zollo_run):
    joint, motor, u = zollo_run
    keep = (np.abs(motor[1]) >= 0.5).all(axis=1)  # the paper's rule: |velocity| >= 0.5 rad/s
    assert keep.sum() > 1000
    robot = robid.load_robot("zollo_2dof_elastic", terms=COMPLETE)
    base = robot.base_parameters()
    w = base.regressor(*(x[keep] for x in joint), motor=tuple(x[keep] for x in motor))
    target = np.concatenate([np.zeros((keep.sum(), 2)), u[keep]], axis=1)
    beta = np.linalg.lstsq(w.reshape(-1, 14), target.reshape(-1), rcond=None)[0]
    true = base.values(zollo_parameters(robot.parameter_names))
    rel = np.abs(beta - true) / np.maximum(np.abs(true), 1e-300)
    for name, r, b, t in zip(base.names, rel, beta, true, strict=True):
        if t == 0:
            assert abs(b) < 1e-6, name
        else:
            assert r < 1e-6, f"{name}: {b} vs {t} ({r:.1e})"


# ---------------------------------------------------------------------------------------- errors
def test_stiffness_term_needs_an_elastic_joint():
    with pytest.raises(RobidInputError, match="elasticity"):
        robid.load_robot("puma560", terms=("rigid", "stiffness"))
    with pytest.raises(RobidInputError, match="need 'stiffness'"):
        robid.load_robot("zollo_2dof_elastic", terms=("rigid", "damping"))
    with pytest.raises(RobidInputError, match="exclude"):
        robid.load_robot("zollo_2dof_elastic", terms=("rigid", "rotor", "rotor_coupled", "stiffness"))


def test_elastic_layout_needs_the_motor_states():
    robot = robid.load_robot("zollo_2dof_elastic", terms=COMPLETE)
    joint, _ = at1_states()
    with pytest.raises(RobidInputError, match="motor"):
        robot.regressor(*joint)
