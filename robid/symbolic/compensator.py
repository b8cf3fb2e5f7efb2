"""Gravity-compensator (balancer) regressor columns (interfaces.md section 1.2).

A balancer acts between ``base_point`` (fixed in the previous body, frame i-1) and ``link_point`` (fixed in
joint i's body, frame i) with a force F(l) along the line, F > 0 pushing apart; the motor supplies on top of
the rigid-body torque tau_comp = -F(l) dl/dq. With P(q) = T_{i-1,i}(q) link_point and
l^2 = |P(q) - base_point|^2 (polynomial in sin/cos of q), l dl/dq = (1/2) d(l^2)/dq:

- spring, F = k (l0 - l):  tau = k * (l dl/dq) + (k l0) * (-dl/dq), linear in (k, k l0), parameters
  ``comp_k_J`` and ``comp_kl0_J``;
- gas cylinder, F = -p0 A (v0 / (v0 - A (l - l0)))^n:  tau = p0 * A (v0/(v0 - A (l - l0)))^n dl/dq, linear in
  p0 with the geometry and exponent known, parameter ``comp_p0_J``.

For a revolute joint d/dq = c d/ds - s d/dc on polynomials in s = sin(q + offset), c = cos(q + offset).
"""

from __future__ import annotations

import sympy as sp

from robid.model.robot_model import Joint
from robid.symbolic.geometry import JointSymbols, exact, exact_matrix, exact_vector, joint_motion


def balancer_length_squared(joint: Joint, sym: JointSymbols) -> sp.Expr:
    g = joint.geometry
    rm, pm = joint_motion(joint, sym)
    ra, pa = exact_matrix(g.a_rotation), exact_vector(g.a_translation)
    rb, pb = exact_matrix(g.b_rotation), exact_vector(g.b_translation)
    c = joint.compensator
    point = ra * (rm * (rb * exact_vector(c.link_point) + pb) + pm) + pa
    d = point - exact_vector(c.base_point)
    return sp.expand(d.dot(d))


def d_dq(expr: sp.Expr, sym: JointSymbols) -> sp.Expr:
    if sym.revolute:
        return sp.expand(sym.c * sp.diff(expr, sym.s) - sym.s * sp.diff(expr, sym.c))
    return sp.expand(sp.diff(expr, sym.q))


def compensator_columns(joint: Joint, sym: JointSymbols) -> tuple[list[str], list[float], list[sp.Expr]]:
    """(parameter names, nominal values, torque column in the joint's own row) of one balancer."""
    c = joint.compensator
    l2 = balancer_length_squared(joint, sym)
    half_dl2 = d_dq(l2, sym) / 2  # l dl/dq
    length = sp.sqrt(l2)
    if c.type == "spring":
        return (
            [f"comp_k_{joint.name}", f"comp_kl0_{joint.name}"],
            [c.stiffness, c.stiffness * c.free_length],
            [half_dl2, -half_dl2 / length],
        )
    area, v0, l0, n = exact(c.area), exact(c.v0), exact(c.l0), exact(c.n)
    ratio = v0 / (v0 - area * (length - l0))
    return [f"comp_p0_{joint.name}"], [c.p0], [area * ratio**n * half_dl2 / length]
