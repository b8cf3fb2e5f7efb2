"""Gravity compensator physics: anchor geometry l(q), dl/dq, spring and gas force laws, and the
regressor columns they give (docs/interfaces.md section 1.2, docs/compensator.md section 1).

Written once for two kinds of numbers: numpy arrays (identification, estimation) and exact sympy expressions
(the symbolic regressor). Only ``+ - * / **`` are used on the values; what else a formula needs -- turning a
robot-file constant into a number, a square root, the normal form of a polynomial -- comes from an
:class:`Arithmetic` (``NUMERIC`` for arrays; the symbolic stage passes its exact one), so this module never
imports sympy. The virtual robot (robid.simulation.compensator_plant) keeps its own, independent copy on purpose:
it is the oracle the identification is tested against.

Geometry. A compensator on joint i acts between ``base_point`` b (fixed in body frame i-1) and ``link_point`` p
(fixed in body frame i). With ``T_{i-1,i}(q) = A . M(q) . B`` (docs/model.md) the link point in frame i-1 is
``r(q) = p_A + R_A M(q) w`` with ``w = R_B p + p_B``, and the compensator's vector ``d(q) = r(q) - b`` gives

    l = |d|,        l dl/dq = d . dd/dq  (= (1/2) d(l^2)/dq),        dl/dq = (d . dd/dq) / l

Forces along the line, F > 0 pushing the anchors apart; the motor supplies on top of the rigid-body torque
``tau = -F(l) dl/dq``:

    spring:  F = k (l0 - l)                                  (k stiffness, l0 free length)
    gas:     F = -p0 A (v0 / (v0 - A (l - l0)))^n            (pulls the anchors together)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from robid.model.robot_model import Joint

Vector = tuple[Any, Any, Any]


def _same(x):
    return x


@dataclass(frozen=True)
class Arithmetic:
    """What the compensator formulas need besides ``+ - * / **``, for one kind of number.

    ``number`` turns a robot-file constant (float) into this arithmetic's number (the symbolic stage: an exact
    rational, so that structural zeros stay exact); ``sqrt`` is the square root; ``normal`` brings a polynomial
    in the joint's motion variables to normal form (the symbolic stage: ``sympy.expand``, which the exact
    base-parameter analysis expects; the identity for arrays).
    """

    number: Callable[[float], Any] = float
    sqrt: Callable[[Any], Any] = np.sqrt
    normal: Callable[[Any], Any] = _same


#: numpy arrays or Python floats
NUMERIC = Arithmetic()


# ------------------------------------------------------------------------------------------------ geometry


def motion_variables(joint: Joint, q: np.ndarray):
    """The motion variables :func:`anchor_vectors` takes, from joint values q (numpy): ``(sin theta, cos theta)``
    with ``theta = q + angle_offset`` for a revolute joint, ``x = q + displacement_offset`` for a prismatic one."""
    q = np.asarray(q, dtype=float)
    if joint.revolute:
        theta = q + joint.geometry.angle_offset
        return np.sin(theta), np.cos(theta)
    return q + joint.geometry.displacement_offset


def anchor_vectors(joint: Joint, motion, arithmetic: Arithmetic = NUMERIC) -> tuple[Vector, Vector]:
    """``d(q) = r(q) - b`` and ``dd/dq`` in frame i-1, as 3-tuples of this arithmetic's values (module doc).

    ``motion`` is ``(s, c) = (sin theta, cos theta)``, ``theta = q + angle_offset``, for a revolute joint and
    ``x = q + displacement_offset`` for a prismatic one (:func:`motion_variables`). With the unit axis u and
    ``K = [u]x``:

        revolute  (Rodrigues):  M(q) w = w + s K w + (1 - c) K^2 w,    d(M w)/dq = c K w + s K^2 w
        prismatic:              M(q) w = w + x u,                      d(M w)/dq = u

    and ``d = R_A M(q) w + p_A - b``, ``dd/dq = R_A d(M w)/dq``.
    """
    num = arithmetic.number
    g = joint.geometry
    comp = joint.compensator
    ra = [[num(v) for v in row] for row in g.a_rotation]
    u = tuple(num(v) for v in g.axis)
    link = tuple(num(v) for v in comp.link_point)
    w = _add(_apply([[num(v) for v in row] for row in g.b_rotation], link), tuple(num(v) for v in g.b_translation))
    if joint.revolute:
        s, c = motion
        kw = _cross(u, w)
        kkw = _cross(u, kw)
        moved = tuple(w[j] + s * kw[j] + (1 - c) * kkw[j] for j in range(3))
        rate = tuple(c * kw[j] + s * kkw[j] for j in range(3))
    else:
        moved = tuple(w[j] + motion * u[j] for j in range(3))
        rate = u
    shift = tuple(num(a) - num(b) for a, b in zip(g.a_translation, comp.base_point, strict=True))
    return _add(_apply(ra, moved), shift), _apply(ra, rate)


def length_and_rate(d: Vector, dd: Vector, arithmetic: Arithmetic = NUMERIC) -> tuple[Any, Any]:
    """``(l, l dl/dq) = (sqrt(d . d), d . dd/dq)`` of :func:`anchor_vectors`' output."""
    return arithmetic.sqrt(arithmetic.normal(_dot(d, d))), arithmetic.normal(_dot(d, dd))


