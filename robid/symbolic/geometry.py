"""Exact sympy versions of the model's constant transforms and the joint symbols.

Constants are made exact so that structural zeros stay exact: rotation entries within 1e-12 of 0 or +-1 become
those integers, every other number becomes the rational of its shortest decimal representation (0.4318 ->
2159/5000). The numeric code prints them back as floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from robid.model.robot_model import Joint


def exact(x: float) -> sp.Expr:
    x = float(x)
    for target in (0, 1, -1):
        if abs(x - target) < 1e-12:
            return sp.Integer(target)
    return sp.Rational(repr(x))


def exact_vector(values) -> sp.Matrix:
    return sp.Matrix([exact(v) for v in values])


def exact_matrix(rows) -> sp.Matrix:
    return sp.Matrix([[exact(v) for v in row] for row in rows])


@dataclass(frozen=True)
class JointSymbols:
    """Symbols of one joint: sin/cos of (q + offset) for revolute joints, q for prismatic, qd, qdd, sign(qd).

    A joint whose drive is coupled to a second joint K (docs/model.md, "Coupled drives") also has
    ``coupled_sign`` = sign(qd + rho qd_K), the sign of its motor's velocity in joint units, with ``coupled_joint``
    the 0-based index of K and ``coupled_ratio`` the exact rho (coupling ratio / gear ratio).

    A revolute joint whose axis continues a run of parallel revolute joints (no constant rotation between them,
    :func:`parallel_runs`) also has ``s_sum``, ``c_sum`` = sin, cos of the sum of the run's angles (with offsets)
    up to this joint, and ``sum_joints`` the run's 0-based joint indices: the customised recursion
    (:func:`robid.symbolic.newton_euler.forward_kinematics` with ``sum_angles``) rotates the angular velocity and
    acceleration entering the run by the sum angle at once (El-Rayyes 1990 section 3.3, S23 = SIN(TH(2)+TH(3))).
    """

    index: int  # 1-based
    revolute: bool
    s: sp.Symbol | None
    c: sp.Symbol | None
    q: sp.Symbol | None
    qd: sp.Symbol
    qdd: sp.Symbol
    sign: sp.Symbol
    coupled_joint: int | None = None
    coupled_ratio: sp.Rational | None = None
    coupled_sign: sp.Symbol | None = None
    sum_joints: tuple[int, ...] = ()
    s_sum: sp.Symbol | None = None
    c_sum: sp.Symbol | None = None

    @staticmethod
    def make(
        index: int, revolute: bool, coupling: tuple[int, sp.Rational] | None = None, run: tuple[int, ...] = ()
    ) -> JointSymbols:
        r = {"real": True}
        tag = "_".join(str(j + 1) for j in run)
        return JointSymbols(
            index=index,
            revolute=revolute,
            s=sp.Symbol(f"s{index}", **r) if revolute else None,
            c=sp.Symbol(f"c{index}", **r) if revolute else None,
            q=None if revolute else sp.Symbol(f"q{index}", **r),
            qd=sp.Symbol(f"qd{index}", **r),
            qdd=sp.Symbol(f"qdd{index}", **r),
            sign=sp.Symbol(f"sg{index}", **r),
            coupled_joint=coupling[0] if coupling else None,
            coupled_ratio=coupling[1] if coupling else None,
            coupled_sign=sp.Symbol(f"sgc{index}", **r) if coupling else None,
            sum_joints=run,
            s_sum=sp.Symbol(f"s{tag}", **r) if run else None,
            c_sum=sp.Symbol(f"c{tag}", **r) if run else None,
        )


def joint_symbols(model) -> list[JointSymbols]:
    """The symbols of every joint of ``model`` (1-based names), with the coupled drives' motor-velocity signs and
    the sum angles of parallel revolute joints (:func:`parallel_runs`)."""
    runs = parallel_runs(model)
    out = []
    for k, joint in enumerate(model.joints):
        coupling = None
        if joint.drive is not None and joint.drive.coupling is not None:
            coupling = (model.joint_names.index(joint.drive.coupling.joint), coupled_ratio(joint.drive))
        out.append(JointSymbols.make(k + 1, joint.revolute, coupling, runs.get(k, ())))
    return out


def parallel_runs(model) -> dict[int, tuple[int, ...]]:
    """For each revolute joint k that follows a revolute joint about the same axis with no constant rotation in
    between (B of the previous joint and A of joint k are pure translations, the axes equal), the run of such
    joints ending at k, 0-based: e.g. {2: (1, 2)} for the PUMA 560's parallel shoulder and elbow. Rotations about
    one axis compose by adding angles, R(q1) R(q2) = R(q1 + q2)."""
    runs: dict[int, tuple[int, ...]] = {}
    joints = model.joints
    for k in range(1, len(joints)):
        prev, joint = joints[k - 1], joints[k]
        if not (prev.revolute and joint.revolute):
            continue
        identity = sp.eye(3)
        if exact_matrix(prev.geometry.b_rotation) != identity or exact_matrix(joint.geometry.a_rotation) != identity:
            continue
        if exact_vector(prev.geometry.axis) != exact_vector(joint.geometry.axis):
            continue
        runs[k] = runs.get(k - 1, (k - 1,)) + (k,)
    return runs


def coupled_ratio(drive) -> sp.Rational:
    """rho = coupling ratio / gear ratio, exact (32/32 = 1): the partner joint's share of the motor velocity."""
    return exact(drive.coupling.ratio) / exact(drive.gear_ratio)


