"""Physical plausibility checks on link inertial data, with errors that name the field."""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import Link


def check_link(link: Link, where: str) -> None:
    """Mass >= 0; inertia about the COM symmetric positive semidefinite with the triangle inequalities.

    The principal moments of a rigid body satisfy I1 + I2 >= I3 for every permutation (e.g. Traversaro et
    al. 2016, "Identification of fully physical consistent inertial parameters", eq. 6); a small relative
    tolerance admits rounded published values.
    """
    if link.mass < 0:
        raise RobidInputError(f"{where}.mass: must be >= 0, got {link.mass}")
    inertia = link.inertia_tensor_com()
    principal = np.linalg.eigvalsh(inertia)
    scale = max(float(np.max(np.abs(principal))), 1e-300)
    tol = 1e-6 * scale
    if principal[0] < -tol:
        raise RobidInputError(
            f"{where}.inertia: not positive semidefinite (principal moments {principal.tolist()})"
        )
    for k in range(3):
        others = principal.sum() - principal[k]
        if principal[k] > others + tol:
            raise RobidInputError(
                f"{where}.inertia: violates the triangle inequality (principal moments {principal.tolist()}:"
                f" {principal[k]:.6g} > {others:.6g}; published sets that are not physically consistent can be"
                " accepted with inertia_check: false)"
            )


#: a joint position without limits is absurd beyond this magnitude (rad or m): ~16 turns, or 100 m
ABSURD_POSITION = 100.0
#: a pose may lie outside a joint's position limits by this fraction of the range (rounded values)
POSE_TOLERANCE = 0.01


def check_pose(model, pose, what: str = "pose") -> np.ndarray:
    """``pose`` (one position per joint, SI) as an array when it is one the robot can take: finite, within each
    joint's position limits (to :data:`POSE_TOLERANCE` of the range), and, for a joint without limits, of
    magnitude at most :data:`ABSURD_POSITION`; else RobidInputError naming the joint (an error: a pose beyond
    the limits, e.g. in degrees read as radians, has no meaningful modes or loads)."""
    q = np.asarray(pose, dtype=float).ravel()
    if q.size != model.dof:
        raise RobidInputError(f"{what}: {model.dof} joint positions expected for {model.name}, got {q.size}")
    for j, joint in enumerate(model.joints):
        unit = "rad" if joint.revolute else "m"
        if not np.isfinite(q[j]):
            raise RobidInputError(f"{what}: joint {joint.name}: {q[j]} is not a finite position")
        limits = joint.limits.position
        if limits is not None and all(np.isfinite(limits)):
            lo, hi = limits
            slack = POSE_TOLERANCE * (hi - lo)
            if not lo - slack <= q[j] <= hi + slack:
                raise RobidInputError(f"{what}: joint {joint.name}: {q[j]:.6g} {unit} is outside its limits "
                                      f"[{lo:.6g}, {hi:.6g}] {unit} (degrees given as radians? write e.g. 90deg)")
        elif abs(q[j]) > ABSURD_POSITION:
            raise RobidInputError(f"{what}: joint {joint.name}: {q[j]:.6g} {unit} is not a plausible position "
                                  f"(more than {ABSURD_POSITION:g} {unit})")
    return q