def anchor_length(joint: Joint, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """l(q) [m] and dl/dq [m/rad or m/m] of a joint's compensator at joint values q of shape (N,) (numpy)."""
    q = np.atleast_1d(np.asarray(q, dtype=float))
    length, rate = length_and_rate(*anchor_vectors(joint, motion_variables(joint, q)))
    return length, rate / length


def _apply(matrix, v: Vector) -> Vector:
    return tuple(matrix[i][0] * v[0] + matrix[i][1] * v[1] + matrix[i][2] * v[2] for i in range(3))


def _cross(u: Vector, v: Vector) -> Vector:
    """u x v = K v with K = [u]x."""
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _add(a: Vector, b: Vector) -> Vector:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _dot(a: Vector, b: Vector):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


# -------------------------------------------------------------------------------------------- force laws


def compensator_torque(force, dlength):
    """Torque the motor supplies against the compensator, ``tau = -F(l) dl/dq`` (docs/interfaces.md 1.2)."""
    return -force * dlength


def spring_force(length, stiffness, free_length):
    """Spring pushing the anchors apart when compressed: ``F = k (l0 - l)`` [N]."""
    return stiffness * (free_length - length)


def gas_volume(length, area, l0, v0):
    """Gas volume of a cylinder that resists extension, ``V(l) = v0 - A (l - l0)`` [m^3]; physical while > 0."""
    return v0 - area * (length - l0)


def gas_compression(length, area, l0, v0, n):
    """Pressure ratio ``p(l) / p0 = (v0 / (v0 - A (l - l0)))^n`` of a polytropic gas (n = 1 isothermal)."""
    return (v0 / gas_volume(length, area, l0, v0)) ** n


def gas_pressure(length, p0, area, l0, v0, n):
    """Gas pressure ``p(l) = p0 (v0 / (v0 - A (l - l0)))^n`` [Pa], p0 at length l0."""
    return p0 * gas_compression(length, area, l0, v0, n)


def gas_force(length, p0, area, l0, v0, n):
    """Gas cylinder pulling the anchors together: ``F = -p0 A (v0 / (v0 - A (l - l0)))^n`` [N]."""
    return -p0 * area * gas_compression(length, area, l0, v0, n)


# --------------------------------------------------------------------------------------- regressor columns


def spring_columns(length, dlength) -> tuple[Any, Any]:
    """Columns of (k, k l0): ``tau = -F dl/dq = k (l dl/dq) + (k l0) (-dl/dq)`` is linear in both."""
    return length * dlength, -dlength


def gas_p0_column(length, dlength, area, l0, v0, n):
    """Column of p0: ``tau = -F dl/dq = p0 A (v0 / (v0 - A (l - l0)))^n dl/dq`` is linear in p0 once A, l0,
    v0 and n are known."""
    return compensator_torque(gas_force(length, 1, area, l0, v0, n), dlength)
