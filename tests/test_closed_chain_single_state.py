"""The closed chain's single-state path (the integrator's: robid.simulation.tree_dynamics.ScalarTree and
ClosedChainDynamics.mass_matrix_and_bias in plain-Python scalars) against the vectorised formulation it replaces
on one state (TreeDynamics' Newton-Euler with n unit accelerations for M, ClosedChainDynamics._kkt), and the
scalar tree against robid.simulation.rnea (tested against pinocchio) on a serial robot with a prismatic joint.

The two paths sum in different orders (composite rigid bodies against unit accelerations, scalar against numpy
products, two LAPACK solves against scalar elimination for the closure), so they agree to rounding, not bitwise:
measured at most 6e-16 of the largest entry for the tree's M and h and 1.3e-14 for M_a and h_a (the multipliers'
system and the inverse of its active block add a condition number); the bound, 1e-12, leaves room for states near
a loop's dead point, where that condition number grows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robid
from robid.model.loops import tree_joints, tree_parents
from robid.simulation.closed_dynamics import ClosedChainDynamics
from robid.simulation.rnea import RigidBodyDynamics
from robid.simulation.tree_dynamics import ScalarTree, TreeDynamics

DATA = Path(__file__).parent / "data"
CLOSED = ["kr180_pa", str(DATA / "parallelogram_2r.yaml"), str(DATA / "fourbar_planar.yaml")]
ROUNDING = 1e-12


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def _scalar_state(tree: TreeDynamics, q, qd):
    scalar = ScalarTree(tree)
    pl = scalar.placements(q.tolist())
    rotation, origin = scalar.poses(pl)
    velocities = scalar.velocities(pl, qd.tolist())
    return scalar, pl, rotation, origin, velocities


def _check_tree(tree: TreeDynamics, q, qd):
    """ScalarTree at each state against TreeDynamics: poses, velocities (qdd = 0, no gravity), M, h."""
    zero = np.zeros_like(q)
    motion, _ = tree.motion(q, qd, zero, np.zeros(q.shape[0]))
    mass = tree.inverse_dynamics(np.repeat(q, tree.n, axis=0), np.zeros((q.shape[0] * tree.n, tree.n)),
                                 np.tile(np.eye(tree.n), (q.shape[0], 1)), gravity=False)
    mass = mass.reshape(q.shape[0], tree.n, tree.n).transpose(0, 2, 1)
    bias = tree.inverse_dynamics(q, qd, zero)
    for k in range(q.shape[0]):
        scalar, pl, rotation, origin, velocities = _scalar_state(tree, q[k], qd[k])
        for i in range(tree.n):
            assert np.allclose(np.reshape(rotation[i], (3, 3)), motion.rotation[i][k], rtol=0, atol=1e-15)
            assert np.allclose(origin[i], motion.origin[i][k], rtol=0, atol=1e-14)
            expected = np.concatenate([motion.w[i][k], motion.wd[i][k], motion.a[i][k]])
            assert np.allclose(velocities[i], expected, rtol=0, atol=1e-13 * max(1.0, np.abs(expected).max()))
        assert _relative(scalar.mass_matrix(pl), mass[k]) < ROUNDING
        assert _relative(scalar.bias(pl, rotation, velocities), bias[k]) < ROUNDING


@pytest.mark.parametrize("name", CLOSED)
def test_scalar_tree_equals_the_vectorised_tree(name):
    model = robid.load_robot(name).model
    tree = TreeDynamics(tree_joints(model), tree_parents(model), model.gravity)
    q, qd = np.random.default_rng(3).uniform(-1.5, 1.5, (2, 6, tree.n))
    _check_tree(tree, q, qd)


def test_scalar_tree_with_a_prismatic_joint_and_branches():
    """rpr_dh (revolute, prismatic, revolute) as a chain and as a tree whose joints 2 and 3 both hang on joint 1."""
    model = robid.load_robot(DATA / "rpr_dh.yaml").model
    q, qd = np.random.default_rng(5).uniform(-0.3, 0.3, (2, 6, 3))
    _check_tree(TreeDynamics(model.joints, [-1, 0, 0], model.gravity), q, qd)
    chain = TreeDynamics(model.joints, [-1, 0, 1], model.gravity)
    _check_tree(chain, q, qd)
    rigid = RigidBodyDynamics(model)  # an independent formulation (rnea.py, tested against pinocchio)
    mass, bias = rigid.mass_matrix(q), rigid.inverse_dynamics(q, qd, np.zeros_like(q))
    for k in range(q.shape[0]):
        scalar, pl, rotation, _, velocities = _scalar_state(chain, q[k], qd[k])
        assert _relative(scalar.mass_matrix(pl), mass[k]) < ROUNDING
        assert _relative(scalar.bias(pl, rotation, velocities), bias[k]) < ROUNDING


@pytest.mark.parametrize("name", CLOSED)
def test_single_state_path_equals_the_vectorised_multipliers_along_a_motion(name):
    """The integrator's sequence of nearby states (warm-started closure), then a jump of 1.5 rad (a warm start far
    off: five Gauss-Newton steps for the four-bar), each state against _kkt on a fresh instance (the zero pose's
    continuation)."""
    model = robid.load_robot(name).model
    single = ClosedChainDynamics(model)
    t = np.linspace(0.0, 1.0, 40)[:, None]
    freq = np.arange(1, model.dof + 1)
    q, qd = 0.5 * np.sin(t * freq), np.cos(t * freq)
    q, qd = np.vstack([q, q[-1] - 1.5 * np.sign(q[-1] + 0.1)]), np.vstack([qd, qd[-1]])
    m_v, h_v, q_v, _ = ClosedChainDynamics(model)._kkt(q, qd)
    for k in range(q.shape[0]):
        m_a, h_a = single.mass_matrix_and_bias(q[k], qd[k])
        assert _relative(m_a, m_v[k]) < ROUNDING
        assert _relative(h_a, h_v[k]) < ROUNDING
        assert np.abs(single._warm[0] - q_v[k]).max() < 1e-12


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-0.8, 0.8), min_size=4, max_size=4), st.lists(st.floats(-2.0, 2.0), min_size=4,
                                                                         max_size=4))
def test_single_state_of_the_palletizer_at_any_state(q, qd):
    """Cold (the continuation) and warm (a step of 0.01 rad from there) against the vectorised path."""
    dyn = _palletizer()
    dyn._warm = None
    q, qd = np.array(q), np.array(qd)
    for state in (q, q + 0.01):
        m_a, h_a = dyn.mass_matrix_and_bias(state, qd)
        m_v, h_v, _, _ = ClosedChainDynamics(dyn.model)._kkt(state[None], qd[None])
        assert _relative(m_a, m_v[0]) < ROUNDING
        assert _relative(h_a, h_v[0]) < ROUNDING


_PALLETIZER = []


def _palletizer() -> ClosedChainDynamics:
    if not _PALLETIZER:
        _PALLETIZER.append(ClosedChainDynamics(robid.load_robot("kr180_pa").model))
    return _PALLETIZER[0]
