"""The virtual robot's own numeric dynamics of a kinematic tree (the tree of a closed-chain robot), vectorised over
samples. Like robid.simulation.rnea it is written from the robot file's numbers alone and shares no code with
robid's symbolic regressor or robid.model.closure, which it serves to test.

Recursion in joint frames (Luh, Walker, Paul 1980; Featherstone 2008, *Rigid Body Dynamics Algorithms*, section
5.3 for trees): each joint frame J_i is placed in its parent's joint frame by C_i M_i(q_i), C_i = B_parent A_i;
velocities and accelerations run from the base outwards through the parents, and the wrenches back inwards, each
body receiving the sum of its children's (the same formulas as robid.simulation.rnea, whose chain is the tree with
parent i - 1). Besides the joint torques it gives every body's pose in the base frame and its velocity quantities,
which the closed chain's constraint needs (robid.simulation.closed_dynamics). :class:`ScalarTree` is the same
recursion for ONE state in plain-Python scalars (the integrator's path), with M by composite rigid bodies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.simulation.rnea import _cross, _homogeneous, _r, _rt
from robid.simulation.single_state import _flat, _sym_times, moved_composite


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

    def poses(self, q, placements=None) -> TreeMotion:
        """The forward pass's rotations and origins only (w, wd, a empty): the closure's gap and Jacobian."""
        n = q.shape[0]
        placements = [self._placement(jc, q[:, i]) for i, jc in enumerate(self._joints)] if placements is None \
            else placements
        m = TreeMotion([], [], [], [], [])
        for jc, (rot, pos) in zip(self._joints, placements, strict=True):
            if jc.parent < 0:
                r0, o0 = np.broadcast_to(np.eye(3), (n, 3, 3)), np.zeros((n, 3))
            else:
                r0, o0 = m.rotation[jc.parent], m.origin[jc.parent]
            m.rotation.append(r0 @ rot)
            m.origin.append(o0 + _r(r0, pos))
        return m

    def motion(self, q, qd, qdd, gravity_scale) -> tuple[TreeMotion, list]:
        """The forward pass (module docstring) and the placements (rotation, origin of J_i in its parent's J)."""
        n = q.shape[0]
        placements = [self._placement(jc, q[:, i]) for i, jc in enumerate(self._joints)]
        base = (np.zeros((n, 3)), np.zeros((n, 3)), -np.outer(gravity_scale, self.gravity))
        m = self.poses(q, placements)
        for i, (jc, (rot, pos)) in enumerate(zip(self._joints, placements, strict=True)):
            p = jc.parent
            w, wd, a = base if p < 0 else (m.w[p], m.wd[p], m.a[p])
            u = jc.axis
            a = _rt(rot, a + _cross(wd, pos) + _cross(w, _cross(w, pos)))
            w_parent, wd = _rt(rot, w), _rt(rot, wd)
            if jc.revolute:
                w = w_parent + qd[:, i, None] * u
                wd = wd + _cross(w_parent, qd[:, i, None] * u) + qdd[:, i, None] * u
            else:
                w = w_parent
                a = a + 2.0 * _cross(w, qd[:, i, None] * u) + qdd[:, i, None] * u
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
        local = self.local_point(body, xyz)
        return m.origin[body] + _r(m.rotation[body], np.broadcast_to(local, m.origin[body].shape)), local

    def local_point(self, body: int, xyz) -> np.ndarray:
        """Coordinates in J_body of the point ``xyz`` of robid body ``body`` (body frame = J . B)."""
        return self._joints[body].b[:3, :3] @ np.asarray(xyz, dtype=float) + self._joints[body].b[:3, 3]

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


def _rot(r, x0, x1, x2):
    """R x for a flat row-major 3x3 R."""
    return r[0] * x0 + r[1] * x1 + r[2] * x2, r[3] * x0 + r[4] * x1 + r[5] * x2, r[6] * x0 + r[7] * x1 + r[8] * x2


def _rot_t(r, x0, x1, x2):
    """R^T x for a flat row-major 3x3 R."""
    return r[0] * x0 + r[3] * x1 + r[6] * x2, r[1] * x0 + r[4] * x1 + r[7] * x2, r[2] * x0 + r[5] * x1 + r[8] * x2


class ScalarTree:
    """The tree's dynamics at ONE state in plain-Python scalars, for the integrator's hot path (numpy's per-call
    overhead on 3-vectors dominates there; the same reason as robid.simulation.single_state for serial chains).

    3x3 matrices are flat row-major 9-tuples, symmetric ones (xx, xy, xz, yy, yz, zz), vectors 3-tuples. The same
    recursion as :class:`TreeDynamics` (module docstring) with qdd = 0 and gravity added afterwards (a_i gains
    R0_i^T (-g), R0_i the rotation of J_i in the base frame: the recursion is linear in a), the body equations in
    origin form (h = m c, I_o about the joint frame's origin)::

        F = m a + wd x h + w x (w x h),    N = I_o wd + w x (I_o w) + h x a

    and the mass matrix by the composite-rigid-body algorithm on the tree (Featherstone 2008, section 6.2), each
    composite moved into its parent's frame with (R, p) of its placement::

        m' = m,  h' = R h + m p,  I' = R I R^T + m (p.p E - p p^T) + 2 (p.h~) E - p h~^T - h~ p^T   (h~ = R h)

    unit motion of joint i: revolute (H, L) = (I_o u, u x h), prismatic (h x u, m u), moved up the ancestors j
    with L' = R L, H' = R H + p x L'; M_ji = u_j . H (revolute j) or u_j . L (prismatic j).
    """

    def __init__(self, tree: TreeDynamics):
        self.items = []
        for jc in tree._joints:
            c = np.asarray(jc.com)
            i_o = jc.inertia + jc.mass * (c @ c * np.eye(3) - np.outer(c, c))
            rc = jc.c_rotation
            self.items.append((jc.revolute, _flat(jc.axis), jc.offset, jc.parent, _flat(rc), _flat(rc @ jc.k),
                               _flat(rc @ jc.k2), _flat(jc.c_translation), _flat(rc @ jc.axis), jc.mass,
                               _flat(jc.mass * c), _flat(i_o[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])))
        self.gravity = _flat(tree.gravity)

    def placements(self, q):
        """[(R, p)] of J_i in its parent's joint frame: R = Rc + sin(q') Rc K + (1 - cos(q')) Rc K^2, p = pc
        (revolute; Rodrigues), R = Rc, p = pc + q' Rc u (prismatic)."""
        out = []
        for (rev, _u, off, _p, rc, rk, rk2, pc, rcu, *_), qi in zip(self.items, q, strict=True):
            if rev:
                s, c = math.sin(qi + off), 1.0 - math.cos(qi + off)
                out.append((tuple(rc[k] + s * rk[k] + c * rk2[k] for k in range(9)), pc))
            else:
                d = qi + off
                out.append((rc, (pc[0] + d * rcu[0], pc[1] + d * rcu[1], pc[2] + d * rcu[2])))
        return out

    def poses(self, pl):
        """Rotations (flat) and origins of every J_i in the base frame."""
        rotation, origin = [], []
        for (*_, parent, _rc, _rk, _rk2, _pc, _rcu, _m, _h, _io), (r, p) in zip(self.items, pl, strict=True):
            if parent < 0:
                rotation.append(r)
                origin.append(p)
                continue
            a, o = rotation[parent], origin[parent]
            rotation.append(tuple(a[3 * i] * r[j] + a[3 * i + 1] * r[3 + j] + a[3 * i + 2] * r[6 + j]
                                  for i in range(3) for j in range(3)))
            x = _rot(a, *p)
            origin.append((o[0] + x[0], o[1] + x[1], o[2] + x[2]))
        return rotation, origin

    def velocities(self, pl, qd):
        """(w, wd, a) of every J_i in its own axes at qdd = 0, without gravity."""
        out = []
        for (rev, (u0, u1, u2), _o, parent, *_), (r, (p0, p1, p2)), v in zip(self.items, pl, qd, strict=True):
            w0, w1, w2, d0, d1, d2, a0, a1, a2 = out[parent] if parent >= 0 else (0.0,) * 9
            x0, x1, x2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0  # w x p
            a0, a1, a2 = _rot_t(r, a0 + d1 * p2 - d2 * p1 + w1 * x2 - w2 * x1,
                                a1 + d2 * p0 - d0 * p2 + w2 * x0 - w0 * x2, a2 + d0 * p1 - d1 * p0 + w0 * x1 - w1 * x0)
            w0, w1, w2 = _rot_t(r, w0, w1, w2)
            d0, d1, d2 = _rot_t(r, d0, d1, d2)
            if rev:
                d0, d1, d2 = d0 + v * (w1 * u2 - w2 * u1), d1 + v * (w2 * u0 - w0 * u2), d2 + v * (w0 * u1 - w1 * u0)
                w0, w1, w2 = w0 + v * u0, w1 + v * u1, w2 + v * u2
            else:
                a0 += 2.0 * v * (w1 * u2 - w2 * u1)
                a1 += 2.0 * v * (w2 * u0 - w0 * u2)
                a2 += 2.0 * v * (w0 * u1 - w1 * u0)
            out.append((w0, w1, w2, d0, d1, d2, a0, a1, a2))
        return out

    def bias(self, pl, rotation, velocities):
        """h = C(q, qd) qd + g(q) as a list, from the placements, base-frame rotations and :meth:`velocities`."""
        g0, g1, g2 = self.gravity
        wrenches = []
        for (*_, m, (h0, h1, h2), io), r, (w0, w1, w2, d0, d1, d2, a0, a1, a2) in zip(self.items, rotation,
                                                                                      velocities, strict=True):
            b0, b1, b2 = _rot_t(r, -g0, -g1, -g2)
            a0, a1, a2 = a0 + b0, a1 + b1, a2 + b2
            y0, y1, y2 = w1 * h2 - w2 * h1, w2 * h0 - w0 * h2, w0 * h1 - w1 * h0  # w x h
            i0, i1, i2 = _sym_times(io, w0, w1, w2)
            j0, j1, j2 = _sym_times(io, d0, d1, d2)
            wrenches.append([m * a0 + d1 * h2 - d2 * h1 + w1 * y2 - w2 * y1,
                             m * a1 + d2 * h0 - d0 * h2 + w2 * y0 - w0 * y2,
                             m * a2 + d0 * h1 - d1 * h0 + w0 * y1 - w1 * y0,
                             j0 + w1 * i2 - w2 * i1 + h1 * a2 - h2 * a1,
                             j1 + w2 * i0 - w0 * i2 + h2 * a0 - h0 * a2,
                             j2 + w0 * i1 - w1 * i0 + h0 * a1 - h1 * a0])
        out = [0.0] * len(self.items)
        for i in range(len(self.items) - 1, -1, -1):  # children come after their parent
            rev, (u0, u1, u2), _o, parent, *_ = self.items[i]
            f0, f1, f2, n0, n1, n2 = wrenches[i]
            out[i] = u0 * n0 + u1 * n1 + u2 * n2 if rev else u0 * f0 + u1 * f1 + u2 * f2
            if parent >= 0:
                r, (p0, p1, p2) = pl[i]
                c0, c1, c2 = _rot(r, f0, f1, f2)
                e0, e1, e2 = _rot(r, n0, n1, n2)
                up = wrenches[parent]
                up[0], up[1], up[2] = up[0] + c0, up[1] + c1, up[2] + c2
                up[3], up[4], up[5] = up[3] + e0 + p1 * c2 - p2 * c1, up[4] + e1 + p2 * c0 - p0 * c2, \
                    up[5] + e2 + p0 * c1 - p1 * c0
        return out

    def mass_matrix(self, pl):
        """M(q) as a list of rows, by the composite-rigid-body algorithm on the tree (class docstring)."""
        n = len(self.items)
        mass = [[0.0] * n for _ in range(n)]
        composite = [(m, h, io) for *_, m, h, io in self.items]
        for i in range(n - 1, -1, -1):  # a body's composite is complete once its children (after it) are added
            rev, (u0, u1, u2), _o, parent, *_ = self.items[i]
            cm, (h0, h1, h2), inertia = composite[i]
            if rev:  # H = I u, L = u x h
                e0, e1, e2 = _sym_times(inertia, u0, u1, u2)
                l0, l1, l2 = u1 * h2 - u2 * h1, u2 * h0 - u0 * h2, u0 * h1 - u1 * h0
                mass[i][i] = u0 * e0 + u1 * e1 + u2 * e2
            else:  # H = h x u, L = m u
                e0, e1, e2 = h1 * u2 - h2 * u1, h2 * u0 - h0 * u2, h0 * u1 - h1 * u0
                l0, l1, l2 = cm * u0, cm * u1, cm * u2
                mass[i][i] = u0 * l0 + u1 * l1 + u2 * l2
            child, j = i, parent
            while j >= 0:
                r, (p0, p1, p2) = pl[child]
                l0, l1, l2 = _rot(r, l0, l1, l2)
                e0, e1, e2 = _rot(r, e0, e1, e2)
                e0, e1, e2 = e0 + p1 * l2 - p2 * l1, e1 + p2 * l0 - p0 * l2, e2 + p0 * l1 - p1 * l0
                rj, (v0, v1, v2), _o, up, *_ = self.items[j]
                mass[j][i] = mass[i][j] = v0 * e0 + v1 * e1 + v2 * e2 if rj else v0 * l0 + v1 * l1 + v2 * l2
                child, j = j, up
            if parent >= 0:
                composite[parent] = moved_composite(composite[i], *pl[i], composite[parent])
        return mass
