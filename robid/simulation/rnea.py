"""Numeric recursive Newton-Euler dynamics of the rigid bodies of a :class:`~robid.model.RobotModel`.

This is the virtual robot's own dynamics, written directly from the link mass, centre of mass and inertia of
the model file. It deliberately shares no code with robid's symbolic regressor (robid/symbolic): the simulator
is used to test that code, so it must not inherit its mistakes.

Frames. Every joint moves its body by ``T_{i-1,i}(q) = A_i . M_i(q) . B_i`` (robid/model/robot_model.py). The
recursion runs in the *joint frames* ``J_i = (body frame i-1) . A_i . M_i(q_i)``, in which joint i's axis ``u_i``
passes through the origin; the constant ``B_i`` only moves the link's inertial data::

    J_{i-1} -> J_i :  C_i . M_i(q_i)  with  C_i = B_{i-1} . A_i   (B_0 = identity: J_0 is the base frame)
    link i in J_i  :  c_J = R_B c + p_B,   I_J = R_B I_c R_B^T     (about the COM)

Recursion (Luh, Walker, Paul 1980; Craig, *Introduction to Robotics*, 3rd ed., eqs. 6.45-6.53, here with the
joint axis ``u_i`` in place of z). With ``R``, ``p`` the rotation and origin of ``J_i`` in ``J_{i-1}``::

    revolute:   w_i  = R^T w_{i-1} + u qd_i
                wd_i = R^T wd_{i-1} + (R^T w_{i-1}) x u qd_i + u qdd_i
                a_i  = R^T (a_{i-1} + wd_{i-1} x p + w_{i-1} x (w_{i-1} x p))
    prismatic:  w_i  = R^T w_{i-1},  wd_i = R^T wd_{i-1}
                a_i  = R^T (a_{i-1} + wd_{i-1} x p + w_{i-1} x (w_{i-1} x p)) + 2 w_i x u qd_i + u qdd_i
    a_0 = -g  (gravity enters as an upward acceleration of the base)

    F_i = m_i (a_i + wd_i x c_i + w_i x (w_i x c_i)),    N_i = I_i wd_i + w_i x (I_i w_i)
    f_i = R_{i+1} f_{i+1} + F_i
    n_i = N_i + R_{i+1} n_{i+1} + c_i x F_i + p_{i+1} x (R_{i+1} f_{i+1})
    tau_i = u_i . n_i (revolute)  or  u_i . f_i (prismatic)

The mass matrix column k is the recursion with ``qd = 0``, ``qdd = e_k`` and no gravity; the bias
``C(q, qd) qd + g(q)`` is the recursion with ``qdd = 0``. Both are computed in one call vectorised over
samples (:meth:`RigidBodyDynamics.mass_matrix_and_bias`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.model.robot_model import RobotModel


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (N, 3) arrays (faster than np.cross for small N)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def _rotation_batch(u: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues R = I + sin(a) K + (1 - cos(a)) K^2 for one unit axis u and N angles -> (N, 3, 3)."""
    k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    k2 = k @ k
    s = np.sin(angle)[:, None, None]
    c = np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * k2


