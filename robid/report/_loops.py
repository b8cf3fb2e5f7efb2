"""The closed chain in the report's model section: a drawing of every loop in its plane at the excitation's centre
pose (or the zero pose), and a table of the loops and their passive joints (docs/report.md)."""

from __future__ import annotations

import numpy as np

from robid.report import _figures as F
from robid.report._compute import DEG
from robid.report.section import num

MINUS = "\u2212"


def loop_context(robot, center: np.ndarray | None) -> dict:
    """``loops`` (table rows) and ``loop_figure`` (HTML) of a closed chain; empty for a serial robot."""
    model = robot.model
    if model.chain is None:
        return {"loops": [], "loop_figure": ""}
    from robid.model.closure import LoopClosure, body_poses

    closure = LoopClosure(model)
    q_active = np.zeros(model.dof) if center is None else np.asarray(center, dtype=float)
    q_tree, ok = closure.solve(q_active[None, :], strict=False)
    pose = "the excitation's centre" if center is not None else "the zero pose"
    if not ok[0]:
        q_tree, pose = np.zeros((1, len(closure.tree))), "the zero pose (the centre does not close)"
    poses = body_poses(model, q_tree[0])
    rows = [_loop_row(model, loop, closure, q_tree[0]) for loop in model.chain.loops]
    return {"loops": rows, "loop_figure": _figure(closure, poses, q_tree[0], pose)}


def _loop_row(model, loop, closure, q_tree) -> dict:
    index = {j.name: k for k, j in enumerate(closure.tree)}
    passive = []
    for name in loop.passive:
        joint = closure.tree[index[name]]
        lim = joint.limits.position
        rng = "\u2013" if lim is None else f"{num(lim[0] * DEG)} \u2026 {num(lim[1] * DEG)} deg"
        passive.append(f"{name} (range {rng}; here {num(q_tree[index[name]] * DEG)} deg)")
    relation = ""
    chain = model.chain
    if chain.relation is not None:
        names = model.joint_names
        terms = []
        for name in loop.passive:
            row = chain.relation[chain.passive_names.index(name)]
            rhs = " ".join(f"{'+' if g > 0 else MINUS} {'' if abs(g) == 1 else num(abs(g))}q_{n}"
                           for g, n in zip(row, names, strict=True) if g != 0)
            terms.append(f"q_{name} = {rhs.lstrip('+ ')}")
        relation = "; ".join(terms)
    return {"name": loop.name, "kind": loop.kind, "passive": "; ".join(passive),
            "close": f"{loop.close[0].body} \u2194 {loop.close[1].body}",
            "relation": relation or "solved numerically at every sample"}


def _figure(closure, poses, q_tree, pose: str):
    """Every loop's bodies in its plane: links of active joints solid, of passive joints dashed, joints as
    circles, the closing pair as crosses."""
    fig = F.new_figure(3.6)
    count = len(closure.loops)
    axes = [fig.add_subplot(1, count, k + 1) for k in range(count)]
    for ax, geo in zip(axes, closure.loops, strict=True):
        root = poses[geo.root] if geo.root >= 0 else np.eye(4)
        plane = _upright(root[:3, :3] @ geo.plane, closure.model.gravity)

        def flat(p, root=root, plane=plane):
            return (np.asarray(p) - root[:3, 3]) @ plane

        for j in (*geo.path_a, *geo.path_b):
            _draw_body(ax, closure, poses, j, flat)
        for j, xyz in ((geo.path_a[-1], geo.xyz_a), (geo.path_b[-1], geo.xyz_b)):
            end = flat(poses[j][:3, :3] @ xyz + poses[j][:3, 3])
            origin = flat(poses[j][:3, 3])
            passive = j in closure.passive
            ax.plot([origin[0], end[0]], [origin[1], end[1]], "--" if passive else "-",
                    color="C1" if passive else "C0", lw=2)
            ax.plot(*end, "x", color="C3", ms=10, mew=2)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(geo.name, fontsize=9)
        ax.set_xlabel("in-plane x [m]")
    axes[0].set_ylabel("in-plane y [m]")
    F.margins(fig, cols=count)
    caption = (f"The loops at {pose}, in each loop's plane (origin: the loop's root body): active joints' links "
               "solid (blue), passive ones dashed (orange), joints as circles, the closing pair of frames as red "
               "crosses (they coincide: the loop is closed).")
    return F.figure_html(fig, "closed loops of the robot", caption)


def _upright(plane: np.ndarray, gravity) -> np.ndarray:
    """The plane's basis (3, 2) turned so that its second axis points up (against gravity) where gravity has a
    component in the plane, and its first along the base's x (else y): the drawing shows the robot standing as it
    does, seen from the side where it reaches to the right."""
    normal = np.cross(plane[:, 0], plane[:, 1])
    up = -np.asarray(gravity, dtype=float)
    up = up - (up @ normal) * normal
    if np.linalg.norm(up) < 1e-9 * max(1.0, float(np.linalg.norm(gravity))):
        return plane
    e2 = up / np.linalg.norm(up)
    e1 = np.cross(e2, normal)
    forward = np.array([1.0, 0.0, 0.0]) if abs(e1[0]) > 1e-9 else np.array([0.0, 1.0, 0.0])
    return np.column_stack([e1 if e1 @ forward >= 0 else -e1, e2])  # the base's x (or y) to the right


def _draw_body(ax, closure, poses, j: int, flat) -> None:
    """The link of tree joint j: from its parent's body frame to the joint's axis, on to its own body frame."""
    joint = closure.tree[j]
    parent = closure.parents[j]
    start = poses[parent] if parent >= 0 else np.eye(4)
    g = joint.geometry
    at_joint = start[:3, :3] @ np.asarray(g.a_translation, dtype=float) + start[:3, 3]
    points = np.array([flat(start[:3, 3]), flat(at_joint), flat(poses[j][:3, 3])])
    passive = j in closure.passive
    ax.plot(points[:, 0], points[:, 1], "--" if passive else "-", color="C1" if passive else "C0", lw=2)
    ax.plot(*points[1], "o", color="C1" if passive else "C0", ms=6, mfc="white")
    ax.annotate(joint.name, points[1], textcoords="offset points", xytext=(4, 4 + 9 * (j % 2)), fontsize=8)
