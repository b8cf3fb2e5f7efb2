"""Gravity-compensator regressor columns (docs/interfaces.md section 1.2, docs/compensator.md section 1).

A compensator acts between ``base_point`` (fixed in the previous body, frame i-1) and ``link_point`` (fixed in
joint i's body, frame i) with a force F(l) along the line, F > 0 pushing apart; the motor supplies on top of
the rigid-body torque tau_comp = -F(l) dl/dq. The geometry and the force laws are robid.model.compensator's,
evaluated here in exact arithmetic (:data:`EXACT`): with s = sin(q + offset), c = cos(q + offset) the anchor
vector d(q) is polynomial in s, c, so l^2 = d . d and l dl/dq = d . dd/dq are expanded polynomials and
l = sqrt(l^2):

- spring, F = k (l0 - l):  tau = k * (l dl/dq) + (k l0) * (-dl/dq), linear in (k, k l0), parameters
  ``comp_k_J`` and ``comp_kl0_J``;
- gas cylinder, F = -p0 A (v0 / (v0 - A (l - l0)))^n:  tau = p0 * A (v0/(v0 - A (l - l0)))^n dl/dq, linear in
  p0 with the geometry and exponent known, parameter ``comp_p0_J``.

- Fourier basis for a compensator of unknown construction: tau = sum_k b_k sin(k (q - q_s)), parameters
  ``comp_b<k>_J``. A two-point compensator's torque is odd about the angle q_s at which the link point crosses the
  line through the base point and the joint axis, so only these sines belong in the basis (Assadi notes,
  section 2.5: with q_s = 90 deg the terms are -cos q, -sin 2q, cos 3q, ...; a cos 2q term is wrong).
"""

from __future__ import annotations

import sympy as sp

from robid.model.compensator import Arithmetic, anchor_vectors, gas_p0_column, length_and_rate, spring_columns
from robid.model.robot_model import Joint
from robid.symbolic.geometry import JointSymbols, exact

#: exact constants, so that structural zeros stay exact and the base analysis sees polynomials in s, c
EXACT = Arithmetic(number=exact, sqrt=sp.sqrt, normal=sp.expand)


def motion_symbols(joint: Joint, sym: JointSymbols):
    """The motion variables of robid.model.compensator.anchor_vectors: (s, c) of q + offset, or q + offset."""
    if sym.revolute:
        return sym.s, sym.c
    return sym.q + exact(joint.geometry.displacement_offset)


def compensator_columns(joint: Joint, sym: JointSymbols) -> tuple[list[str], list[float], list[sp.Expr]]:
    """(parameter names, nominal values, torque column in the joint's own row) of one compensator."""
    c = joint.compensator
    if c.type == "fourier":
        return fourier_columns(joint, sym)
    d, dd = anchor_vectors(joint, motion_symbols(joint, sym), EXACT)
    length, rate = length_and_rate(d, dd, EXACT)  # rate = l dl/dq, a polynomial in s, c (or q)
    dlength = rate / length
    if c.type == "spring":
        return (
            [f"comp_k_{joint.name}", f"comp_kl0_{joint.name}"],
            [c.stiffness, c.stiffness * c.free_length],
            list(spring_columns(length, dlength)),
        )
    area, v0, l0, n = exact(c.area), exact(c.v0), exact(c.l0), exact(c.n)
    return [f"comp_p0_{joint.name}"], [c.p0], [gas_p0_column(length, dlength, area, l0, v0, n)]


def fourier_columns(joint: Joint, sym: JointSymbols) -> tuple[list[str], list[float], list[sp.Expr]]:
    """sin(k (q - q_s)) = sin(k theta - phi_k), theta = q + offset, phi_k = k (offset + q_s), as polynomials
    in s = sin(theta), c = cos(theta) (multiple-angle expansion), so the exact base analysis still applies."""
    if not sym.revolute:
        from robid.errors import RobidInputError

        raise RobidInputError(f"joint {joint.name}: a fourier compensator needs a revolute joint")
    c = joint.compensator
    x = sp.Symbol("x", real=True)
    names, cols = [], []
    for k in range(1, c.order + 1):
        phi = k * (joint.geometry.angle_offset + c.symmetry_angle)
        sin_k = sp.expand(sp.expand_trig(sp.sin(k * x))).subs({sp.sin(x): sym.s, sp.cos(x): sym.c})
        cos_k = sp.expand(sp.expand_trig(sp.cos(k * x))).subs({sp.sin(x): sym.s, sp.cos(x): sym.c})
        cols.append(sp.expand(sin_k * exact(_cos(phi)) - cos_k * exact(_sin(phi))))
        names.append(f"comp_b{k}_{joint.name}")
    return names, list(c.coefficients), cols


def _cos(angle: float) -> float:
    import math

    quarter = angle / (math.pi / 2)
    if abs(quarter - round(quarter)) < 1e-12:
        return [1.0, 0.0, -1.0, 0.0][int(round(quarter)) % 4]
    return math.cos(angle)


def _sin(angle: float) -> float:
    import math

    quarter = angle / (math.pi / 2)
    if abs(quarter - round(quarter)) < 1e-12:
        return [0.0, 1.0, 0.0, -1.0][int(round(quarter)) % 4]
    return math.sin(angle)
