"""The optimiser's criterion gradient (SVD of the base regressor, chained to the Fourier coefficients) against
central finite differences of the criterion itself."""

import numpy as np
import pytest

import robid
from robid.excitation.channels import channel_derivatives
from robid.excitation.constraints import JointLimitSet
from robid.excitation.optimiser import DesignProblem, _Evaluator
from robid.excitation.planar2r import Planar2R

TERMS = ("rigid", "rotor", "viscous", "coulomb", "offset")


def _evaluator(regressor, dof, criterion, rest_order, harmonics=5):
    limits = JointLimitSet.create(dof, [(-3.0, 3.0)] * dof, [2.0] * dof, [4.0] * dof)
    problem = DesignProblem(period=6.0, harmonics=harmonics, center=np.linspace(0.2, -0.3, dof), limits=limits,
                            criterion=criterion, rest_order=rest_order, grid_points=80)
    return _Evaluator(problem, regressor)


def _relative_error(ev, seed):
    z = np.random.default_rng(seed).standard_normal(ev.p.dof * ev.r) * 0.4
    grad = ev.gradient(z)
    # the criterion itself carries rounding noise (eigenvalues of W^T W, kappa^2 eps relative): steps much below
    # 1e-5 would measure that noise rather than the gradient
    h = 1e-5
    num = np.array([(ev.objective(z + h * e) - ev.objective(z - h * e)) / (2 * h) for e in np.eye(z.size)])
    return np.max(np.abs(grad - num)) / np.max(np.abs(num))


@pytest.mark.parametrize("criterion", ["cond", "cond_raw", "cond_both", "logdet"])
@pytest.mark.parametrize("rest_order", [None, 4])
def test_gradient_matches_finite_differences_on_the_planar_stand_in(criterion, rest_order):
    ev = _evaluator(Planar2R().base_parameters().regressor, 2, criterion, rest_order)
    assert _relative_error(ev, 1) < 1e-6


@pytest.mark.parametrize("criterion", ["cond_both", "logdet"])
def test_gradient_matches_finite_differences_on_a_derived_robot(criterion):
    robot = robid.load_robot("tx200_3axis", terms=TERMS)
    ev = _evaluator(robot.base_parameters().regressor, 3, criterion, 4, harmonics=6)
    assert _relative_error(ev, 2) < 1e-6


def test_channel_derivatives_are_exact_where_the_model_is_polynomial():
    # F = qd^2 + 3 sign(qd) + 2 qdd + sin(q): the qd and qdd stencils are exact, the q difference is central
    def fn(q, qd, qdd):
        return (qd**2 + 3 * np.sign(qd) + 2 * qdd + np.sin(q))[:, :, None]

    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.standard_normal((50, 2)) for _ in range(3))
    qd[0, 0] = 0.0  # at rest: the step must not cross the sign() jump
    for kind, j, d in channel_derivatives(fn, q, qd, qdd):
        expected = [np.cos(q[:, j]), 2 * qd[:, j], np.full(50, 2.0)][kind]
        other = 1 - j
        np.testing.assert_allclose(d[:, j, 0], expected, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(d[:, other, 0], 0.0, atol=1e-9)
