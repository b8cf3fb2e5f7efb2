"""Starting points of the multi-start design: random search over coefficient directions, optionally screened on a
coarse grid.

Each candidate is a direction in the coefficient space (dof, 2H): standard normal values, harmonic l scaled by
1/l (a position amplitude a_l/(l w) of similar size for every harmonic), projected orthogonally onto the
rest-to-rest subspace. It is scaled to ``fill`` (80 %) of the largest amplitude that keeps every certified
limit row >= 0 (bisection: the joint rows are homogeneous of degree one in the amplitude, apart from the
centre offset of the position rows). The candidates are ranked by the criterion on a coarse grid of
``coarse_points`` samples of one period, and the best ``starts`` (ties: lower candidate index) are the starting
points, best first. With ``candidates`` = ``starts`` this is plain random search without screening.

Everything is drawn from ``numpy.random.default_rng(seed)`` in a fixed order, so the points depend only on
the problem and the seed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def candidate_directions(rng: np.random.Generator, n: int, dof: int, harmonics: int) -> np.ndarray:
    """(n, dof, 2H) standard normal coefficient directions drawn in order, harmonic l scaled by 1/l."""
    ls = np.arange(1, harmonics + 1, dtype=float)
    scale = np.concatenate([ls, ls])
    return np.stack([rng.standard_normal((dof, 2 * harmonics)) / scale for _ in range(n)])


def largest_feasible_scale(
    feasible: Callable[[np.ndarray], bool], z: np.ndarray, upper: float | None = None, steps: int = 40
) -> float:
    """Largest alpha in [0, upper] (bisection, ``steps`` halvings) with feasible(alpha z); without ``upper``,
    alpha grows by 4 from 1 until infeasible first. 0 if only the centre pose is feasible."""
    if upper is None:
        upper = 1.0
        while feasible(upper * z) and upper < 1e6:
            upper *= 4.0
    if feasible(upper * z):
        return upper
    lo, hi = 0.0, upper
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if feasible(mid * z):
            lo = mid
        else:
            hi = mid
    return lo


def screened_starts(
    rng: np.random.Generator,
    starts: int,
    candidates: int,
    null: np.ndarray,
    dof: int,
    harmonics: int,
    feasible: Callable[[np.ndarray], bool],
    coarse_objective: Callable[[np.ndarray], float],
    fill: float = 0.8,
    lift: Callable[[np.ndarray, int], np.ndarray] | None = None,
) -> tuple[list[np.ndarray], list[float]]:
    """The ``starts`` best of ``max(candidates, starts)`` feasible candidates in the coordinates z (dof, r) of
    X_j = z_j ``null``^T, best first, with their coarse-grid objective values. ``lift(z, i)`` (optional) then
    raises the joints of candidate i that move too little to the excitation floor, within the limits
    (:func:`robid.excitation.velocity_floor.lift_to_floor`)."""
    n = max(int(candidates), int(starts))
    directions = candidate_directions(rng, n, dof, harmonics)
    points, scores = [], []
    for i, x in enumerate(directions):
        z = x @ null  # orthogonal projection onto the admissible subspace, in its coordinates
        z = fill * largest_feasible_scale(feasible, z) * z
        if lift is not None:
            z = lift(z, i)
        points.append(z)
        scores.append(coarse_objective(z) if n > starts else 0.0)
    order = sorted(range(n), key=lambda i: (scores[i], i))[:starts]
    return [points[i] for i in order], [scores[i] for i in order]
