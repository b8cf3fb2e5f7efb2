"""The closed chain's regressor: the tree structure's regressor projected on the active joints through the
loop-closure Jacobian (docs/model.md, "Closed chains").

Cutting one joint per loop leaves a tree (robid.model.loops) whose Newton-Euler regressor Y_tree(q, qd, qdd) the
usual recursion gives (:mod:`robid.symbolic.newton_euler` with the tree's parents). With W = d q_tree / d q_a
(robid.model.closure), virtual work gives the torques of the active joints (Khalil & Dombre 2002, *Modeling,
Identification and Control of Robots*, section 10.2, eq. 10.7; Khalil & Bennis 1995, "Symbolic calculation of the
base inertial parameters of closed-loop robots", IJRR 14(2))::

    tau_a = W^T tau_tree(q, qd, qdd) = W^T Y_tree(q, qd, qdd) theta = Y_closed theta

the tree's states being those of the closed loop (passive joints from the closure). Two forms:

* **linear** (every loop a parallelogram, q_p = G q_a with an integer G): everything is symbolic. The passive
  joints' sin and cos are polynomials in the active ones' (addition formulas on
  theta_p = sum_a G_pa theta_a + C_p, theta = q + offset), qd_p = G qd_a, qdd_p = G qdd_a, W = [I; G] is constant,
  and the projected rows row_a + sum_p G_pa row_p are part of the straight-line program. The generated code takes
  the active joints only; the exact base parameters come from the same rational evaluation as for a serial robot
  (robid.symbolic.base_parameters), on the active joints' rational states (a parallelogram closes at every pose).
* **numeric** (a general planar loop): the generated code is the tree's (inputs: every tree joint); the projection
  W^T Y_tree is applied numerically after the closure is solved (robid.dynamics.closed_chain). The base parameters
  are found on the projected regressor at random closed states with float grouping (no rational closed states).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import sympy as sp

from robid.model.loops import active_tree_indices, passive_tree_indices, tree_joints, tree_parents
from robid.model.robot_model import RobotModel
from robid.symbolic.geometry import JointSymbols, exact
from robid.symbolic.program import ProgramBuilder


@dataclass(frozen=True)
class ChainSetup:
    """What the derivation of a closed chain needs: the tree as a model (its ``joints`` every tree joint), the
    parents, the tree indices of the active and passive joints, the symbols of every tree joint, the generated
    code's inputs (active joints when ``linear``, else every tree joint) and the integer G (linear only)."""

    tree: RobotModel
    parents: list[int]
    active: list[int]
    passive: list[int]
    symbols: list[JointSymbols]
    inputs: list[JointSymbols]
    relation: list[list[int]] | None

    @property
    def linear(self) -> bool:
        return self.relation is not None

    def input_offsets(self) -> list[float]:
        """Angle offsets of the generated code's inputs (sin and cos of q + offset)."""
        joints = self.tree.joints
        indices = self.active if self.linear else range(len(joints))
        return [joints[i].geometry.angle_offset if joints[i].revolute else 0.0 for i in indices]


def chain_setup(model: RobotModel, program: ProgramBuilder) -> ChainSetup:
    """The tree and its symbols for ``model`` (a closed chain); a linear chain's passive symbols are named
    intermediates of ``program`` (module docstring)."""
    tree = replace(model, joints=tuple(tree_joints(model)), chain=None)
    parents, active, passive = tree_parents(model), active_tree_indices(model), passive_tree_indices(model)
    if model.chain.relation is None:
        symbols = [JointSymbols.make(k + 1, j.revolute) for k, j in enumerate(tree.joints)]
        return ChainSetup(tree, parents, active, passive, symbols, symbols, None)
    relation = [[int(round(v)) for v in row] for row in model.chain.relation]
    inputs = [JointSymbols.make(k + 1, tree.joints[t].revolute) for k, t in enumerate(active)]
    symbols: list[JointSymbols | None] = [None] * len(tree.joints)
    for k, t in enumerate(active):
        symbols[t] = inputs[k]
    for m, t in enumerate(passive):
        symbols[t] = _passive_symbols(tree, active, t, relation[m], inputs, program, len(inputs) + m + 1)
    return ChainSetup(tree, parents, active, passive, symbols, inputs, relation)


def _passive_symbols(tree: RobotModel, active, t: int, row: list[int], inputs, program: ProgramBuilder,
                     index: int) -> JointSymbols:
    """A parallelogram's passive joint as intermediates: theta_p = sum_a G_pa theta_a + C_p with
    C_p = offset_p - sum_a G_pa offset_a (theta = q + offset); sin, cos by the addition formulas."""
    joints = tree.joints
    constant = joints[t].geometry.angle_offset - sum(g * joints[a].geometry.angle_offset for g, a in zip(row, active,
                                                                                                        strict=True))
    s_x, c_x = sp.Integer(0), sp.Integer(1)
    for g, js in zip(row, inputs, strict=True):
        for _ in range(abs(g)):  # sin, cos of x + sign(g) theta_a
            sign = 1 if g > 0 else -1
            s_x, c_x = sp.expand(s_x * js.c + sign * c_x * js.s), sp.expand(c_x * js.c - sign * s_x * js.s)
    cc, sc = exact(math.cos(constant)), exact(math.sin(constant))
    s_p = program.name(sp.expand(s_x * cc + c_x * sc))
    c_p = program.name(sp.expand(c_x * cc - s_x * sc))
    qd = program.name(sp.Add(*(g * js.qd for g, js in zip(row, inputs, strict=True))))
    qdd = program.name(sp.Add(*(g * js.qdd for g, js in zip(row, inputs, strict=True))))
    return JointSymbols(index=index, revolute=True, s=s_p, c=c_p, q=None, qd=qd, qdd=qdd,
                        sign=sp.Symbol(f"sgp{index}", real=True))


def project_rows(setup: ChainSetup, rows: list[sp.Expr], program: ProgramBuilder) -> list[sp.Expr]:
    """W^T applied to one column (or torque vector) of tree rows: row_a + sum_p G_pa row_p (linear chains)."""
    out = []
    for k, a in enumerate(setup.active):
        expr = rows[a] + sp.Add(*(g[k] * rows[p] for g, p in zip(setup.relation, setup.passive, strict=True)))
        out.append(program.name(expr) if expr != 0 else sp.Integer(0))
    return out
