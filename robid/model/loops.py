"""Closed kinematic chains: passive joints, loop closures and the tree they are cut into (docs/model.md,
"Closed chains").

A robot with loops is described as a **tree** (Khalil & Dombre 2002, *Modeling, Identification and Control of
Robots*, section 7.2: the equivalent tree structure obtained by cutting one joint per loop): every joint, active or
passive, moves one body and hangs on a parent body (the previous joint's by default, or any earlier one). Each loop
is closed by a **closing pair of frames**: a point on one body of the loop and a point on another that coincide
when the loop is assembled (the cut joint's axis passes through them). The active joints are the ones the
controller drives (:attr:`RobotModel.joints`); the passive joints follow from the closure.

Two kinds of loop:

* ``parallelogram``: the passive angles are linear in the active ones, ``q_p = G q_a`` with an integer matrix G
  (Khalil & Dombre 2002, section 7.5 and the parallelogram example of section 9.10); checked on the geometry;
* ``planar``: any loop whose revolute joints have parallel axes (prismatic joints moving in the plane); its
  passive joints are solved numerically (robid.model.closure).

This module holds the description (frozen dataclasses) and the tree's bookkeeping; numbers are in
:mod:`robid.model.closure`.
"""

from __future__ import annotations

from dataclasses import dataclass

LOOP_KINDS = ("parallelogram", "planar")


@dataclass(frozen=True)
class LoopEnd:
    """One frame of a loop's closing pair: its origin ``xyz`` (m) in the body frame of joint ``body``."""

    body: str
    xyz: tuple[float, float, float]


@dataclass(frozen=True)
class Loop:
    """A closed loop: its ``kind`` (``parallelogram`` | ``planar``), the ``passive`` joints it determines (two per
    planar loop: the closure fixes two coordinates of a point in the loop's plane) and its closing pair ``close``."""

    name: str
    kind: str
    passive: tuple[str, ...]
    close: tuple[LoopEnd, LoopEnd]


@dataclass(frozen=True)
class ClosedChain:
    """The tree behind a closed-chain robot (module docstring).

    ``passive`` are the passive joints with their bodies and limits (no drive, no friction); ``order`` names every
    joint, active or passive, in tree order (a parent before its children) and ``parents`` the parent joint of
    each ('' for the base). ``relation`` (n_passive x n_active, integers stored as floats), when every loop is a
    parallelogram, gives the passive positions ``q_p = relation @ q_a`` (rows in the order of ``passive``, columns
    in the order of the active joints); None when a planar loop has to be solved numerically.
    """

    passive: tuple  # tuple[Joint, ...]; typed loosely to keep this module free of robot_model
    order: tuple[str, ...]
    parents: tuple[str, ...]
    loops: tuple[Loop, ...]
    relation: tuple[tuple[float, ...], ...] | None = None

    @property
    def passive_names(self) -> list[str]:
        return [j.name for j in self.passive]

    @property
    def linear(self) -> bool:
        """True when the passive positions are linear in the active ones (parallelograms only)."""
        return self.relation is not None


def tree_joints(model) -> list:
    """Every joint of ``model`` in tree order: its joints for a serial robot, actives and passives interleaved as
    the robot file lists them for a closed chain."""
    chain = getattr(model, "chain", None)
    if chain is None:
        return list(model.joints)
    by_name = {j.name: j for j in (*model.joints, *chain.passive)}
    return [by_name[n] for n in chain.order]


def tree_parents(model) -> list[int]:
    """0-based tree index of the parent of every tree joint (-1 for the base): ``k - 1`` for a serial robot."""
    chain = getattr(model, "chain", None)
    if chain is None:
        return list(range(-1, model.dof - 1))
    index = {n: k for k, n in enumerate(chain.order)}
    return [index[p] if p else -1 for p in chain.parents]


def active_tree_indices(model) -> list[int]:
    """Tree indices of the active joints, in the order of ``model.joints``."""
    chain = getattr(model, "chain", None)
    if chain is None:
        return list(range(model.dof))
    index = {n: k for k, n in enumerate(chain.order)}
    return [index[j.name] for j in model.joints]


def passive_tree_indices(model) -> list[int]:
    """Tree indices of the passive joints, in the order of ``model.chain.passive`` (none for a serial robot)."""
    chain = getattr(model, "chain", None)
    if chain is None:
        return []
    index = {n: k for k, n in enumerate(chain.order)}
    return [index[j.name] for j in chain.passive]


def ancestors(parents: list[int], k: int) -> list[int]:
    """Tree indices from the root down to ``k`` inclusive (``k = -1``: none)."""
    path = []
    while k >= 0:
        path.append(k)
        k = parents[k]
    return path[::-1]


def loop_paths(parents: list[int], body_a: int, body_b: int) -> tuple[int, list[int], list[int]]:
    """The loop's root (deepest common ancestor body, -1 for the base) and the joints from it down to each
    closing body (excluding the root's own joint)."""
    pa, pb = ancestors(parents, body_a), ancestors(parents, body_b)
    common = -1
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        common = x
    cut_a = pa.index(common) + 1 if common >= 0 else 0
    cut_b = pb.index(common) + 1 if common >= 0 else 0
    return common, pa[cut_a:], pb[cut_b:]
