"""The workspace limits of an executed program: the trajectory file's Cartesian limits and its collision section
(robid.excitation.collision) evaluated on the positions the controller executes, sample by sample at its
interpolation rate (docs/excitation.md, "Collisions").

The design certifies its own path in continuous time; a program's motion is not exactly that path: the fade-in
and fade-out of a periodic design scale the deviation from the centre (poses the design never visits), and each
controller interpolates between its points. The parse-back therefore checks every executed sample against the
same constraints as the design: a Cartesian point's half-spaces (slack n . p - d >= 0) and each distance between
volumes at least its clearance. The robot is the one the design names (``design.robot``); a trajectory file with
such constraints whose robot cannot be loaded is refused, not exported unchecked.
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.cartesian import chain_frames, point_positions_and_jacobians
from robid.excitation.collision import collision_limits
from robid.excitation.trajectory_file import TrajectoryFile, cartesian_from_dicts

#: metres a sampled distance may fall short of its bound (rounding of the program's points)
TOLERANCE = 1e-9


def workspace_constraints(tf: TrajectoryFile, model=None) -> tuple[object, list]:
    """(model, [(kind, constraint)]): the Cartesian points of ``tf`` (kind ``cartesian``) and the constraints of
    its collision section (kind ``collision``); ``(None, [])`` when it has none."""
    section = (tf.design or {}).get("collision") or {}
    if not tf.cartesian and not section:
        return None, []
    if model is None:
        from robid.model.loader import read_robot

        name = (tf.design or {}).get("robot")
        if not name:
            raise RobidInputError("the trajectory file has Cartesian or collision limits but names no robot "
                                  "(design.robot): the program cannot be checked against them")
        try:
            model = read_robot(str(name))
        except (RobidInputError, OSError) as exc:
            raise RobidInputError(f"robot {name} of the design cannot be loaded to check the program's Cartesian "
                                  f"and collision limits: {exc}") from None
    if model.dof != tf.trajectory.dof:
        raise RobidInputError(f"robot {model.name} has {model.dof} joints, the design {tf.trajectory.dof}")
    return model, ([("cartesian", c) for c in cartesian_from_dicts(tf.cartesian)]
                   + [("collision", c) for c in collision_limits(section, model, "design.collision")])


def workspace_items(q: np.ndarray, tf: TrajectoryFile, model=None) -> tuple:
    """ProgramLimit items (quantity ``cartesian`` or ``collision``, named by the point or the pair): the smallest
    sampled slack of each Cartesian half-space (limit 0) and the smallest distance of each pair (limit its
    clearance) over the executed positions q (N, dof)."""
    from robid.excitation.programs.limit_item import ProgramLimit

    model, constraints = workspace_constraints(tf, model)
    if not constraints:
        return ()
    frames = chain_frames(model, q)
    worst: dict[tuple[str, str], tuple[float, float]] = {}  # (quantity, name) -> (value - limit, limit)
    for kind, c in constraints:
        if hasattr(c, "distances"):
            pairs = [(float(np.min(c.distances(model, q, frames)[0])), c.clearance)]
        else:
            p, _ = point_positions_and_jacobians(model, q, c, frames)
            pairs = [(float(np.min(p @ n - d)), 0.0) for n, d in zip(c.normals, c.offsets, strict=True)]
        for value, limit in pairs:
            key = (kind, c.name)
            if key not in worst or value - limit < worst[key][0] - worst[key][1]:
                worst[key] = (value, limit)
    return tuple(ProgramLimit(kind, name, value, limit, value >= limit - TOLERANCE)
                 for (kind, name), (value, limit) in worst.items())
