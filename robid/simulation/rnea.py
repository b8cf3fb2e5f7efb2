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
# Scalar single-state path (the integrator calls it thousands of times; numpy's per-call overhead on 3-vectors
# dominates there). 3x3 matrices are flat row-major 9-tuples, vectors 3-tuples.
# ---------------------------------------------------------------------------------------------------------
def _mv(r, v):
    return (
        r[0] * v[0] + r[1] * v[1] + r[2] * v[2],
        r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
        r[6] * v[0] + r[7] * v[1] + r[8] * v[2],
    )


def _mtv(r, v):
    return (
        r[0] * v[0] + r[3] * v[1] + r[6] * v[2],
        r[1] * v[0] + r[4] * v[1] + r[7] * v[2],
        r[2] * v[0] + r[5] * v[1] + r[8] * v[2],
    )


def _cr(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _flat(m: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(m, dtype=float).reshape(-1))


class _ScalarChain:
    """Bias h = C qd + g by Newton-Euler in the origin form, M by the composite-rigid-body algorithm.

    Origin form of the body equations (h = m c the first moment, I_o the inertia about the frame origin):
        F = m a + wd x h + w x (w x h),    N = I_o wd + w x (I_o w) + h x a
    Composite bodies (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 6.2), moved from J_{i+1} to J_i
    with (R, p):  m' = m,  h' = R h + m p,
        I' = R I R^T + m (p.p E - p p^T) + 2 (p.h~) E - p h~^T - h~ p^T     (h~ = R h)
    Unit motion of joint i: revolute (H, L) = (I_o u, u x h), prismatic (h x u, m u); M_ji = u_j . H (or L)
    after moving (H, L) to J_j:  L' = R L,  H' = R H + p x L'.
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
                    _flat(i_o),
                )
            )
        self.minus_g = tuple(-float(x) for x in gravity)

    def placements(self, q):
        out = []
        for (rev, _u, off, rc, rck, rck2, pc, rcu, *_), qi in zip(self.items, q, strict=True):
            if rev:
                s, c1 = math.sin(qi + off), 1.0 - math.cos(qi + off)
                r = tuple(rc[j] + s * rck[j] + c1 * rck2[j] for j in range(9))
                out.append((r, pc))
            else:
                d = qi + off
                out.append((rc, (pc[0] + d * rcu[0], pc[1] + d * rcu[1], pc[2] + d * rcu[2])))
        return out

    def mass_matrix_and_bias(self, q, qd):
        n = len(self.items)
        pl = self.placements(q)
        # ---- bias: Newton-Euler with qdd = 0 and gravity
        w = wd = (0.0, 0.0, 0.0)
        a = self.minus_g
        forces = []
        for (rev, u, *_, m, h, io), (r, p), v in zip(self.items, pl, qd, strict=True):
            wp = _cr(w, p)
            t = _cr(wd, p)
            t2 = _cr(w, wp)
            a = _mtv(r, (a[0] + t[0] + t2[0], a[1] + t[1] + t2[1], a[2] + t[2] + t2[2]))
            wpar = _mtv(r, w)
            wd = _mtv(r, wd)
            if rev:
                w = (wpar[0] + v * u[0], wpar[1] + v * u[1], wpar[2] + v * u[2])
                t = _cr(wpar, u)
                wd = (wd[0] + v * t[0], wd[1] + v * t[1], wd[2] + v * t[2])
            else:
                w = wpar
                t = _cr(w, u)
                a = (a[0] + 2.0 * v * t[0], a[1] + 2.0 * v * t[1], a[2] + 2.0 * v * t[2])
            wh = _cr(w, h)
            t = _cr(wd, h)
            t2 = _cr(w, wh)
            f = (m * a[0] + t[0] + t2[0], m * a[1] + t[1] + t2[1], m * a[2] + t[2] + t2[2])
            iw = _mv(io, w)
            t = _mv(io, wd)
            t2 = _cr(w, iw)
            t3 = _cr(h, a)
            nn = (t[0] + t2[0] + t3[0], t[1] + t2[1] + t3[1], t[2] + t2[2] + t3[2])
            forces.append((f, nn))
        bias = [0.0] * n
        f = nn = (0.0, 0.0, 0.0)
        for i in range(n - 1, -1, -1):
            fi, ni = forces[i]
            if i + 1 < n:
                r, p = pl[i + 1]
                fc = _mv(r, f)
                t = _mv(r, nn)
                t2 = _cr(p, fc)
                nn = (ni[0] + t[0] + t2[0], ni[1] + t[1] + t2[1], ni[2] + t[2] + t2[2])
                f = (fi[0] + fc[0], fi[1] + fc[1], fi[2] + fc[2])
            else:
                f, nn = fi, ni
            u = self.items[i][1]
            bias[i] = _dot(u, nn) if self.items[i][0] else _dot(u, f)
        # ---- mass matrix: composite rigid bodies
        mass = [[0.0] * n for _ in range(n)]
        cm, ch, ci = 0.0, (0.0, 0.0, 0.0), (0.0,) * 9
        for i in range(n - 1, -1, -1):
            rev, u, *_, m, h, io = self.items[i]
            if i + 1 < n:
                r, p = pl[i + 1]
                hr = _mv(r, ch)
                # R I R^T
                ri = (
                    r[0] * ci[0] + r[1] * ci[3] + r[2] * ci[6], r[0] * ci[1] + r[1] * ci[4] + r[2] * ci[7],
                    r[0] * ci[2] + r[1] * ci[5] + r[2] * ci[8],
                    r[3] * ci[0] + r[4] * ci[3] + r[5] * ci[6], r[3] * ci[1] + r[4] * ci[4] + r[5] * ci[7],
                    r[3] * ci[2] + r[4] * ci[5] + r[5] * ci[8],
                    r[6] * ci[0] + r[7] * ci[3] + r[8] * ci[6], r[6] * ci[1] + r[7] * ci[4] + r[8] * ci[7],
                    r[6] * ci[2] + r[7] * ci[5] + r[8] * ci[8],
                )
                rir = [0.0] * 9
                for row in range(3):
                    x0, x1, x2 = ri[3 * row], ri[3 * row + 1], ri[3 * row + 2]
                    for col in range(row, 3):
                        rir[3 * row + col] = x0 * r[3 * col] + x1 * r[3 * col + 1] + x2 * r[3 * col + 2]
                pp, ph = _dot(p, p), _dot(p, hr)
                diag = cm * pp + 2.0 * ph
                new_i = [0.0] * 9
                for row in range(3):
                    for col in range(row, 3):
                        val = rir[3 * row + col] - cm * p[row] * p[col] - p[row] * hr[col] - hr[row] * p[col]
                        if row == col:
                            val += diag
                        new_i[3 * row + col] = new_i[3 * col + row] = val
                ch = (h[0] + hr[0] + cm * p[0], h[1] + hr[1] + cm * p[1], h[2] + hr[2] + cm * p[2])
                cm = cm + m
                ci = tuple(io[j] + new_i[j] for j in range(9))
            else:
                cm, ch, ci = m, h, io
            if rev:
                hh, ll = _mv(ci, u), _cr(u, ch)
            else:
                hh, ll = _cr(ch, u), (cm * u[0], cm * u[1], cm * u[2])
            mass[i][i] = _dot(u, hh) if rev else _dot(u, ll)
            for j in range(i - 1, -1, -1):
                r, p = pl[j + 1]
                ll = _mv(r, ll)
                t = _mv(r, hh)
                t2 = _cr(p, ll)
                hh = (t[0] + t2[0], t[1] + t2[1], t[2] + t2[2])
                uj = self.items[j][1]
                mass[j][i] = mass[i][j] = _dot(uj, hh) if self.items[j][0] else _dot(uj, ll)
        return mass, bias
