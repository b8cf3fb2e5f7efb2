"""Regressor terms: each contributes named parameters, their nominal values and their regressor columns.

The regressor is the concatenation of the terms' columns, tau = sum_terms Y_term(q, qd, qdd) pi_term. New
physics (gravity compensators, elastic-joint rows) plugs in as another Term without touching the others.
Available terms (docs/model.md): ``rigid`` (10 standard inertial parameters per body, about the frame origin),
``rotor`` (reflected rotor inertia Ia_J = rotor_inertia * gear_ratio^2, column qdd_J in row J; the gyroscopic
coupling of the rotor with the carrying body is neglected, as usual for high gear ratios), ``viscous`` (fv_J,
column qd_J), ``coulomb`` (fc_J, column sign(qd_J)) and ``offset`` (f0_J, column 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from robid.model.robot_model import INERTIAL_PARAMETERS, RobotModel
from robid.symbolic.geometry import JointSymbols
from robid.symbolic.newton_euler import (
    forward_kinematics,
    joint_transforms,
    joint_twists,
    rigid_body_columns,
)
from robid.symbolic.program import ProgramBuilder


@dataclass
class DerivationContext:
    """Shared symbolic state of one derivation (kinematics computed once, on demand)."""

    model: RobotModel
    symbols: list[JointSymbols]
    program: ProgramBuilder
    _bodies: list | None = None
    _twists: dict | None = None
    _transforms: list | None = None

    def transforms(self):
        if self._transforms is None:
            self._transforms = joint_transforms(self.model, self.symbols)
        return self._transforms

    def kinematics(self):
        if self._bodies is None:
            self._bodies = forward_kinematics(self.program, self.model, self.symbols, self.transforms())
            self._twists = joint_twists(self.program, self.symbols, self.transforms())
        return self._bodies, self._twists


@dataclass(frozen=True)
class TermColumns:
    names: list[str]
    nominal: list[float]
    columns: list[list[sp.Expr]]  # one list of dof row expressions per parameter


def _unit_rows(dof: int, row: int, value: sp.Expr) -> list[sp.Expr]:
    rows = [sp.Integer(0)] * dof
    rows[row] = value
    return rows


def rigid_term(ctx: DerivationContext) -> TermColumns:
    bodies, twists = ctx.kinematics()
    names, nominal = [], []
    for joint in ctx.model.joints:
        names += [f"{p}_{joint.name}" for p in INERTIAL_PARAMETERS]
        nominal += [float(v) for v in joint.link.standard_parameters()]
    return TermColumns(names, nominal, rigid_body_columns(ctx.program, bodies, twists))


def rotor_term(ctx: DerivationContext) -> TermColumns:
    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        if joint.drive is None:
            continue
        names.append(f"Ia_{joint.name}")
        nominal.append(joint.drive.reflected_inertia)
        columns.append(_unit_rows(ctx.model.dof, i, ctx.symbols[i].qdd))
    return TermColumns(names, nominal, columns)


def _friction_term(ctx: DerivationContext, prefix: str, attr: str, column) -> TermColumns:
    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        names.append(f"{prefix}_{joint.name}")
        nominal.append(float(getattr(joint.friction, attr)))
        columns.append(_unit_rows(ctx.model.dof, i, column(ctx.symbols[i])))
    return TermColumns(names, nominal, columns)


def compensator_term(ctx: DerivationContext) -> TermColumns:
    from robid.symbolic.balancer_columns import compensator_columns

    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        if joint.compensator is None:
            continue
        n, v, cols = compensator_columns(joint, ctx.symbols[i])
        names += n
        nominal += v
        columns += [_unit_rows(ctx.model.dof, i, ctx.program.name(col)) for col in cols]
    return TermColumns(names, nominal, columns)


TERMS = {
    "rigid": rigid_term,
    "rotor": rotor_term,
    "viscous": lambda ctx: _friction_term(ctx, "fv", "viscous", lambda s: s.qd),
    "coulomb": lambda ctx: _friction_term(ctx, "fc", "coulomb", lambda s: s.sign),
    "offset": lambda ctx: _friction_term(ctx, "f0", "offset", lambda s: sp.Integer(1)),
    "compensator": compensator_term,
}


def derive_columns(ctx: DerivationContext, terms: tuple[str, ...]) -> TermColumns:
    names, nominal, columns = [], [], []
    for t in terms:
        tc = TERMS[t](ctx)
        names += tc.names
        nominal += tc.nominal
        columns += tc.columns
    return TermColumns(names, nominal, columns)



def parameter_symbols(n: int, prefix: str = "p") -> list[sp.Symbol]:
    """Runtime parameter inputs of generated torque functions: p_0 ... p_{n-1}."""
    return [sp.Symbol(f"{prefix}_{k}", real=True) for k in range(n)]


def derive_torques(ctx: DerivationContext, terms: tuple[str, ...], values: list[sp.Expr]) -> list[sp.Expr]:
    """tau = Y(q, qd, qdd) . values, by the O(n) backward recursion for the rigid bodies plus the joint terms.

    ``values`` follows the column order of :func:`derive_columns` (symbols or numbers; zeros drop out).
    """
    from robid.symbolic.newton_euler import rnea_torques

    model = ctx.model
    dof = model.dof
    bodies, _ = ctx.kinematics()
    transforms = ctx.transforms()
    pos = 0
    torques = [sp.Integer(0)] * dof
    for t in terms:
        if t == "rigid":
            params = [values[10 * j : 10 * j + 10] for j in range(dof)]
            torques = [a + b for a, b in zip(torques, rnea_torques(ctx.program, bodies, transforms, ctx.symbols,
                                                                   params), strict=True)]
            pos += 10 * dof
        else:
            tc = TERMS[t](ctx)
            for col in tc.columns:
                v = values[pos]
                pos += 1
                if v != 0:
                    torques = [a + ctx.program.name(row * v) if row != 0 else a for a, row in zip(torques, col,
                                                                                                  strict=True)]
    return [ctx.program.name(t) for t in torques]
