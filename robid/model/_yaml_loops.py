"""The ``loops:`` block of a robot file and the ``parent`` of its joints: the tree of a closed-chain robot, its
passive joints and closing pairs of frames (docs/robot-file.md, "Closed chains"). Every error names the file and
the field."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.io.keys import check_keys
from robid.model.loops import LOOP_KINDS, ClosedChain, Loop, LoopEnd, loop_paths
from robid.model.robot_model import Friction, RobotModel
from robid.schemas import robot as schema

LOOP_KEYS = schema.LOOP.keys()
END_KEYS = schema.LOOP_END.keys()
#: fields a passive joint refuses: it has no motor, and its bearing friction is lumped into the active joints'
PASSIVE_REFUSED = ("drive", "friction", "elasticity", "controller", "compensator")


def parse_parents(joints_data: list, where: str) -> list[str]:
    """The parent joint of every entry ('' for the base): ``parent`` names an earlier joint or ``base``; the
    default is the previous joint."""
    parents, seen = [], []
    for k, jd in enumerate(joints_data):
        parent = jd.get("parent") if isinstance(jd, dict) else None
        default = seen[-1] if seen else ""
        if parent is None:
            parents.append(default)
        elif parent == "base":
            parents.append("")
        elif isinstance(parent, str) and parent in seen:
            parents.append(parent)
        else:
            raise RobidInputError(
                f"{where}: joints[{k}].parent: {parent!r} is not an earlier joint nor 'base' (earlier joints: "
                f"{', '.join(seen) or 'none'})"
            )
        seen.append(jd.get("name") if isinstance(jd, dict) else None)
    return parents


def closed_chain_model(model: RobotModel, parents: list[str], loops_data: Any, joints_data: list,
                       where: str) -> RobotModel:
    """``model`` (every joint in file order, serial so far) as a closed chain: active joints in ``joints``, the
    passive ones in ``chain`` with the tree and the loops; checked (module docstring of robid.model.loops)."""
    if loops_data is None:
        for k, (parent, previous) in enumerate(zip(parents, ["", *model.joint_names[:-1]], strict=True)):
            if parent != previous:
                raise RobidInputError(
                    f"{where}: joints[{k}].parent: only in a robot with loops (a branch must close a loop)"
                )
        return model
    if not isinstance(loops_data, list) or not loops_data:
        raise RobidInputError(f"{where}: loops: expected a non-empty list of loops")
    names = model.joint_names
    loops = [_loop(ld, f"{where}: loops[{k}]", names) for k, ld in enumerate(loops_data)]
    passive_names = _passive_names(loops, where)
    for k, jd in enumerate(joints_data):
        if jd["name"] in passive_names:
            _check_passive_entry(jd, f"{where}: joints[{k}]")
    passive = tuple(replace(j, friction=Friction()) for j in model.joints if j.name in passive_names)
    active = tuple(j for j in model.joints if j.name not in passive_names)
    if not active:
        raise RobidInputError(f"{where}: loops: every joint is passive; at least one must be driven")
    for k, jd in enumerate(joints_data):
        for key in ("elasticity",):
            if jd.get(key) is not None:
                raise RobidInputError(f"{where}: joints[{k}].{key}: not in a robot with loops (rigid joints only)")
        if isinstance(jd.get("drive"), dict) and jd["drive"].get("coupling") is not None:
            raise RobidInputError(f"{where}: joints[{k}].drive.coupling: not in a robot with loops")
    chain = ClosedChain(passive, tuple(names), tuple(parents), tuple(loops))
    closed = replace(model, joints=active, chain=chain)
    _check_paths(closed, loops, parents, where)
    return _with_relation(closed, where)


def _loop(ld: Any, where: str, names: list[str]) -> Loop:
    if not isinstance(ld, dict):
        raise RobidInputError(f"{where}: expected a mapping with name, kind, passive, close")
    check_keys(ld, LOOP_KEYS, where)
    for key in ("kind", "passive", "close"):
        if key not in ld:
            raise RobidInputError(f"{where}.{key}: required for a loop")
    kind = ld["kind"]
    if kind not in LOOP_KINDS:
        raise RobidInputError(f"{where}.kind: unknown loop kind {kind!r} (expected {' or '.join(LOOP_KINDS)})")
    passive = ld["passive"]
    if not isinstance(passive, list) or len(passive) != 2:
        raise RobidInputError(
            f"{where}.passive: expected the two passive joints the loop determines (a planar loop closes two "
            f"coordinates), got {passive!r}"
        )
    for k, p in enumerate(passive):
        if p not in names:
            raise RobidInputError(f"{where}.passive[{k}]: no joint named {p!r} (joints: {', '.join(names)})")
    close = ld["close"]
    if not isinstance(close, list) or len(close) != 2:
        raise RobidInputError(f"{where}.close: expected the closing pair [{{body, xyz}}, {{body, xyz}}]")
    ends = tuple(_end(e, f"{where}.close[{k}]", names) for k, e in enumerate(close))
    if ends[0].body == ends[1].body:
        raise RobidInputError(f"{where}.close: the two frames are on the same body {ends[0].body!r}")
    name = ld.get("name", where.rsplit(": ", 1)[-1])
    return Loop(str(name), kind, tuple(passive), ends)


def _end(ed: Any, where: str, names: list[str]) -> LoopEnd:
    from robid.model._yaml_sections import parse_vector

    if not isinstance(ed, dict):
        raise RobidInputError(f"{where}: expected a mapping with body, xyz")
    check_keys(ed, END_KEYS, where)
    body = ed.get("body")
    if body not in names:
        raise RobidInputError(f"{where}.body: no joint named {body!r} (joints: {', '.join(names)})")
    xyz = parse_vector(ed.get("xyz", [0.0, 0.0, 0.0]), f"{where}.xyz", "length")
    return LoopEnd(body, tuple(xyz))


def _passive_names(loops: list[Loop], where: str) -> set[str]:
    seen: dict[str, str] = {}
    for k, loop in enumerate(loops):
        for p in loop.passive:
            if p in seen:
                raise RobidInputError(
                    f"{where}: loops[{k}].passive: joint {p!r} is already a passive joint of loop {seen[p]!r}"
                )
            seen[p] = loop.name
    return set(seen)


def _check_passive_entry(jd: dict, where: str) -> None:
    for key in PASSIVE_REFUSED:
        if jd.get(key) is not None:
            raise RobidInputError(
                f"{where}.{key}: not on a passive joint (a loop moves it; no motor drives it and its bearing "
                "friction is lumped into the active joints')"
            )


def _check_paths(model: RobotModel, loops: list[Loop], parents: list[str], where: str) -> None:
    """Every passive joint lies on its loop's paths, and the loop's joints move in one plane."""
    order = list(model.chain.order)
    parent_index = [order.index(p) if p else -1 for p in parents]
    by_name = {j.name: j for j in (*model.joints, *model.chain.passive)}
    for k, loop in enumerate(loops):
        _, pa, pb = loop_paths(parent_index, order.index(loop.close[0].body), order.index(loop.close[1].body))
        on_loop = {order[j] for j in (*pa, *pb)}
        for m, p in enumerate(loop.passive):
            if p not in on_loop:
                raise RobidInputError(
                    f"{where}: loops[{k}].passive[{m}]: joint {p!r} is not on the loop (its joints: "
                    f"{', '.join(sorted(on_loop))})"
                )
        revolute = [by_name[n] for n in on_loop if by_name[n].revolute]
        if loop.kind == "parallelogram" and len(revolute) != len(on_loop):
            raise RobidInputError(f"{where}: loops[{k}].kind: a parallelogram has revolute joints only")


def _with_relation(model: RobotModel, where: str) -> RobotModel:
    """Check the closure at the zero pose, planarity and rank; store G for a chain of parallelograms."""
    from robid.model.closure import LoopClosure, linear_relation

    closure = LoopClosure(model)
    zero = np.zeros((1, len(closure.tree)))
    for k, geo in enumerate(closure.loops):
        gap = float(np.abs(closure.residual(zero)[0, 2 * k : 2 * k + 2]).max()) / geo.size
        if gap > 1e-6:
            raise RobidInputError(
                f"{where}: loops[{k}]: the loop does not close at the zero pose (gap {gap * geo.size:.6g} m between "
                "the closing frames); set the passive joints' offsets so that it does"
            )
        _check_planar(closure, geo, where, k)
    jac = closure.jacobian(zero)[0][0][:, closure.passive]
    if abs(np.linalg.det(jac)) < 1e-9 * max(1.0, float(np.abs(jac).max()) ** len(closure.passive)):
        raise RobidInputError(
            f"{where}: loops: the passive joints do not determine the loops at the zero pose (dead point)"
        )
    relation, worst = linear_relation(closure)
    kinds = [loop.kind for loop in model.chain.loops]
    if relation is None and "parallelogram" in kinds and "planar" not in kinds:
        raise RobidInputError(
            f"{where}: loops: kind parallelogram, but the passive angles are not linear in the active ones "
            f"(closure residual {worst:.3g} of the loop size at random poses); use kind: planar for a general loop"
        )
    if relation is None or "planar" in kinds:
        return model
    chain = replace(model.chain, relation=tuple(tuple(float(v) for v in row) for row in relation))
    return replace(model, chain=chain)


def _check_planar(closure, geo, where: str, k: int) -> None:
    probe = np.random.default_rng(k).uniform(-1.0, 1.0, (1, len(closure.tree)))
    normal = np.cross(geo.plane[:, 0], geo.plane[:, 1])
    for q in (np.zeros((1, len(closure.tree))), probe):
        for j, z, _ in closure.path_axes(geo, q):
            joint = closure.tree[j]
            off = np.linalg.norm(np.cross(z[0], normal)) if joint.revolute else abs(float(z[0] @ normal))
            if off > 1e-9:
                raise RobidInputError(
                    f"{where}: loops[{k}]: joint {joint.name!r} does not move in the loop's plane (a loop is planar:"
                    " revolute axes parallel, prismatic axes in the plane)"
                )