@dataclass(frozen=True)
class MotorSymbols:
    """Motor-side symbols of one elastic joint (Spong/Zollo coordinates, theta = motor angle / gear ratio).

    ``dl`` is the deflection q - theta (the only way the motor position enters the equations), ``thd`` and
    ``thdd`` the motor velocity and acceleration, ``sign`` sign(thd) for the motor-side Coulomb friction.
    ``joint`` is the 0-based index of the joint, ``row`` the row of its motor equation (after the n link rows).
    """

    joint: int
    row: int
    dl: sp.Symbol
    thd: sp.Symbol
    thdd: sp.Symbol
    sign: sp.Symbol

    @staticmethod
    def make(joint: int, row: int) -> MotorSymbols:
        i, r = joint + 1, {"real": True}
        return MotorSymbols(
            joint=joint,
            row=row,
            dl=sp.Symbol(f"dl{i}", **r),
            thd=sp.Symbol(f"thd{i}", **r),
            thdd=sp.Symbol(f"thdd{i}", **r),
            sign=sp.Symbol(f"sgm{i}", **r),
        )


def skew(u: sp.Matrix) -> sp.Matrix:
    return sp.Matrix([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])


def joint_motion(joint: Joint, sym: JointSymbols) -> tuple[sp.Matrix, sp.Matrix]:
    """Rotation and translation of the joint motion M(q) (docs/model.md), in the frame after A.

    Revolute: Rodrigues R = I + s K + (1 - c) K^2 with s, c = sin, cos(q + offset); prismatic: p = u (q + d0).
    """
    u = exact_vector(joint.geometry.axis)
    if sym.revolute:
        return axis_rotation(u, sym.s, sym.c), sp.zeros(3, 1)
    return sp.eye(3), u * (sym.q + exact(joint.geometry.displacement_offset))


def axis_rotation(u: sp.Matrix, s: sp.Expr, c: sp.Expr) -> sp.Matrix:
    """Rotation about the unit axis ``u`` by the angle of sine ``s`` and cosine ``c`` (Rodrigues:
    R = I + s K + (1 - c) K^2, K = skew(u))."""
    k = skew(u)
    return (sp.eye(3) + s * k + (1 - c) * (k * k)).applyfunc(sp.expand)
