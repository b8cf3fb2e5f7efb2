"""Gravity compensator (balancer) torques from the compensator geometry (interfaces.md section 1.2).

A balancer on joint i acts between ``base_point`` b (fixed in body frame i-1, the base frame for i = 1) and
``link_point`` p (fixed in body frame i). With ``T_{i-1,i}(q) = A . M(q) . B`` the link point in frame i-1 is

    r(q) = p_A + R_A (M(q) (R_B p + p_B))          (M: rotation about / translation along the axis u)

so the length and its derivative are

    l(q) = |r(q) - b|,        dl/dq = (r - b) . dr/dq / l
    dr/dq = R_A (u x (R_M(q) (R_B p + p_B)))        revolute
    dr/dq = R_A u                                   prismatic

The force along the line, F > 0 pushing the points apart, is

    spring:  F = stiffness * (free_length - l)
    gas:     F = -p0 * area * (v0 / (v0 - area * (l - l0)))**n

and the balancer exerts the generalised force ``+F dl/dq`` on joint i, so the motor supplies on top of the
rigid-body torque ``tau_comp = -F(l) dl/dq``. In the plant the balancer acts on the link side of its joint.
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import Compensator, Joint, RobotModel, rotation_about_axis


def compensator_force(comp: Compensator, length: np.ndarray, where: str = "compensator") -> np.ndarray:
    """F(l), N, positive pushing the two points apart."""
    length = np.asarray(length, dtype=float)
    if comp.type == "spring":
        return comp.stiffness * (comp.free_length - length)
    if comp.type == "gas":
        volume = comp.v0 - comp.area * (length - comp.l0)
        if np.any(volume <= 0.0):
            raise RobidInputError(
                f"{where}: gas volume v0 - area*(l - l0) <= 0 at l = {float(np.max(length)):.4g} m "
                "(the cylinder would be compressed beyond its gas volume)"
            )
        return -comp.p0 * comp.area * (comp.v0 / volume) ** comp.n
    raise RobidInputError(f"{where}: type: unknown compensator type {comp.type!r} (spring | gas)")


def check_compensator(comp: Compensator, where: str) -> None:
    """Raise RobidInputError naming the missing field."""
    needed = {"spring": ("stiffness", "free_length"), "gas": ("area", "p0", "l0", "v0", "n")}
    if comp.type not in needed:
        raise RobidInputError(f"{where}: type: unknown compensator type {comp.type!r} (spring | gas)")
    for name in needed[comp.type]:
        value = getattr(comp, name)
        if value is None or not np.isfinite(value):
            raise RobidInputError(f"{where}: {name}: required for a {comp.type} compensator")


def compensator_length(joint: Joint, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """l(q) and dl/dq for one joint's compensator, q of shape (N,) -> two (N,) arrays."""
    comp = joint.compensator
    g = joint.geometry
    q = np.atleast_1d(np.asarray(q, dtype=float))
    ra = np.asarray(g.a_rotation, dtype=float)
    pa = np.asarray(g.a_translation, dtype=float)
    u = np.asarray(g.axis, dtype=float)
    u = u / np.linalg.norm(u)
    b = np.asarray(comp.base_point, dtype=float)
    p_after_m = np.asarray(g.b_rotation, dtype=float) @ np.asarray(comp.link_point, dtype=float) + np.asarray(
        g.b_translation, dtype=float
    )
    n = q.shape[0]
    if joint.revolute:
        s = np.empty((n, 3))
        for k in range(n):  # small N in the integrator; vectorising would not pay for the clarity lost
            s[k] = rotation_about_axis(u, q[k] + g.angle_offset) @ p_after_m
        r = pa + s @ ra.T
        dr = np.cross(u, s) @ ra.T
    else:
        r = pa + (np.outer(q + g.displacement_offset, u) + p_after_m) @ ra.T
        dr = np.broadcast_to(ra @ u, (n, 3))
    d = r - b
    length = np.linalg.norm(d, axis=1)
    return length, np.einsum("ni,ni->n", d, dr) / length


class CompensatorTorques:
    """tau_comp(q) = -F(l(q)) dl/dq for every joint with a compensator; zero elsewhere."""

    def __init__(self, model: RobotModel):
        self.model = model
        self.indices = tuple(i for i, j in enumerate(model.joints) if j.compensator is not None)
        for i in self.indices:
            check_compensator(model.joints[i].compensator, self._where(i))

    def _where(self, i: int) -> str:
        joint = self.model.joints[i]
        return f"{self.model.source or self.model.name}: joint {joint.name}: compensator"

    def __bool__(self) -> bool:
        return bool(self.indices)

    def torque(self, q: np.ndarray) -> np.ndarray:
        """(N, dof) torques the motors supply against the balancers."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        out = np.zeros_like(q)
        for i in self.indices:
            joint = self.model.joints[i]
            length, dl = compensator_length(joint, q[:, i])
            out[:, i] = -compensator_force(joint.compensator, length, self._where(i)) * dl
        return out
