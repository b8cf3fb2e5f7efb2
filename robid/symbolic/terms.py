"""Regressor terms: each contributes named parameters, their nominal values and their regressor columns.

The regressor is the concatenation of the terms' columns, tau = sum_terms Y_term(q, qd, qdd) pi_term. New
physics (gravity compensators, elastic-joint rows) plugs in as another Term without touching the others.
Available terms (docs/model.md): ``rigid`` (10 standard inertial parameters per body, about the frame origin),
``rotor`` (reflected rotor inertia Ia_J = rotor_inertia * gear_ratio^2, column qdd_J in row J; the coupling of
the rotor with the carrying body is neglected: Spong's reduced model), ``rotor_coupled`` (the same Ia_J with the
rotor-link inertial coupling of the complete model, Zollo et al. 2015 eq. 19-20), ``viscous`` (fv_J, column
qd_J), ``coulomb`` (fc_J, column sign(qd_J)), ``offset`` (f0_J, column 1), ``drive_coupling`` (Iam_J, fvm_J,
fcm_J of a motor that also turns with a second joint: :func:`drive_coupling_term`), ``compensator``, and
for elastic joints ``stiffness`` (k_J), ``damping`` (d_J) and ``link_viscous`` (fl_J).

Elastic layout (docs/elastic.md section 2). With ``stiffness`` among the terms, every joint with an
``elasticity`` block gets a motor coordinate theta_J (motor angle / gear ratio) and a motor equation, so the
regressor has n link rows followed by one motor row per elastic joint (Zollo et al. 2015 eq. 2-6)::

    link row J :  0 = [rigid bodies](q) + [rotor coupling] + fl_J qd_J + k_J (q_J - theta_J) + d_J (qd_J - thetad_J)
    motor row J:  u_J = Ia_J thetadd_J [+ coupling] + fv_J thetad_J + fc_J sign(thetad_J) + f0_J
                        - k_J (q_J - theta_J) - d_J (qd_J - thetad_J)

A rigid joint keeps one row, driven by its torque, with the drive terms at the link state (theta = q).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from robid.model.robot_model import INERTIAL_PARAMETERS, RobotModel
from robid.symbolic.geometry import JointSymbols, MotorSymbols
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
    motors: dict[int, MotorSymbols] = field(default_factory=dict)  # elastic joints, by 0-based joint index
    sum_angles: bool = False  # customised recursion: sum angles of parallel joints (newton_euler.forward_kinematics)
    parents: list[int] | None = None  # closed chains: the tree (robid.symbolic.closed_chain); None: serial
    passive: frozenset[int] = frozenset()  # closed chains: tree indices of the passive joints (no drive terms)
    _bodies: list | None = None
    _twists: dict | None = None
    _transforms: list | None = None

    def transforms(self):
        if self._transforms is None:
            self._transforms = joint_transforms(self.model, self.symbols)
        return self._transforms

    @property
    def rows(self) -> int:
        """n link rows plus one motor row per elastic joint."""
        return self.model.dof + len(self.motors)

    def drive_row(self, i: int) -> int:
        """Row of joint i's drive equation: its motor row when elastic, else its (only) row."""
        return self.motors[i].row if i in self.motors else i

    def drive_state(self, i: int) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        """(velocity, acceleration, sign of velocity) of joint i's drive: motor side when elastic."""
        if i in self.motors:
            m = self.motors[i]
            return m.thd, m.thdd, m.sign
        s = self.symbols[i]
        return s.qd, s.qdd, s.sign

    def kinematics(self):
        if self._bodies is None:
            self._bodies = forward_kinematics(
                self.program, self.model, self.symbols, self.transforms(), sum_angles=self.sum_angles,
                parents=self.parents,
            )
            self._twists = joint_twists(self.program, self.symbols, self.transforms(), self.parents)
        return self._bodies, self._twists


@dataclass(frozen=True)
class TermColumns:
    names: list[str]
    nominal: list[float]
    columns: list[list[sp.Expr]]  # one list of dof row expressions per parameter


def _unit_rows(n_rows: int, row: int, value: sp.Expr) -> list[sp.Expr]:
    rows = [sp.Integer(0)] * n_rows
    rows[row] = value
    return rows


def _pad(ctx: DerivationContext, link_rows: list[sp.Expr]) -> list[sp.Expr]:
    """Link-row expressions extended with zero motor rows."""
    return list(link_rows) + [sp.Integer(0)] * (ctx.rows - len(link_rows))


