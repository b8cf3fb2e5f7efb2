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

The mass matrix column k is the recursion with ``qd = 0``, ``qdd = e_k`` and no gravity.

Two numeric forms, both needed. This module evaluates the recursion vectorised over N samples (numpy on
(N, 3) arrays): the inverse dynamics of the feed-forward table (one sample per millisecond of a period, every
simulation) and of any batch of states, M(q) of many poses. The integrator instead asks for M(q) and
``C(q, qd) qd + g(q)`` of ONE state thousands of times per run; there numpy's per-call overhead on 3-vectors
dominates, and :mod:`robid.simulation.single_state` (plain-Python scalar arithmetic: the same recursion in
origin form for the bias, the composite-rigid-body algorithm for M) is about 6x faster (90 against 680 us
per state for a 6-axis robot), while on batches the vectorised form is about 7x faster than a loop over the
scalar one (0.1 against 0.7 s for 20,000 samples; benchmarks/bench_simulation.py times both paths). Both
are tested against pinocchio (tests/test_simulation_rnea.py). The scalar form runs compiled where a compiler is
at hand (robid.simulation.single_state_c: its C transcription, the same bits, 5 against 93 us per state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.model.robot_model import RobotModel
from robid.simulation.single_state import ScalarChain
from robid.simulation.single_state_c import compiled_chain


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (N, 3) arrays (faster than np.cross for small N)."""
    out = np.empty(a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape))  # (a third of the
    # time of a call went to broadcast_shapes; the closed-chain simulation makes a million calls)
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
        self._scalar = ScalarChain(self._joints, self.gravity)
        self._compiled = None  # robid.simulation.single_state_c.CompiledChain, made at the first single state

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

        The integrator's hot path: plain-Python scalar arithmetic (:class:`~robid.simulation.single_state.ScalarChain`:
        the recursion above for h, the composite-rigid-body algorithm for M), several times faster than numpy here,
        and its C transcription (robid.simulation.single_state_c, the same bits) when it can be built.
        """
        if self._compiled is None:
            self._compiled = compiled_chain(self._scalar.items, self._scalar.minus_g) or False
        if self._compiled:
            return self._compiled.mass_matrix_and_bias(q, qd)
        mass, bias = self._scalar.mass_matrix_and_bias(np.ravel(q).tolist(), np.ravel(qd).tolist())
        return np.array(mass), np.array(bias)


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
