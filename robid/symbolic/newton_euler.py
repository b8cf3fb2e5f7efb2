"""Recursive Newton-Euler, linear in the standard inertial parameters, as a straight-line program.

Forward recursion (body frames; Luh-Walker-Paul as in El-Rayyes 1990 App. A, generalised to the A . M(q) . B
joint placement of docs/model.md). For a constant step (R, p) from frame k to frame k+1::

    w' = R^T w,   wd' = R^T wd,   a' = R^T (a + wd x p + w x (w x p))

and for the joint motion about/along the unit axis u (expressed in the frame after A)::

    revolute:  w' = R_M^T w + u qd,  wd' = R_M^T wd + (R_M^T w) x u qd + u qdd,  a' = R_M^T a
    prismatic: w' = w, wd' = wd,  a' = a + wd x p + w x (w x p) + 2 w x u qd + u qdd,  p = u (q + d0)

Gravity enters as the base acceleration a_0 = -g. The wrench of body j about its frame origin is linear in
pi_j = (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) (Khalil & Dombre 2002, eq. 9.87)::

    f = m a + wd x c + w x (w x c),     n = I_O wd + w x (I_O w) + c x a,     c = (mx, my, mz)

and the torque of joint i receives, by virtual power, tau_i += e_ij . n_j + h_ij . f_j, where (e_ij, h_ij) is
the twist of body j per unit velocity of joint i (angular part, velocity of origin j), in frame j. The twists
are propagated from body i outwards with the same constant/joint steps: e' = R^T e, h' = R^T (h + e x p).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from robid.model.robot_model import RobotModel
from robid.symbolic.geometry import JointSymbols, axis_rotation, exact_matrix, exact_vector, joint_motion
from robid.symbolic.program import ProgramBuilder


@dataclass(frozen=True)
class BodyKinematics:
    """Angular velocity, angular acceleration and origin acceleration (incl. -g) of one body, body frame."""

    w: sp.Matrix
    wd: sp.Matrix
    a: sp.Matrix


@dataclass(frozen=True)
class JointTransform:
    """The three steps (R_A, p_A), M(q), (R_B, p_B) of one joint with exact constants."""

    ra: sp.Matrix
    pa: sp.Matrix
    axis: sp.Matrix
    rm: sp.Matrix
    pm: sp.Matrix
    rb: sp.Matrix
    pb: sp.Matrix


def joint_transforms(model: RobotModel, symbols: list[JointSymbols]) -> list[JointTransform]:
    out = []
    for joint, sym in zip(model.joints, symbols, strict=True):
        g = joint.geometry
        rm, pm = joint_motion(joint, sym)
        out.append(
            JointTransform(
                ra=exact_matrix(g.a_rotation),
                pa=exact_vector(g.a_translation),
                axis=exact_vector(g.axis),
                rm=rm,
                pm=pm,
                rb=exact_matrix(g.b_rotation),
                pb=exact_vector(g.b_translation),
            )
        )
    return out


def _constant_step(pb: ProgramBuilder, r: sp.Matrix, p: sp.Matrix, k: BodyKinematics) -> BodyKinematics:
    if r == sp.eye(3) and p == sp.zeros(3, 1):
        return k
    rt = r.T
    a = k.a
    if p != sp.zeros(3, 1):
        a = a + k.wd.cross(p) + k.w.cross(k.w.cross(p))
    return BodyKinematics(w=pb.vector(rt * k.w), wd=pb.vector(rt * k.wd), a=pb.vector(rt * a))


def forward_kinematics(
    pb: ProgramBuilder,
    model: RobotModel,
    symbols: list[JointSymbols],
    transforms: list[JointTransform],
    sum_angles: bool = False,
    parents: list[int] | None = None,
) -> list[BodyKinematics]:
    """Angular velocity, angular acceleration and origin acceleration of every body (module docstring).

    ``parents`` (a tree: the 0-based index of the body carrying each joint, -1 for the base; default the previous
    joint) lets a closed chain's tree structure use the same recursion, each body starting from its parent's
    kinematics (Khalil & Dombre 2002, section 9.9, tree structures).

    With ``sum_angles`` the angular quantities of a joint that continues a run of parallel revolute joints r..k
    (:func:`robid.symbolic.geometry.parallel_runs`) are computed from those entering the run, w0 and wd0, by the
    rotation R_S about the common axis by the sum angle (El-Rayyes 1990 section 3.3; R(q_r)...R(q_k) = R_S)::

        w = R_S^T w0 + u Qd,   wd = R_S^T wd0 + (R_S^T w0) x u Qd + u Qdd,   Qd = qd_r + ... + qd_k

    (by induction on k, since R^T (x x u) = (R^T x) x u for u on the axis), which is cheaper when w0, wd0 are
    sparse, as they are after the first joints.
    """
    gravity = exact_vector(model.gravity)
    base = BodyKinematics(w=sp.zeros(3, 1), wd=sp.zeros(3, 1), a=-gravity)
    k = base
    bodies = []
    entering: dict[int, tuple[sp.Matrix, sp.Matrix]] = {}
    for idx, (sym, t) in enumerate(zip(symbols, transforms, strict=True)):
        if parents is not None:
            k = bodies[parents[idx]] if parents[idx] >= 0 else base
        k = _constant_step(pb, t.ra, t.pa, k)
        u = t.axis
        entering[idx] = (k.w, k.wd)
        if sym.revolute and sum_angles and sym.sum_joints:
            w0, wd0 = entering[sym.sum_joints[0]]
            rs_t = axis_rotation(u, sym.s_sum, sym.c_sum).T
            qd_run = pb.name(sp.Add(*(symbols[j].qd for j in sym.sum_joints)))
            qdd_run = pb.name(sp.Add(*(symbols[j].qdd for j in sym.sum_joints)))
            w_s = pb.vector(rs_t * w0)
            w = pb.vector(w_s + u * qd_run)
            wd = pb.vector(rs_t * wd0 + w_s.cross(u) * qd_run + u * qdd_run)
            a = pb.vector(t.rm.T * k.a)
        elif sym.revolute:
            w_rot = pb.vector(t.rm.T * k.w)
            w = pb.vector(w_rot + u * sym.qd)
            wd = pb.vector(t.rm.T * k.wd + w_rot.cross(u) * sym.qd + u * sym.qdd)
            a = pb.vector(t.rm.T * k.a)
        else:
            p = t.pm
            w, wd = k.w, k.wd
            a = pb.vector(
                k.a + k.wd.cross(p) + k.w.cross(k.w.cross(p)) + 2 * k.w.cross(u) * sym.qd + u * sym.qdd
            )
        k = BodyKinematics(w=w, wd=wd, a=a)
        k = _constant_step(pb, t.rb, t.pb, k)
        bodies.append(k)
    return bodies


def _twist_constant_step(pb, r, p, e, h):
    if r == sp.eye(3) and p == sp.zeros(3, 1):
        return e, h
    rt = r.T
    return pb.vector(rt * e), pb.vector(rt * (h + e.cross(p)))


def joint_twists(
    pb: ProgramBuilder,
    symbols: list[JointSymbols],
    transforms: list[JointTransform],
    parents: list[int] | None = None,
) -> dict[tuple[int, int], tuple[sp.Matrix, sp.Matrix]]:
    """(e_ij, h_ij) for every joint i and body j it carries (i <= j on a serial chain; j a descendant of i in the
    tree given by ``parents``), expressed in body frame j."""
    n = len(symbols)
    parent = parents if parents is not None else list(range(-1, n - 1))
    twists = {}
    for i in range(n):
        t = transforms[i]
        if symbols[i].revolute:
            e, h = t.axis, sp.zeros(3, 1)
        else:
            e, h = sp.zeros(3, 1), t.axis
        e, h = _twist_constant_step(pb, t.rb, t.pb, e, h)
        twists[(i, i)] = (e, h)
        for j in range(i + 1, n):
            if (i, parent[j]) not in twists:
                continue
            e, h = twists[(i, parent[j])]
            tj = transforms[j]
            e, h = _twist_constant_step(pb, tj.ra, tj.pa, e, h)
            if symbols[j].revolute:
                e, h = pb.vector(tj.rm.T * e), pb.vector(tj.rm.T * h)
            else:
                h = pb.vector(h + e.cross(tj.pm))
            e, h = _twist_constant_step(pb, tj.rb, tj.pb, e, h)
            twists[(i, j)] = (e, h)
    return twists


_UNIT_INERTIA = {
    "Ixx": ((0, 0),),
    "Ixy": ((0, 1), (1, 0)),
    "Ixz": ((0, 2), (2, 0)),
    "Iyy": ((1, 1),),
    "Iyz": ((1, 2), (2, 1)),
    "Izz": ((2, 2),),
}


def body_wrench_columns(pb: ProgramBuilder, k: BodyKinematics) -> list[tuple[sp.Matrix, sp.Matrix]]:
    """(f, n) per standard parameter of one body, in the order m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz."""
    zero = sp.zeros(3, 1)
    cols = [(k.a, zero)]
    for axis in range(3):
        c = sp.zeros(3, 1)
        c[axis] = 1
        f = pb.vector(k.wd.cross(c) + k.w.cross(k.w.cross(c)))
        cols.append((f, pb.vector(c.cross(k.a))))
    for name in ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"):
        unit = sp.zeros(3, 3)
        for r, c in _UNIT_INERTIA[name]:
            unit[r, c] = 1
        n = unit * k.wd + k.w.cross(unit * k.w)
        cols.append((zero, pb.vector(n)))
    return cols


def rigid_body_columns(
    pb: ProgramBuilder,
    bodies: list[BodyKinematics],
    twists: dict[tuple[int, int], tuple[sp.Matrix, sp.Matrix]],
) -> list[list[sp.Expr]]:
    """Regressor columns of all bodies: a list (10 per body) of dof-long row expressions."""
    n = len(bodies)
    columns = []
    for j in range(n):
        wrench_cols = body_wrench_columns(pb, bodies[j])
        for f, moment in wrench_cols:
            rows = []
            for i in range(n):
                if (i, j) not in twists:  # joint i does not carry body j
                    rows.append(sp.Integer(0))
                    continue
                e, h = twists[(i, j)]
                rows.append(pb.name(e.dot(moment) + h.dot(f)))
            columns.append(rows)
    return columns


def rnea_torques(
    pb: ProgramBuilder,
    bodies: list[BodyKinematics],
    transforms: list[JointTransform],
    symbols: list[JointSymbols],
    body_parameters: list[list[sp.Expr]],
    parents: list[int] | None = None,
) -> list[sp.Expr]:
    """Joint torques of the rigid bodies by the backward Newton-Euler recursion (O(n), El-Rayyes eq. 2.5-2.7).

    ``body_parameters[j]`` are the 10 standard parameters of body j (symbols or numbers). The wrench of body j
    and of everything it carries, about origin j in frame j, is carried to the joint-j motion frame through B
    (f' = R_B f, n' = R_B n + p_B x f'), projected on the axis (tau_j = u . n' or u . f'), and carried on to
    frame j-1 through M and A. In a tree (``parents``) a body receives the sum of its children's wrenches.
    """
    n = len(bodies)
    parent = parents if parents is not None else list(range(-1, n - 1))
    torques: list[sp.Expr] = [sp.Integer(0)] * n
    received: dict[int, tuple[sp.Matrix, sp.Matrix]] = {}
    for j in reversed(range(n)):
        k = bodies[j]
        f_child, n_child = received.get(j, (sp.zeros(3, 1), sp.zeros(3, 1)))
        m, mx, my, mz, ixx, ixy, ixz, iyy, iyz, izz = body_parameters[j]
        c = sp.Matrix([mx, my, mz])
        inertia = sp.Matrix([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        f = pb.vector(m * k.a + k.wd.cross(c) + k.w.cross(k.w.cross(c)) + f_child)
        moment = pb.vector(inertia * k.wd + k.w.cross(inertia * k.w) + c.cross(k.a) + n_child)
        t = transforms[j]
        f_m = pb.vector(t.rb * f)
        n_m = pb.vector(t.rb * moment + t.pb.cross(f_m))
        if symbols[j].revolute:
            torques[j] = pb.name(t.axis.dot(n_m))
            f_a, n_a = pb.vector(t.rm * f_m), pb.vector(t.rm * n_m)
        else:
            torques[j] = pb.name(t.axis.dot(f_m))
            f_a, n_a = f_m, pb.vector(n_m + t.pm.cross(f_m))
        f_up = pb.vector(t.ra * f_a)
        n_up = pb.vector(t.ra * n_a + t.pa.cross(f_up))
        if parent[j] in received:  # a second child of the same body: add the wrenches
            f_prev, n_prev = received[parent[j]]
            f_up, n_up = pb.vector(f_prev + f_up), pb.vector(n_prev + n_up)
        received[parent[j]] = (f_up, n_up)
    return torques
