"""The virtual robot's own Newton-Euler against pinocchio (second library, tests only) and a planar 2R closed form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robid.model.loader import read_robot
from robid.simulation.rnea import RigidBodyDynamics

pin = pytest.importorskip("pinocchio")

DATA = Path(__file__).resolve().parent / "data"


def _states(n, dof, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (n, dof)), rng.normal(size=(n, dof)), rng.normal(size=(n, dof))


def _close(a, b, tol=1e-9):
    scale = max(1.0, float(np.abs(b).max()))
    assert np.abs(a - b).max() <= tol * scale, np.abs(a - b).max()


def _pin_reference(pmodel, q, qd, qdd):
    data = pmodel.createData()
    tau, mass, bias, grav = [], [], [], []
    for k in range(q.shape[0]):
        tau.append(pin.rnea(pmodel, data, q[k], qd[k], qdd[k]).copy())
        m = pin.crba(pmodel, data, q[k]).copy()
        mass.append(np.triu(m) + np.triu(m, 1).T)
        bias.append(pin.nonLinearEffects(pmodel, data, q[k], qd[k]).copy())
        grav.append(pin.computeGeneralizedGravity(pmodel, data, q[k]).copy())
    return np.array(tau), np.array(mass), np.array(bias), np.array(grav)


@pytest.mark.parametrize("name", ["ur10e_like.urdf", "panda_gaz.urdf", "rpr_prismatic.urdf", "ur10e_like_wall.urdf"])
def test_rnea_matches_pinocchio_on_urdf(name):
    """robid reads the URDF, pinocchio parses it itself: inverse dynamics, M, C qd + g and g agree to 1e-9."""
    path = DATA / name
    dyn = RigidBodyDynamics(read_robot(path))
    pmodel = pin.buildModelFromUrdf(str(path))
    assert pmodel.nq == dyn.dof
    q, qd, qdd = _states(25, dyn.dof)
    tau, mass, bias, grav = _pin_reference(pmodel, q, qd, qdd)
    _close(dyn.inverse_dynamics(q, qd, qdd), tau)
    _close(dyn.mass_matrix(q), mass)
    _close(dyn.gravity_torque(q), grav)
    for k in range(q.shape[0]):  # the integrator's scalar single-state path
        m, h = dyn.mass_matrix_and_bias(q[k], qd[k])
        _close(m, mass[k])
        _close(h, bias[k])


def test_rnea_matches_pinocchio_on_dh_robot_with_offsets():
    """kr_heavy (standard DH, offsets, alpha = 180 deg, gravity +z in the DH base) via the pinocchio test oracle."""
    from tests.oracles.pinocchio_model import model_from_robid

    model = read_robot("kr_heavy")
    dyn = RigidBodyDynamics(model)
    pmodel = model_from_robid(model)
    q, qd, qdd = _states(20, 6, seed=3)
    tau, mass, bias, _ = _pin_reference(pmodel, q, qd, qdd)
    _close(dyn.inverse_dynamics(q, qd, qdd), tau)
    _close(dyn.mass_matrix(q), mass)
    m, h = dyn.mass_matrix_and_bias(q[0], qd[0])
    _close(m, mass[0])
    _close(h, bias[0])


PLANAR = """
robid: 1
name: planar2r
gravity: [0, -9.81, 0]
kinematics: dh
joints:
  - name: A1
    a: 0.4
    link: {mass: 20, com: [-0.2, 0, 0], inertia: [0.01, 0.2667, 0.2667, 0, 0, 0]}
  - name: A2
    a: 0.5
    link: {mass: 10, com: [-0.25, 0, 0], inertia: [0.01, 0.2083, 0.2083, 0, 0, 0]}
"""


def planar_closed_form(q, qd, qdd):
    """Planar 2R, Lagrange by hand: link lengths a1, COM distances x1, x2 from the joints, I about the COM."""
    m1, m2, a1, x1, x2, i1, i2, g = 20, 10, 0.4, 0.2, 0.25, 0.2667, 0.2083, 9.81
    out = []
    for (q1, q2), (d1, d2), acc in zip(q, qd, qdd, strict=True):
        c2, s2 = np.cos(q2), np.sin(q2)
        m11 = i1 + i2 + m1 * x1**2 + m2 * (a1**2 + x2**2) + 2 * m2 * a1 * x2 * c2
        m12 = i2 + m2 * x2**2 + m2 * a1 * x2 * c2
        m22 = i2 + m2 * x2**2
        h = m2 * a1 * x2 * s2
        coriolis = np.array([-h * d2 * (2 * d1 + d2), h * d1**2])
        grav = np.array(
            [g * (m1 * x1 + m2 * a1) * np.cos(q1) + g * m2 * x2 * np.cos(q1 + q2), g * m2 * x2 * np.cos(q1 + q2)]
        )
        out.append(np.array([[m11, m12], [m12, m22]]) @ acc + coriolis + grav)
    return np.array(out)


def test_planar_2r_closed_form(tmp_path):
    path = tmp_path / "planar2r.yaml"
    path.write_text(PLANAR)
    dyn = RigidBodyDynamics(read_robot(path))
    q, qd, qdd = _states(30, 2, seed=5)
    _close(dyn.inverse_dynamics(q, qd, qdd), planar_closed_form(q, qd, qdd))
    m, h = dyn.mass_matrix_and_bias(q[0], qd[0])
    _close(m @ qdd[0] + h, planar_closed_form(q[:1], qd[:1], qdd[:1])[0])
