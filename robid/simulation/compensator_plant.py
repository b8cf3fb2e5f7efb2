"""The virtual robot's gravity compensators: torques from the compensator geometry (docs/interfaces.md
section 1.2).

Deliberately independent of robid.model.compensator, which the identification uses: the simulator is the oracle of
the end-to-end tests, so a mistake in one copy of the geometry or the force laws shows up as a mismatch instead
of sitting on both sides.

A compensator on joint i acts between ``base_point`` b (fixed in body frame i-1, the base frame for i = 1) and
``link_point`` p (fixed in body frame i). With ``T_{i-1,i}(q) = A . M(q) . B`` the link point in frame i-1 is

    r(q) = p_A + R_A (M(q) (R_B p + p_B))          (M: rotation about / translation along the axis u)

so the length and its derivative are

    l(q) = |r(q) - b|,        dl/dq = (r - b) . dr/dq / l
    dr/dq = R_A (u x (R_M(q) (R_B p + p_B)))        revolute
    dr/dq = R_A u                                   prismatic

The force along the line, F > 0 pushing the points apart, is

    spring:  F = stiffness * (free_length - l)
    gas:     F = -p0 * area * (v0 / (v0 - area * (l - l0)))**n

and the compensator exerts the generalised force ``+F dl/dq`` on joint i, so the motor supplies on top of the
rigid-body torque ``tau_comp = -F(l) dl/dq``. In the plant the compensator acts on the link side of its joint.
"""

from __future__ import annotations

import math

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import Compensator, Joint, RobotModel


def compensator_force(comp: Compensator, length: np.ndarray, where: str = "compensator") -> np.ndarray:
    """F(l), N, positive pushing the two points apart."""
    length = np.asarray(length, dtype=float)
    if comp.type not in ("spring", "gas"):
        raise RobidInputError(f"{where}: type: unknown compensator type {comp.type!r} (spring | gas)")
    if comp.type == "gas" and np.any(_gas_volume(comp, length) <= 0.0):
        raise _overcompressed(where, float(np.max(length)))
    return _force_law(comp, length)


def _force_law(comp: Compensator, length):
    """spring: F = stiffness * (free_length - l); gas: F = -p0 * area * (v0 / (v0 - area*(l - l0)))**n.
    Arrays or plain floats (the integrator's path); the gas volume is checked by the caller."""
    if comp.type == "spring":
        return comp.stiffness * (comp.free_length - length)
    return -comp.p0 * comp.area * (comp.v0 / _gas_volume(comp, length)) ** comp.n


def _gas_volume(comp: Compensator, length):
    """v0 - area*(l - l0), arrays or plain floats."""
    return comp.v0 - comp.area * (length - comp.l0)


def _overcompressed(where: str, length: float) -> RobidInputError:
    """The robot file's cylinder would be compressed beyond its gas volume on this motion."""
    return RobidInputError(
        f"{where}: gas volume v0 - area*(l - l0) <= 0 at l = {length:.4g} m "
        "(the cylinder would be compressed beyond its gas volume)"
    )


def check_compensator(comp: Compensator, where: str) -> None:
    """Raise RobidInputError naming the missing field."""
    needed = {"spring": ("stiffness", "free_length"), "gas": ("area", "p0", "l0", "v0", "n")}
    if comp.type not in needed:
        raise RobidInputError(f"{where}: type: unknown compensator type {comp.type!r} (spring | gas)")
    for name in needed[comp.type]:
        value = getattr(comp, name)
        if value is None or not np.isfinite(value):
            raise RobidInputError(f"{where}: {name}: required for a {comp.type} compensator")