def _rt(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R^T v for batches: r (N, 3, 3) or (3, 3), v (N, 3)."""
    if r.ndim == 2:
        return v @ r
    return np.einsum("nji,nj->ni", r, v)


def _r(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v for batches."""
    if r.ndim == 2:
        return v @ r.T
    return np.einsum("nij,nj->ni", r, v)


@dataclass(frozen=True, eq=False)
class _JointConstants:
    revolute: bool
    axis: np.ndarray  # (3,) in J_i
    offset: float  # angle or displacement offset
    c_rotation: np.ndarray  # (3, 3) of C_i = B_{i-1} A_i
    c_translation: np.ndarray  # (3,)
    mass: float
    com: np.ndarray  # (3,) COM in J_i
    inertia: np.ndarray  # (3, 3) about the COM, J_i axes


class RigidBodyDynamics:
    """Rigid-body inverse dynamics, mass matrix and gravity of a serial RobotModel (no drives or friction).

    All methods take samples as (N, dof) arrays (a single (dof,) vector is promoted) and return (N, dof) or
    (N, dof, dof).
    """

    def __init__(self, model: RobotModel):
        self.model = model
        self.dof = model.dof
        self.gravity = np.asarray(model.gravity, dtype=float)
        joints = []
        previous_b = np.eye(4)
        for joint in model.joints:
            g = joint.geometry
            a = _homogeneous(g.a_rotation, g.a_translation)
            b = _homogeneous(g.b_rotation, g.b_translation)
            c = previous_b @ a
            rb, pb = b[:3, :3], b[:3, 3]
            link = joint.link
            joints.append(
                _JointConstants(
                    revolute=joint.revolute,
                    axis=np.asarray(g.axis, dtype=float) / np.linalg.norm(g.axis),
                    offset=float(g.angle_offset if joint.revolute else g.displacement_offset),
                    c_rotation=c[:3, :3].copy(),
                    c_translation=c[:3, 3].copy(),
                    mass=float(link.mass),
                    com=rb @ np.asarray(link.com, dtype=float) + pb,
                    inertia=rb @ link.inertia_tensor_com() @ rb.T,
                )
            )
            previous_b = b
        self._joints = tuple(joints)
        self._scalar = _ScalarChain(self._joints, self.gravity)

    # ---- the recursion -----------------------------------------------------------------------------------
    def _placements(self, q: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Rotation (N, 3, 3) and origin (N, 3) of J_i in J_{i-1} for every joint."""
        out = []
        n = q.shape[0]
        for i, jc in enumerate(self._joints):
            if jc.revolute:
                rot = jc.c_rotation @ _rotation_batch(jc.axis, q[:, i] + jc.offset)
                pos = np.broadcast_to(jc.c_translation, (n, 3))
            else:
                rot = np.broadcast_to(jc.c_rotation, (n, 3, 3))
                pos = jc.c_translation + np.outer(q[:, i] + jc.offset, jc.c_rotation @ jc.axis)
            out.append((rot, pos))
        return out

    def _rnea(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, gravity_scale: np.ndarray) -> np.ndarray:
        n = q.shape[0]
        placements = self._placements(q)
        w = np.zeros((n, 3))
        wd = np.zeros((n, 3))
        a = -np.outer(gravity_scale, self.gravity)
        forces, moments = [], []
        for i, (jc, (rot, pos)) in enumerate(zip(self._joints, placements, strict=True)):
            u = jc.axis
            a = _rt(rot, a + _cross(wd, pos) + _cross(w, _cross(w, pos)))
            w_parent = _rt(rot, w)
            wd = _rt(rot, wd)
            if jc.revolute:
                w = w_parent + np.outer(qd[:, i], u)
                wd = wd + _cross(w_parent, np.outer(qd[:, i], u)) + np.outer(qdd[:, i], u)
            else:
                w = w_parent
                a = a + 2.0 * _cross(w, np.outer(qd[:, i], u)) + np.outer(qdd[:, i], u)
            c = jc.com
            acc_com = a + _cross(wd, c) + _cross(w, _cross(w, c))
            forces.append(jc.mass * acc_com)
            iw = w @ jc.inertia.T
            moments.append(wd @ jc.inertia.T + _cross(w, iw))
        tau = np.empty((n, self.dof))
        f = np.zeros((n, 3))
        m = np.zeros((n, 3))
        for i in range(self.dof - 1, -1, -1):
            jc = self._joints[i]
            if i + 1 < self.dof:
                rot, pos = placements[i + 1]
                f_child = _r(rot, f)
                m = moments[i] + _r(rot, m) + _cross(jc.com, forces[i]) + _cross(pos, f_child)
                f = forces[i] + f_child
            else:
                m = moments[i] + _cross(jc.com, forces[i])
                f = forces[i]
            tau[:, i] = (m if jc.revolute else f) @ jc.axis
        return tau

    # ---- public ------------------------------------------------------------------------------------------
    def inverse_dynamics(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """tau = M(q) qdd + C(q, qd) qd + g(q) of the rigid bodies, (N, dof)."""
        q, qd, qdd = (_samples(x, self.dof) for x in (q, qd, qdd))
        return self._rnea(q, qd, qdd, np.full(q.shape[0], 1.0 if gravity else 0.0))

    def gravity_torque(self, q) -> np.ndarray:
        """g(q), (N, dof): the joint torques that hold the robot still."""
        q = _samples(q, self.dof)
        z = np.zeros_like(q)
        return self._rnea(q, z, z, np.ones(q.shape[0]))

    def mass_matrix(self, q) -> np.ndarray:
        """M(q), (N, dof, dof), by the recursion with unit accelerations (column k: qdd = e_k, no gravity)."""
        q = _samples(q, self.dof)
        n, dof = q.shape
        qq = np.repeat(q, dof, axis=0)
        qdd = np.tile(np.eye(dof), (n, 1))
        cols = self._rnea(qq, np.zeros_like(qq), qdd, np.zeros(n * dof))
        return cols.reshape(n, dof, dof).transpose(0, 2, 1)

    def mass_matrix_and_bias(self, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M(q) (dof, dof) and h = C(q, qd) qd + g(q) (dof,) for ONE state.

        The integrator's hot path: plain-Python scalar arithmetic (:class:`_ScalarChain`: the recursion above
        for h, the composite-rigid-body algorithm for M), an order of magnitude faster than numpy on 3-vectors.
        """
        mass, bias = self._scalar.mass_matrix_and_bias(np.ravel(q).tolist(), np.ravel(qd).tolist())
        return np.array(mass), np.array(bias)

    def mass_matrix_and_bias_vectorised(self, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Same as :meth:`mass_matrix_and_bias` through the vectorised recursion (dof + 1 rows)."""
        dof = self.dof
        q = np.asarray(q, dtype=float).reshape(1, dof)
        qd = np.asarray(qd, dtype=float).reshape(1, dof)
        qq = np.repeat(q, dof + 1, axis=0)
        vel = np.zeros((dof + 1, dof))
        vel[0] = qd
        acc = np.zeros((dof + 1, dof))
        acc[1:] = np.eye(dof)
        scale = np.zeros(dof + 1)
        scale[0] = 1.0
        out = self._rnea(qq, vel, acc, scale)
        return out[1:].T.copy(), out[0].copy()

    def kinetic_energy(self, q, qd) -> np.ndarray:
        """T = 1/2 qd^T M(q) qd, (N,)."""
        q, qd = _samples(q, self.dof), _samples(qd, self.dof)
        return 0.5 * np.einsum("ni,nij,nj->n", qd, self.mass_matrix(q), qd)


def _samples(x, dof: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if x.ndim != 2 or x.shape[1] != dof:
        raise ValueError(f"expected samples shaped (N, {dof}), got {x.shape}")
    return x


def _homogeneous(rotation, translation) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = np.asarray(rotation, dtype=float)
    t[:3, 3] = np.asarray(translation, dtype=float)
    return t


# ---------------------------------------------------------------------------------------------------------
# Scalar single-state path. The integrator calls it thousands of times with one state, where numpy's per-call
# overhead on 3-vectors dominates; unrolled plain-Python arithmetic is several times faster. 3x3 matrices are
# flat row-major 9-tuples (r0..r8), vectors are unpacked into scalars.
# ---------------------------------------------------------------------------------------------------------
def _flat(m: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(m, dtype=float).reshape(-1))


class _ScalarChain:
    """Bias h = C qd + g by Newton-Euler in the origin form, M by the composite-rigid-body algorithm.

    Origin form of the body equations (h = m c the first moment, I_o the inertia about the frame origin)::

        F = m a + wd x h + w x (w x h),    N = I_o wd + w x (I_o w) + h x a

    Composite bodies (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 6.2), moved from J_{i+1} to
    J_i with (R, p)::

        m' = m,  h' = R h + m p,   I' = R I R^T + m (p.p E - p p^T) + 2 (p.h~) E - p h~^T - h~ p^T   (h~ = R h)

    Unit motion of joint i: revolute (H, L) = (I_o u, u x h), prismatic (h x u, m u); M_ji = u_j . H (revolute
    j) or u_j . L (prismatic j) after moving (H, L) to J_j with L' = R L, H' = R H + p x L'.
    """

    def __init__(self, joints, gravity):
        self.items = []
        for jc in joints:
            u = jc.axis
            k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
            rc = jc.c_rotation
            c = jc.com
            i_o = jc.inertia + jc.mass * (c @ c * np.eye(3) - np.outer(c, c))
            self.items.append(
                (
                    jc.revolute,
                    _flat(u),
                    float(jc.offset),
                    _flat(rc),
                    _flat(rc @ k),
                    _flat(rc @ k @ k),
                    _flat(jc.c_translation),
                    _flat(rc @ u),
                    float(jc.mass),
                    _flat(jc.mass * c),
                    (i_o[0, 0], i_o[0, 1], i_o[0, 2], i_o[1, 1], i_o[1, 2], i_o[2, 2]),
                )
            )
        self.minus_g = tuple(-float(x) for x in gravity)

    def placements(self, q):
        """[(R, p)] of J_i in J_{i-1}: R = Rc + sin(q') Rc K + (1 - cos(q')) Rc K^2 (Rodrigues), p = pc (+ q' Rc u)."""
        out = []
        for (rev, _u, off, rc, rk, rk2, pc, rcu, *_), qi in zip(self.items, q, strict=True):
            if rev:
                s = math.sin(qi + off)
                c = 1.0 - math.cos(qi + off)
                # fmt: off
                r = (
                    rc[0] + s * rk[0] + c * rk2[0], rc[1] + s * rk[1] + c * rk2[1], rc[2] + s * rk[2] + c * rk2[2],
                    rc[3] + s * rk[3] + c * rk2[3], rc[4] + s * rk[4] + c * rk2[4], rc[5] + s * rk[5] + c * rk2[5],
                    rc[6] + s * rk[6] + c * rk2[6], rc[7] + s * rk[7] + c * rk2[7], rc[8] + s * rk[8] + c * rk2[8],
                )
                # fmt: on
                out.append((r, pc))
            else:
                d = qi + off
                out.append((rc, (pc[0] + d * rcu[0], pc[1] + d * rcu[1], pc[2] + d * rcu[2])))
        return out

    def bias(self, q, qd, pl=None):
        """h = C(q, qd) qd + g(q) as a list."""
        n = len(self.items)
        pl = self.placements(q) if pl is None else pl
        w0 = w1 = w2 = d0 = d1 = d2 = 0.0
        a0, a1, a2 = self.minus_g
        forces = []
        for (rev, u, *_, m, h, io), (r, p), v in zip(self.items, pl, qd, strict=True):
            p0, p1, p2 = p
            x0, x1, x2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0  # w x p
            t0 = a0 + d1 * p2 - d2 * p1 + w1 * x2 - w2 * x1
            t1 = a1 + d2 * p0 - d0 * p2 + w2 * x0 - w0 * x2
            t2 = a2 + d0 * p1 - d1 * p0 + w0 * x1 - w1 * x0
            r0, r1, r2, r3, r4, r5, r6, r7, r8 = r
            a0, a1, a2 = r0 * t0 + r3 * t1 + r6 * t2, r1 * t0 + r4 * t1 + r7 * t2, r2 * t0 + r5 * t1 + r8 * t2
            w0, w1, w2 = r0 * w0 + r3 * w1 + r6 * w2, r1 * w0 + r4 * w1 + r7 * w2, r2 * w0 + r5 * w1 + r8 * w2
            d0, d1, d2 = r0 * d0 + r3 * d1 + r6 * d2, r1 * d0 + r4 * d1 + r7 * d2, r2 * d0 + r5 * d1 + r8 * d2
            u0, u1, u2 = u
            if rev:
                d0 += v * (w1 * u2 - w2 * u1)
                d1 += v * (w2 * u0 - w0 * u2)
                d2 += v * (w0 * u1 - w1 * u0)
                w0 += v * u0
                w1 += v * u1
                w2 += v * u2
            else:
                a0 += 2.0 * v * (w1 * u2 - w2 * u1)
                a1 += 2.0 * v * (w2 * u0 - w0 * u2)
                a2 += 2.0 * v * (w0 * u1 - w1 * u0)
            h0, h1, h2 = h
            y0, y1, y2 = w1 * h2 - w2 * h1, w2 * h0 - w0 * h2, w0 * h1 - w1 * h0  # w x h
            f0 = m * a0 + d1 * h2 - d2 * h1 + w1 * y2 - w2 * y1
            f1 = m * a1 + d2 * h0 - d0 * h2 + w2 * y0 - w0 * y2
            f2 = m * a2 + d0 * h1 - d1 * h0 + w0 * y1 - w1 * y0
            ixx, ixy, ixz, iyy, iyz, izz = io
            i0 = ixx * w0 + ixy * w1 + ixz * w2
            i1 = ixy * w0 + iyy * w1 + iyz * w2
            i2 = ixz * w0 + iyz * w1 + izz * w2
            n0 = ixx * d0 + ixy * d1 + ixz * d2 + w1 * i2 - w2 * i1 + h1 * a2 - h2 * a1
            n1 = ixy * d0 + iyy * d1 + iyz * d2 + w2 * i0 - w0 * i2 + h2 * a0 - h0 * a2
            n2 = ixz * d0 + iyz * d1 + izz * d2 + w0 * i1 - w1 * i0 + h0 * a1 - h1 * a0
            forces.append((f0, f1, f2, n0, n1, n2))
        out = [0.0] * n
        f0 = f1 = f2 = n0 = n1 = n2 = 0.0
        for i in range(n - 1, -1, -1):
            g0, g1, g2, m0, m1, m2 = forces[i]
            if i + 1 < n:
                (r0, r1, r2, r3, r4, r5, r6, r7, r8), (p0, p1, p2) = pl[i + 1]
                c0, c1, c2 = r0 * f0 + r1 * f1 + r2 * f2, r3 * f0 + r4 * f1 + r5 * f2, r6 * f0 + r7 * f1 + r8 * f2
                e0, e1, e2 = r0 * n0 + r1 * n1 + r2 * n2, r3 * n0 + r4 * n1 + r5 * n2, r6 * n0 + r7 * n1 + r8 * n2
                n0 = m0 + e0 + p1 * c2 - p2 * c1
                n1 = m1 + e1 + p2 * c0 - p0 * c2
                n2 = m2 + e2 + p0 * c1 - p1 * c0
                f0, f1, f2 = g0 + c0, g1 + c1, g2 + c2
            else:
                f0, f1, f2, n0, n1, n2 = g0, g1, g2, m0, m1, m2
            rev, (u0, u1, u2) = self.items[i][0], self.items[i][1]
            out[i] = u0 * n0 + u1 * n1 + u2 * n2 if rev else u0 * f0 + u1 * f1 + u2 * f2
        return out

    def mass_matrix(self, q, pl=None):
        """M(q) as a list of rows, by the composite-rigid-body algorithm."""
        n = len(self.items)
        pl = self.placements(q) if pl is None else pl
        mass = [[0.0] * n for _ in range(n)]
        cm = ch0 = ch1 = ch2 = 0.0
        cxx = cxy = cxz = cyy = cyz = czz = 0.0
        for i in range(n - 1, -1, -1):
            rev, (u0, u1, u2), *_, m, (h0, h1, h2), (ixx, ixy, ixz, iyy, iyz, izz) = self.items[i]
            if i + 1 < n:
                (r0, r1, r2, r3, r4, r5, r6, r7, r8), (p0, p1, p2) = pl[i + 1]
                # composite of i+1.. moved into J_i
                k0 = r0 * ch0 + r1 * ch1 + r2 * ch2
                k1 = r3 * ch0 + r4 * ch1 + r5 * ch2
                k2 = r6 * ch0 + r7 * ch1 + r8 * ch2
                # A = R I (rows), then the upper triangle of A R^T
                a00 = r0 * cxx + r1 * cxy + r2 * cxz
                a01 = r0 * cxy + r1 * cyy + r2 * cyz
                a02 = r0 * cxz + r1 * cyz + r2 * czz
                a10 = r3 * cxx + r4 * cxy + r5 * cxz
                a11 = r3 * cxy + r4 * cyy + r5 * cyz
                a12 = r3 * cxz + r4 * cyz + r5 * czz
                a20 = r6 * cxx + r7 * cxy + r8 * cxz
                a21 = r6 * cxy + r7 * cyy + r8 * cyz
                a22 = r6 * cxz + r7 * cyz + r8 * czz
                diag = cm * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * k0 + p1 * k1 + p2 * k2)
                cxx = ixx + a00 * r0 + a01 * r1 + a02 * r2 + diag - cm * p0 * p0 - 2.0 * p0 * k0
                cyy = iyy + a10 * r3 + a11 * r4 + a12 * r5 + diag - cm * p1 * p1 - 2.0 * p1 * k1
                czz = izz + a20 * r6 + a21 * r7 + a22 * r8 + diag - cm * p2 * p2 - 2.0 * p2 * k2
                cxy = ixy + a00 * r3 + a01 * r4 + a02 * r5 - cm * p0 * p1 - p0 * k1 - k0 * p1
                cxz = ixz + a00 * r6 + a01 * r7 + a02 * r8 - cm * p0 * p2 - p0 * k2 - k0 * p2
                cyz = iyz + a10 * r6 + a11 * r7 + a12 * r8 - cm * p1 * p2 - p1 * k2 - k1 * p2
                ch0, ch1, ch2 = h0 + k0 + cm * p0, h1 + k1 + cm * p1, h2 + k2 + cm * p2
                cm = cm + m
            else:
                cm, ch0, ch1, ch2 = m, h0, h1, h2
                cxx, cxy, cxz, cyy, cyz, czz = ixx, ixy, ixz, iyy, iyz, izz
            if rev:  # H = I u, L = u x h
                e0 = cxx * u0 + cxy * u1 + cxz * u2
                e1 = cxy * u0 + cyy * u1 + cyz * u2
                e2 = cxz * u0 + cyz * u1 + czz * u2
                l0, l1, l2 = u1 * ch2 - u2 * ch1, u2 * ch0 - u0 * ch2, u0 * ch1 - u1 * ch0
                mass[i][i] = u0 * e0 + u1 * e1 + u2 * e2
            else:  # H = h x u, L = m u
                e0, e1, e2 = ch1 * u2 - ch2 * u1, ch2 * u0 - ch0 * u2, ch0 * u1 - ch1 * u0
                l0, l1, l2 = cm * u0, cm * u1, cm * u2
                mass[i][i] = u0 * l0 + u1 * l1 + u2 * l2
            for j in range(i - 1, -1, -1):
                (r0, r1, r2, r3, r4, r5, r6, r7, r8), (p0, p1, p2) = pl[j + 1]
                l0, l1, l2 = r0 * l0 + r1 * l1 + r2 * l2, r3 * l0 + r4 * l1 + r5 * l2, r6 * l0 + r7 * l1 + r8 * l2
                e0, e1, e2 = (
                    r0 * e0 + r1 * e1 + r2 * e2 + p1 * l2 - p2 * l1,
                    r3 * e0 + r4 * e1 + r5 * e2 + p2 * l0 - p0 * l2,
                    r6 * e0 + r7 * e1 + r8 * e2 + p0 * l1 - p1 * l0,
                )
                rj, (v0, v1, v2) = self.items[j][0], self.items[j][1]
                mass[j][i] = mass[i][j] = v0 * e0 + v1 * e1 + v2 * e2 if rj else v0 * l0 + v1 * l1 + v2 * l2
        return mass

    def mass_matrix_and_bias(self, q, qd):
        pl = self.placements(q)
        return self.mass_matrix(q, pl), self.bias(q, qd, pl)
