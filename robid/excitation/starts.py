"""Starting points of the multi-start design: a Latin hypercube of coefficient directions screened on a coarse grid.

Each candidate is a direction in the coefficient space (dof, 2H): a Latin hypercube sample of the unit cube
(McKay, Beckman, Conover, Technometrics 21(2), 1979: every coordinate's n strata each hit once), mapped to
standard normal values through the inverse normal distribution function, harmonic l scaled by 1/l (a
position amplitude a_l/(l w) of similar size for every harmonic), then projected orthogonally onto the
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
import scipy.special


def latin_hypercube(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """n points of [0, 1)^dim, one in each of the n strata of every coordinate (random permutation per
    coordinate, uniform position inside the stratum)."""
    strata = np.stack([rng.permutation(n) for _ in range(dim)], axis=1)
    return (strata + rng.random((n, dim))) / n


def candidate_directions(rng: np.random.Generator, n: int, dof: int, harmonics: int) -> np.ndarray:
    """(n, dof, 2H) normal coefficient directions from a Latin hypercube, harmonic l scaled by 1/l."""
    u = latin_hypercube(rng, n, dof * 2 * harmonics)
    u = np.clip(u, 1e-12, 1.0 - 1e-12)
    x = np.sqrt(2.0) * scipy.special.erfinv(2.0 * u - 1.0)  # inverse standard normal CDF
    ls = np.arange(1, harmonics + 1, dtype=float)
    return x.reshape(n, dof, 2 * harmonics) / np.concatenate([ls, ls])


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
) -> tuple[list[np.ndarray], list[float]]:
    """The ``starts`` best of ``max(candidates, starts)`` feasible candidates in the coordinates z (dof, r) of
    X_j = z_j ``null``^T, best first, with their coarse-grid objective values."""
    n = max(int(candidates), int(starts))
    directions = candidate_directions(rng, n, dof, harmonics)
    points, scores = [], []
    for x in directions:
        z = x @ null  # orthogonal projection onto the admissible subspace, in its coordinates
        z = fill * largest_feasible_scale(feasible, z) * z
        points.append(z)
        scores.append(coarse_objective(z) if n > starts else 0.0)
    order = sorted(range(n), key=lambda i: (scores[i], i))[:starts]
    return [points[i] for i in order], [scores[i] for i in order]
