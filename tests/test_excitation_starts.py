"""Starting points: random search, optionally screened on a coarse grid, deterministic for a seed."""

import numpy as np

from robid.excitation.constraints import JointLimitSet
from robid.excitation.optimiser import DesignProblem, _Evaluator, initial_points
from robid.excitation.planar2r import Planar2R
from robid.excitation.starts import screened_starts

REG = Planar2R().base_parameters().regressor
LIMITS = JointLimitSet.create(2, [(-2.5, 2.5), (-2.0, 2.0)], [1.5, 2.0], [3.0, 4.0])


def _problem(**kw):
    base = dict(period=6.0, harmonics=5, center=[0.2, 0.4], limits=LIMITS, grid_points=120, starts=3, seed=3)
    base.update(kw)
    return DesignProblem(**base)


def test_starting_points_are_deterministic_for_a_seed():
    problem = _problem()
    a = initial_points(problem, _Evaluator(problem, REG))
    b = initial_points(problem, _Evaluator(problem, REG))
    c = initial_points(_problem(seed=4), _Evaluator(_problem(seed=4), REG))
    assert len(a) == 3 and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not any(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_screened_starts_are_feasible_and_the_best_candidates_first():
    problem = _problem()
    ev = _Evaluator(problem, REG)
    rng = np.random.default_rng(problem.seed)
    points, scores = screened_starts(rng, 3, 24, ev.null, 2, 5, ev.feasible, ev.coarse_objective)
    assert scores == sorted(scores)
    for z in points:
        assert ev.feasible(z)
        # scaled to 80 % of the largest feasible amplitude: 1.25 z is at the edge, 1.3 z beyond it
        assert ev.feasible(1.24 * z) and not ev.feasible(1.3 * z)
    # every candidate that was left out scores no better than the last one kept
    rng = np.random.default_rng(problem.seed)
    candidates, _ = screened_starts(rng, 24, 24, ev.null, 2, 5, ev.feasible, ev.coarse_objective)
    assert sorted(ev.coarse_objective(z) for z in candidates)[:3] == scores