def rigid_term(ctx: DerivationContext) -> TermColumns:
    bodies, twists = ctx.kinematics()
    names, nominal = [], []
    for joint in ctx.model.joints:
        names += [f"{p}_{joint.name}" for p in INERTIAL_PARAMETERS]
        nominal += [float(v) for v in joint.link.standard_parameters()]
    columns = [_pad(ctx, col) for col in rigid_body_columns(ctx.program, bodies, twists)]
    return TermColumns(names, nominal, columns)


def rotor_term(ctx: DerivationContext) -> TermColumns:
    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        if joint.drive is None:
            continue
        names.append(f"Ia_{joint.name}")
        nominal.append(joint.drive.reflected_inertia)
        columns.append(_unit_rows(ctx.rows, ctx.drive_row(i), ctx.drive_state(i)[1]))
    return TermColumns(names, nominal, columns)


def rotor_coupled_term(ctx: DerivationContext) -> TermColumns:
    """Ia_J with the rotor-link coupling of the complete elastic model (Zollo et al. 2015, eq. 1, 19-20).

    Rotor J is carried by body J-1 and spins about z (joint J's axis in frame J-1) at k thetad_J relative to it
    (k the gear ratio). Its kinetic energy beyond the carrying body's share is Y k thetad z.w + Y k^2 thetad^2/2
    (Y the rotor's axial inertia, Ia = Y k^2). Per unit Ia: the drive row gets thetadd_J + (z . wd_{J-1})/k, and
    body J-1 receives the moment (thetadd_J z + thetad_J w_{J-1} x z)/k, the rate of the rotor's relative
    angular momentum, which reaches link row i through the twist e_{i,J-1} (Newton-Euler form of eq. 19).
    """
    bodies, twists = ctx.kinematics()
    transforms = ctx.transforms()
    names, nominal, columns = [], [], []
    for r, joint in enumerate(ctx.model.joints):
        if joint.drive is None:
            continue
        names.append(f"Ia_{joint.name}")
        nominal.append(joint.drive.reflected_inertia)
        thd, thdd, _ = ctx.drive_state(r)
        rows = [sp.Integer(0)] * ctx.rows
        rows[ctx.drive_row(r)] = thdd
        if r > 0:
            inv_k = 1 / sp.Rational(repr(float(joint.drive.gear_ratio)))
            carrier = bodies[r - 1]
            z = transforms[r].ra * transforms[r].axis
            rows[ctx.drive_row(r)] = ctx.program.name(thdd + inv_k * z.dot(carrier.wd))
            moment = ctx.program.vector(inv_k * (thdd * z + thd * carrier.w.cross(z)))
            for i in range(r):
                e, _ = twists[(i, r - 1)]
                rows[i] = ctx.program.name(rows[i] + e.dot(moment))
        columns.append(rows)
    return TermColumns(names, nominal, columns)


def _friction_term(ctx: DerivationContext, prefix: str, attr: str, column) -> TermColumns:
    """Drive friction of every joint at the drive state (motor side on elastic joints): column(v, sign v)."""
    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        if i in ctx.passive:  # a passive joint's bearing friction is lumped into the active joints'
            continue
        names.append(f"{prefix}_{joint.name}")
        nominal.append(float(getattr(joint.friction, attr)))
        v, _, sign = ctx.drive_state(i)
        columns.append(_unit_rows(ctx.rows, ctx.drive_row(i), column(v, sign)))
    return TermColumns(names, nominal, columns)


