"""The virtual robot's own Newton-Euler against pinocchio (second library, tests only) and a planar 2R closed form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from oracles.closed_forms import PLANAR_2R as PLANAR
from oracles.closed_forms import planar_2r_torque as planar_closed_form

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





def test_planar_2r_closed_form(tmp_path):
    path = tmp_path / "planar2r.yaml"
    path.write_text(PLANAR)
    dyn = RigidBodyDynamics(read_robot(path))
    q, qd, qdd = _states(30, 2, seed=5)
    _close(dyn.inverse_dynamics(q, qd, qdd), planar_closed_form(q, qd, qdd))
    m, h = dyn.mass_matrix_and_bias(q[0], qd[0])
    _close(m @ qdd[0] + h, planar_closed_form(q[:1], qd[:1], qdd[:1])[0])
