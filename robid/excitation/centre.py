"""The centre pose of a design when the SPEC gives none: a pose with room to move (docs/excitation.md, "Centre").

The middle of every position range is the natural centre when only joint limits apply. With Cartesian limits or
torque limits it can be the worst pose there is: the UR10e's mid-range pose is its arm stretched out horizontally,
the flange 6 cm above the base plane and the shoulder holding its largest gravity torque, so that a floor at 5 cm
leaves the design no motion at all. Then the centre is the pose, among the middle of the ranges and ``CANDIDATES``
poses drawn from the middle half of each range (``default_rng(seed)``; a range wider than a turn is taken as the
turn around its middle), that leaves the most room at rest: the largest smallest normalised slack,

    room(q) = min( min_j (distance of q_j to its nearer narrowed limit) / min(half range, pi),
                   min_k (n_k . p_k(q) - d_k) / ROOM_DISTANCE,
                   min_j 1 - |tau_j(q)| / tau_max_j ),

positions, every Cartesian half-space (its point's height above it in metres, over ROOM_DISTANCE) and the holding
torques of the nominal model. The middle of the ranges is kept unless another candidate has more room than twice
its own (a small gain is not worth a centre the user did not expect); the note says which pose was taken and why.
"""

from __future__ import annotations

import math

import numpy as np

from robid.excitation.cartesian import chain_frames

#: candidate centres drawn besides the middle of the ranges
CANDIDATES = 512
#: Cartesian room in metres that counts as much as a full position half-range
ROOM_DISTANCE = 0.5


def room(q: np.ndarray, limits, model, cartesian=(), torque_fn=None) -> np.ndarray:
    """room(q) of N candidate centres (N, dof) (module docstring; ``limits`` already narrowed by the margin)."""
    q = np.atleast_2d(q)
    lo, hi = limits.position[:, 0], limits.position[:, 1]
    half = np.minimum((hi - lo) / 2.0, math.pi)
    scores = [np.min(np.minimum(q - lo, hi - q) / half, axis=1)]
    if cartesian:
        frames = chain_frames(model, q)
        poses = frames[0]
        for c in cartesian:
            if hasattr(c, "distances"):  # a distance between volumes (robid.excitation.collision)
                scores.append((c.distances(model, q, frames)[0] - c.clearance) / ROOM_DISTANCE)
                continue
            p = poses[:, c.body, :3, :3] @ c.point + poses[:, c.body, :3, 3]
            scores.append(np.min(p @ c.normals.T - c.offsets, axis=1) / ROOM_DISTANCE)
    if torque_fn is not None and np.any(np.isfinite(limits.torque)):
        tau = np.asarray(torque_fn(q, np.zeros_like(q), np.zeros_like(q)), dtype=float)
        finite = np.isfinite(limits.torque)
        scores.append(np.min(1.0 - np.abs(tau[:, finite]) / limits.torque[finite], axis=1))
    return np.min(np.array(scores), axis=0)


def choose_center(limits, margin: float, model, cartesian=(), torque_fn=None, seed: int = 0,
                  names=()) -> tuple[np.ndarray, str | None]:
    """(the centre, a note when it is not the middle of the ranges): module docstring."""
    middle = limits.position.mean(axis=1)
    if not cartesian and (torque_fn is None or not np.any(np.isfinite(limits.torque))):
        return middle, None
    narrowed = limits.with_margin(margin)
    lo, hi = narrowed.position[:, 0], narrowed.position[:, 1]
    span = np.minimum(hi - lo, 2.0 * math.pi)
    rng = np.random.default_rng([seed, 7])
    draws = middle + (rng.random((CANDIDATES, middle.size)) - 0.5) * 0.5 * span
    candidates = np.vstack([middle, draws])
    scores = room(candidates, narrowed, model, cartesian, torque_fn)
    best = int(np.argmax(scores))
    if best == 0 or scores[best] <= 2.0 * max(scores[0], 0.0) and scores[0] > 0:
        return middle, None
    names = names or tuple(f"q{j + 1}" for j in range(middle.size))
    pose = ", ".join(f"{n} {math.degrees(v):.1f}" for n, v in zip(names, candidates[best], strict=True))
    why = "violates a Cartesian or torque limit at rest" if scores[0] <= 0 else \
        f"leaves room {scores[0]:.2f} at rest (the most room of {CANDIDATES} candidate poses: {scores[best]:.2f})"
    return candidates[best], (f"center: the middle of the position ranges {why}; centre taken at ({pose}) deg, room "
                              f"{scores[best]:.2f} (positions, Cartesian points per {ROOM_DISTANCE:g} m, holding "
                              "torques); give center: to choose it")


def workspace_room(problem) -> str:
    """The end of the floor error when Cartesian or collision limits apply: the one with the least room at the
    centre pose, and how much (metres), since a centre close to a table or a fixture leaves no room to move."""
    from robid.excitation.constraints import check_trajectory
    from robid.excitation.fourier import FourierTrajectory

    if not problem.cartesian:
        return ""
    still = FourierTrajectory(problem.period, problem.center, np.zeros((problem.dof, 1)), np.zeros((problem.dof, 1)))
    check = check_trajectory(still, problem.limits.with_margin(problem.margin), problem.cartesian, problem.model)
    items = [i for i in check.items if i.quantity.startswith(("cartesian", "collision"))]
    if not items:
        return ""
    tight = min(items, key=lambda i: i.sampled_slack)
    return (f"; at the centre, {tight.name} has {tight.sampled_slack:.3g} m of room ({tight.quantity}): move center "
            "away from it")
