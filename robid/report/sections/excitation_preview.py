"""A preview of the excitation before it runs: a strip of poses of the robot over one period (a stick figure through
the joints' origins at equally spaced instants, from the forward kinematics of the robot the report describes),
and the extent of the volume the motion sweeps (the bounding boxes of the tool point and of every joint origin
over the period), with the workspace obstacles of the design's collision section drawn in (docs/report.md,
"Excitation")."""

from __future__ import annotations

import numpy as np

from robid.report import _figures as F
from robid.report.section import num

#: instants shown in the strip of poses (equally spaced over one period, the first at t = 0)
POSES = 8
#: samples per period for the swept extent
EXTENT_SAMPLES = 2048


def chain_points(model, q: np.ndarray, tool_point) -> np.ndarray:
    """(N, dof + 2, 3): the base origin, the origin of every body frame and the tool point (in the last body's
    frame) at the configurations q (N, dof), base frame."""
    from robid.excitation.cartesian import chain_frames

    poses = chain_frames(model, q)[0]
    n = len(q)
    tool = poses[:, -1, :3, :3] @ np.asarray(tool_point, dtype=float) + poses[:, -1, :3, 3]
    return np.concatenate([np.zeros((n, 1, 3)), poses[:, :, :3, 3], tool[:, None]], axis=1)


def _tool_point(tf) -> tuple[np.ndarray, str]:
    point = (tf.design or {}).get("tool_point")
    if point is not None:
        try:
            return np.asarray(point, dtype=float).reshape(3), "the design's tool point"
        except (TypeError, ValueError):
            pass
    return np.zeros(3), "the origin of the last body frame"


def preview(data, tf) -> tuple[list, list[tuple[str, str]]]:
    """([the strip-of-poses figure], [(row label, swept extent)]); nothing when the robot's model does not
    match the trajectory (a reduced model) or has no kinematics to draw."""
    model = getattr(data.robot, "model", None)
    traj = tf.trajectory
    if model is None or model.dof != traj.dof:
        return [], []
    tool, tool_label = _tool_point(tf)
    t = np.linspace(0.0, traj.period, EXTENT_SAMPLES, endpoint=False)
    points = chain_points(model, traj.derivative(t, 0), tool)
    rows = _extent_rows(points, tool_label)
    instants = np.arange(POSES) * traj.period / POSES
    strip = chain_points(model, traj.derivative(instants, 0), tool)
    return [_strip_figure(strip, instants, points, tf)], rows


def _extent_rows(points: np.ndarray, tool_label: str) -> list[tuple[str, str]]:
    def box(p):
        lo, hi = p.min(axis=0), p.max(axis=0)
        return ", ".join(f"{axis} {num(a, 3)} \u2026 {num(b, 3)}" for axis, a, b in zip("xyz", lo, hi, strict=True))

    tool = points[:, -1]
    joints = points[:, 1:-1].reshape(-1, 3)
    reach = float(np.max(np.linalg.norm(tool, axis=1)))
    return [
        ("swept extent of the tool point", f"{box(tool)} m ({tool_label}; base frame)"),
        ("swept extent of the joint origins", f"{box(joints)} m"),
        ("tool point: lowest height, farthest reach", f"z {num(float(tool[:, 2].min()), 3)} m, "
                                                        f"{num(reach, 3)} m from the base origin"),
    ]


def _strip_figure(strip: np.ndarray, instants: np.ndarray, swept: np.ndarray, tf):
    lo, hi = swept.reshape(-1, 3).min(axis=0), swept.reshape(-1, 3).max(axis=0)
    centre, half = (lo + hi) / 2.0, max(float(np.max(hi - lo)) / 2.0, 0.05) * 1.05
    cols = POSES // 2
    with F.style():
        fig = F.new_figure(4.6)
        F.margins(fig, left=0.05, right=0.05, top=0.35, bottom=0.05, hspace_in=0.25, wspace_in=0.05, rows=2,
                  cols=cols)
        for k, (pose, t) in enumerate(zip(strip, instants, strict=True)):
            ax = fig.add_subplot(2, cols, k + 1, projection="3d")
            ax.plot(*swept[:, -1].T, lw=0.6, color="0.75")  # the tool point's path over the period
            ax.plot(*pose.T, "-o", lw=2.0, ms=2.5, color="C0")
            ax.plot(*pose[-1], "o", ms=4, color="C3")
            _obstacles(ax, tf, centre, half)
            ax.set_xlim(centre[0] - half, centre[0] + half)
            ax.set_ylim(centre[1] - half, centre[1] + half)
            ax.set_zlim(centre[2] - half, centre[2] + half)
            ax.set_box_aspect((1, 1, 1))
            ax.set_title(f"t = {t:.3g} s", fontsize=8, pad=0)
            ax.tick_params(labelsize=6, pad=0)
            ax.view_init(elev=20, azim=-60)
        fig.suptitle("Poses over one period: the robot's joints (blue), the tool point (red) and its path (grey)",
                     fontsize=9)
        return F.figure_html(
            fig, "strip of poses over one period",
            f"Stick figure through the joints' body-frame origins at {POSES} equally spaced instants of the period, "
            "from the forward kinematics; equal scales on the three axes. Planes and boxes of the design's "
            "collision section are drawn in grey.")


def _obstacles(ax, tf, centre, half) -> None:
    """The design's collision planes (z-normal ones, as a grey square) and boxes (grey edges)."""
    for item in ((tf.design or {}).get("collision") or {}).get("obstacles") or []:
        if not isinstance(item, dict):
            continue
        plane, box = item.get("plane"), item.get("box")
        if isinstance(plane, dict):
            try:
                n = np.asarray(plane["normal"], dtype=float)
                offset = float(plane["offset"]) / float(np.linalg.norm(n))
            except (KeyError, TypeError, ValueError):
                continue
            n = n / np.linalg.norm(n)
            if abs(abs(n[2]) - 1.0) < 1e-9:
                z = offset * n[2]
                x = np.array([centre[0] - half, centre[0] + half])
                y = np.array([centre[1] - half, centre[1] + half])
                xx, yy = np.meshgrid(x, y)
                ax.plot_surface(xx, yy, np.full_like(xx, z), color="0.6", alpha=0.3, linewidth=0)
        elif isinstance(box, dict):
            try:
                lo, hi = np.asarray(box["min"], dtype=float), np.asarray(box["max"], dtype=float)
            except (KeyError, TypeError, ValueError):
                continue
            for a in range(3):
                for corner in range(4):
                    start = lo.copy()
                    others = [i for i in range(3) if i != a]
                    for bit, i in enumerate(others):
                        start[i] = hi[i] if corner >> bit & 1 else lo[i]
                    end = start.copy()
                    end[a] = hi[a]
                    ax.plot(*np.stack([start, end]).T, color="0.5", lw=0.8)
