"""The virtual robot's own numeric dynamics of a kinematic tree (the tree of a closed-chain robot), vectorised over
samples. Like robid.simulation.rnea it is written from the robot file's numbers alone and shares no code with
robid's symbolic regressor or robid.model.closure, which it serves to test.

Recursion in joint frames (Luh, Walker, Paul 1980; Featherstone 2008, *Rigid Body Dynamics Algorithms*, section
5.3 for trees): each joint frame J_i is placed in its parent's joint frame by C_i M_i(q_i), C_i = B_parent A_i;
velocities and accelerations run from the base outwards through the parents, and the wrenches back inwards, each
body receiving the sum of its children's (the same formulas as robid.simulation.rnea, whose chain is the tree with
parent i - 1). Besides the joint torques it gives every body's pose in the base frame and its velocity quantities,
which the closed chain's constraint needs (robid.simulation.closed_dynamics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.simulation.rnea import _cross, _homogeneous, _r, _rt


@dataclass(frozen=True, eq=False)
class _TreeJoint:
    revolute: bool
    axis: np.ndarray
    offset: float
    parent: int
    c_rotation: np.ndarray
    c_translation: np.ndarray
    b: np.ndarray  # (4, 4): B_i, joint frame -> body frame
    mass: float
    com: np.ndarray  # in J_i
    inertia: np.ndarray  # about the COM, J_i axes
    k: np.ndarray  # cross-product matrix of the axis, and its square (Rodrigues)
    k2: np.ndarray


@dataclass(frozen=True, eq=False)
class TreeMotion:
    """Per body i (lists of (N, ...) arrays): rotation and origin of J_i in the base frame, and w, wd, a (origin
    acceleration, gravity included as -g) in J_i."""

    rotation: list
    origin: list
    w: list
    wd: list
    a: list


class TreeDynamics:
    """Inverse dynamics and motion of a tree of joints: ``joints`` (robid Joint objects) in tree order with
    ``parents`` (index of the carrying joint, -1 for the base) and ``gravity`` (base frame)."""

    def __init__(self, joints, parents: list[int], gravity):
        self.n = len(joints)
        self.gravity = np.asarray(gravity, dtype=float)
        out = []
        for joint, parent in zip(joints, parents, strict=True):
            g = joint.geometry
            a = _homogeneous(g.a_rotation, g.a_translation)
            b = _homogeneous(g.b_rotation, g.b_translation)
            previous_b = out[parent].b if parent >= 0 else np.eye(4)
            c = previous_b @ a
            rb, pb = b[:3, :3], b[:3, 3]
            link = joint.link
            u = np.asarray(g.axis, dtype=float) / np.linalg.norm(g.axis)
            k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
            out.append(_TreeJoint(joint.revolute, u, float(g.angle_offset if joint.revolute else g.displacement_offset),
                                  parent, c[:3, :3].copy(), c[:3, 3].copy(), b, float(link.mass),
                                  rb @ np.asarray(link.com, dtype=float) + pb, rb @ link.inertia_tensor_com() @ rb.T,
                                  k, k @ k))
        self._joints = tuple(out)

    def _placement(self, jc: _TreeJoint, q: np.ndarray):
        n = q.shape[0]
        if jc.revolute:
            angle = (q + jc.offset)[:, None, None]  # Rodrigues with the constant K, K^2 of the axis
            rot = jc.c_rotation @ (np.eye(3) + np.sin(angle) * jc.k + (1.0 - np.cos(angle)) * jc.k2)
            return rot, np.broadcast_to(jc.c_translation, (n, 3))
        return (np.broadcast_to(jc.c_rotation, (n, 3, 3)),
                jc.c_translation + (q + jc.offset)[:, None] * (jc.c_rotation @ jc.axis))

    def motion(self, q, qd, qdd, gravity_scale) -> tuple[TreeMotion, list]:
        """The forward pass (module docstring) and the placements (rotation, origin of J_i in its parent's J)."""
        n = q.shape[0]
        placements = [self._placement(jc, q[:, i]) for i, jc in enumerate(self._joints)]
        base = (np.broadcast_to(np.eye(3), (n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
                -np.outer(gravity_scale, self.gravity))
        m = TreeMotion([], [], [], [], [])
        for i, (jc, (rot, pos)) in enumerate(zip(self._joints, placements, strict=True)):
            p = jc.parent
            r0, o0, w, wd, a = base if p < 0 else (m.rotation[p], m.origin[p], m.w[p], m.wd[p], m.a[p])
            u = jc.axis
            a = _rt(rot, a + _cross(wd, pos) + _cross(w, _cross(w, pos)))
            w_parent, wd = _rt(rot, w), _rt(rot, wd)
            if jc.revolute:
                w = w_parent + qd[:, i, None] * u
                wd = wd + _cross(w_parent, qd[:, i, None] * u) + qdd[:, i, None] * u
            else:
                w = w_parent
                a = a + 2.0 * _cross(w, qd[:, i, None] * u) + qdd[:, i, None] * u
            m.rotation.append(r0 @ rot)
            m.origin.append(o0 + _r(r0, pos))
            m.w.append(w)
            m.wd.append(wd)
            m.a.append(a)
        return m, placements

    def inverse_dynamics(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """tau_tree = M qdd + C qd + g of the rigid bodies, (N, n)."""
        n = q.shape[0]
        return self.inverse_dynamics_scaled(q, qd, qdd, np.full(n, 1.0 if gravity else 0.0))[0]

    def inverse_dynamics_scaled(self, q, qd, qdd, gravity_scale) -> tuple[np.ndarray, TreeMotion]:
        """The torques with gravity scaled per sample (0 or 1), and the forward pass's motion."""
        n = q.shape[0]
        m, placements = self.motion(q, qd, qdd, gravity_scale)
        forces, moments = [], []
        for i, jc in enumerate(self._joints):
            c = jc.com
            forces.append(jc.mass * (m.a[i] + _cross(m.wd[i], c) + _cross(m.w[i], _cross(m.w[i], c))))
            moments.append(m.wd[i] @ jc.inertia.T + _cross(m.w[i], m.w[i] @ jc.inertia.T) + _cross(c, forces[-1]))
        tau = np.empty((n, self.n))
        for i in range(self.n - 1, -1, -1):  # children come after their parent in tree order
            jc = self._joints[i]
            tau[:, i] = (moments[i] if jc.revolute else forces[i]) @ jc.axis
            if jc.parent >= 0:
                rot, pos = placements[i]
                f_up = _r(rot, forces[i])
                forces[jc.parent] = forces[jc.parent] + f_up
                moments[jc.parent] = moments[jc.parent] + _r(rot, moments[i]) + _cross(pos, f_up)
        return tau, m

    def point(self, m: TreeMotion, body: int, xyz) -> tuple[np.ndarray, np.ndarray]:
        """Base-frame position (N, 3) of the point ``xyz`` of robid body ``body`` (body frame = J . B), and its
        coordinates in J_body."""
        local = self._joints[body].b[:3, :3] @ np.asarray(xyz, dtype=float) + self._joints[body].b[:3, 3]
        return m.origin[body] + _r(m.rotation[body], np.broadcast_to(local, m.origin[body].shape)), local

    def point_acceleration(self, m: TreeMotion, body: int, local: np.ndarray) -> np.ndarray:
        """Base-frame acceleration of a point fixed in J_body (local coordinates), gravity excluded when the
        motion was computed with gravity_scale 0: a + wd x r + w x (w x r), rotated to the base."""
        w, wd, a = m.w[body], m.wd[body], m.a[body]
        r = np.broadcast_to(local, a.shape)
        return _r(m.rotation[body], a + _cross(wd, r) + _cross(w, _cross(w, r)))

    def point_jacobian(self, m: TreeMotion, body: int, position: np.ndarray, ancestors: list[int]) -> np.ndarray:
        """d position / d q (N, 3, n) of a point of ``body`` at base-frame ``position``: z_j x (p - o_j) for its
        revolute ancestors j (prismatic: z_j), zero for the other joints."""
        jac = np.zeros((position.shape[0], 3, self.n))
        for j in ancestors:
            z = _r(m.rotation[j], np.broadcast_to(self._joints[j].axis, position.shape))
            jac[:, :, j] = np.cross(z, position - m.origin[j]) if self._joints[j].revolute else z
        return jac