def _constants(joint: Joint) -> tuple:
    """Constants of the compensator geometry: the link point after M is v(q) = v0 + sin(q') K v0 + (1 - cos(q')) K^2 v0
    (Rodrigues, q' = q + offset) for a revolute joint, v0 + q' u for a prismatic one."""
    g = joint.geometry
    comp = joint.compensator
    ra = np.asarray(g.a_rotation, dtype=float)
    u = np.asarray(g.axis, dtype=float)
    u = u / np.linalg.norm(u)
    k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    v0 = np.asarray(g.b_rotation, dtype=float) @ np.asarray(comp.link_point, dtype=float) + np.asarray(
        g.b_translation, dtype=float
    )
    offset = g.angle_offset if joint.revolute else g.displacement_offset
    d0 = np.asarray(g.a_translation, dtype=float) - np.asarray(comp.base_point, dtype=float)
    return ra, u, k, v0, float(offset), d0


def compensator_length(joint: Joint, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """l(q) and dl/dq for one joint's compensator, q of shape (N,) -> two (N,) arrays."""
    ra, u, k, v0, offset, d0 = _constants(joint)
    q = np.atleast_1d(np.asarray(q, dtype=float)) + offset
    if joint.revolute:
        v = v0 + np.outer(np.sin(q), k @ v0) + np.outer(1.0 - np.cos(q), k @ k @ v0)
        dv = v @ k.T  # u x v
    else:
        v = v0 + np.outer(q, u)
        dv = np.broadcast_to(u, v.shape)
    d = d0 + v @ ra.T
    dr = dv @ ra.T
    length = np.sqrt(np.einsum("ni,ni->n", d, d))
    return length, np.einsum("ni,ni->n", d, dr) / length


class CompensatorTorques:
    """tau_comp(q) = -F(l(q)) dl/dq for every joint with a compensator; zero elsewhere."""

    def __init__(self, model: RobotModel):
        self.model = model
        self.indices = tuple(i for i, j in enumerate(model.joints) if j.compensator is not None)
        self._scalar = []
        for i in self.indices:
            joint = model.joints[i]
            check_compensator(joint.compensator, self._where(i))
            ra, u, k, v0, offset, d0 = _constants(joint)
            # link point minus base point in frame i-1: d = d0 + Ra v(q);  dd/dq = Ra (u x v) or Ra u
            self._scalar.append(
                (
                    i,
                    joint.revolute,
                    offset,
                    (ra @ v0 + d0).tolist(),
                    (ra @ k @ v0).tolist(),
                    (ra @ k @ k @ v0).tolist(),
                    (ra @ u).tolist(),
                )
            )

    def _where(self, i: int) -> str:
        joint = self.model.joints[i]
        return f"{self.model.source or self.model.name}: joint {joint.name}: compensator"

    def __bool__(self) -> bool:
        return bool(self.indices)

    def torque(self, q: np.ndarray) -> np.ndarray:
        """(N, dof) torques the motors supply against the compensators."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        out = np.zeros_like(q)
        for i in self.indices:
            joint = self.model.joints[i]
            length, dl = compensator_length(joint, q[:, i])
            out[:, i] = -compensator_force(joint.compensator, length, self._where(i)) * dl
        return out

    def torque_single(self, q: list[float]) -> list[tuple[int, float]]:
        """[(joint index, tau_comp)] for one configuration, in plain Python floats (the integrator's path).

        Revolute: d(q) = c0 + sin(q') c1 + (1 - cos(q')) c2 with c0 = Ra v0 + d0, c1 = Ra K v0, c2 = Ra K^2 v0, and
        dd/dq = Ra K v = cos(q') c1 + sin(q') c2 (as K^3 = -K for a unit axis).
        """
        out = []
        for i, revolute, offset, c0, c1, c2, rau in self._scalar:
            x = q[i] + offset
            if revolute:
                s, c = math.sin(x), math.cos(x)
                d = [c0[j] + s * c1[j] + (1.0 - c) * c2[j] for j in range(3)]
                dd = [c * c1[j] + s * c2[j] for j in range(3)]
            else:
                d = [c0[j] + x * rau[j] for j in range(3)]
                dd = rau
            length = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            dl = (d[0] * dd[0] + d[1] * dd[1] + d[2] * dd[2]) / length
            comp = self.model.joints[i].compensator
            if comp.type == "gas" and _gas_volume(comp, length) <= 0.0:
                raise _overcompressed(self._where(i), length)
            out.append((i, -_force_law(comp, length) * dl))
        return out