def drive_coupling_term(ctx: DerivationContext) -> TermColumns:
    """Iam_J, fvm_J, fcm_J of every drive J whose motor also turns with joint K (coupled wrist, docs/model.md).

    The motor angle is theta_m = r_J (q_J + rho q_K), rho = coupling ratio / r_J, so by virtual power
    (tau = N^T tau_m, theta_m = N q) a motor-side inertia or viscous
    coefficient X reaches the joints as X r_J^2 [[1, rho], [rho, rho^2]] on (J, K). The (J, J) entry is the
    ordinary column of Ia_J (fv_J); this term adds the rest, per unit of Iam_J = Jm r_J^2 (fvm_J = fv_m r_J^2)::

        row J: rho qdd_K               (rho qd_K)
        row K: rho qdd_J + rho^2 qdd_K (rho qd_J + rho^2 qd_K)

    so that Ia_J = Iam_J = Jm r_J^2 reproduces N^T Jm N qdd exactly. The motor's Coulomb friction
    fc_m sign(theta_m') acts on both joints at the sign of the motor velocity v = qd_J + rho qd_K: per unit of
    fcm_J = |r_J| fc_m, row J sign(v), row K rho sign(v). With rho = 1 (TX40: theta_m6 = 32 (q5 + q6)) the columns
    are FIGAROH's [qdd6, qd6, sign(qd5 + qd6)] on joint 5 and [qdd5, qd5, sign(qd5 + qd6)] on joint 6, except that
    joint 5 also receives rho^2 qdd_5 (rho^2 qd_5) here, which FIGAROH leaves in Ia_5 (fv_5).
    """
    from robid.model.terms import COUPLING_PREFIXES, coupling_nominal

    per_kind: dict[str, tuple[list, list, list]] = {p: ([], [], []) for p in COUPLING_PREFIXES}
    for j, joint in enumerate(ctx.model.joints):
        sj = ctx.symbols[j]
        if sj.coupled_sign is None:
            continue
        k, rho = sj.coupled_joint, sj.coupled_ratio
        sk = ctx.symbols[k]
        values = {
            "Iam": (rho * sk.qdd, rho * sj.qdd + rho**2 * sk.qdd),
            "fvm": (rho * sk.qd, rho * sj.qd + rho**2 * sk.qd),
            "fcm": (sj.coupled_sign, rho * sj.coupled_sign),
        }
        for prefix, (row_j, row_k) in values.items():
            rows = _unit_rows(ctx.rows, j, row_j)
            rows[k] = row_k
            names, nominal, columns = per_kind[prefix]
            names.append(f"{prefix}_{joint.name}")
            nominal.append(coupling_nominal(joint.drive, prefix))
            columns.append(rows)
    out = [[], [], []]
    for prefix in COUPLING_PREFIXES:
        for acc, part in zip(out, per_kind[prefix], strict=True):
            acc += part
    return TermColumns(*out)


def _elastic_term(ctx: DerivationContext, prefix: str, attr: str, link_value, motor_sign: int) -> TermColumns:
    """One parameter per elastic joint: ``link_value(joint symbols, motor symbols)`` in the link row and
    ``motor_sign`` times it in the motor row (the spring's reaction)."""
    names, nominal, columns = [], [], []
    for i, m in sorted(ctx.motors.items()):
        joint = ctx.model.joints[i]
        names.append(f"{prefix}_{joint.name}")
        nominal.append(float(getattr(joint.elasticity, attr)))
        value = link_value(ctx.symbols[i], m)
        rows = _unit_rows(ctx.rows, i, value)
        rows[m.row] = motor_sign * value
        columns.append(rows)
    return TermColumns(names, nominal, columns)


def compensator_term(ctx: DerivationContext) -> TermColumns:
    from robid.symbolic.compensator_columns import compensator_columns

    names, nominal, columns = [], [], []
    for i, joint in enumerate(ctx.model.joints):
        if joint.compensator is None:
            continue
        n, v, cols = compensator_columns(joint, ctx.symbols[i])
        names += n
        nominal += v
        columns += [_unit_rows(ctx.rows, i, ctx.program.name(col)) for col in cols]
    return TermColumns(names, nominal, columns)


TERMS = {
    "rigid": rigid_term,
    "rotor": rotor_term,
    "rotor_coupled": rotor_coupled_term,
    "viscous": lambda ctx: _friction_term(ctx, "fv", "viscous", lambda v, sg: v),
    "coulomb": lambda ctx: _friction_term(ctx, "fc", "coulomb", lambda v, sg: sg),
    "offset": lambda ctx: _friction_term(ctx, "f0", "offset", lambda v, sg: sp.Integer(1)),
    "drive_coupling": drive_coupling_term,
    "compensator": compensator_term,
    "stiffness": lambda ctx: _elastic_term(ctx, "k", "stiffness", lambda js, m: m.dl, -1),
    "damping": lambda ctx: _elastic_term(ctx, "d", "damping", lambda js, m: js.qd - m.thd, -1),
    "link_viscous": lambda ctx: _elastic_term(ctx, "fl", "link_viscous", lambda js, m: js.qd, 0),
}


def motor_symbols(model: RobotModel, terms: tuple[str, ...]) -> dict[int, MotorSymbols]:
    """Motor coordinates of the elastic layout: one per joint with an elasticity block when ``stiffness`` is
    among the terms (module docstring), none otherwise."""
    if "stiffness" not in terms:
        return {}
    elastic = [i for i, j in enumerate(model.joints) if j.elasticity is not None]
    return {i: MotorSymbols.make(i, model.dof + k) for k, i in enumerate(elastic)}


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
    torques = [sp.Integer(0)] * ctx.rows
    for t in terms:
        if t == "rigid":
            params = [values[10 * j : 10 * j + 10] for j in range(dof)]
            rigid = _pad(ctx, rnea_torques(ctx.program, bodies, transforms, ctx.symbols, params, ctx.parents))
            torques = [a + b for a, b in zip(torques, rigid, strict=True)]
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
