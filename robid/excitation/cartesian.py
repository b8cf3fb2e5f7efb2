"""Cartesian limits for chosen points on the robot: keep them inside a box and above planes.

Each limit is a set of half-spaces ``n . p(q) >= d`` (unit normals ``n``, base frame) for a point fixed in one
body frame. A box [lo, hi] contributes the six faces, a floor plane one half-space.

Forward kinematics is evaluated for all samples at once with the same transform as
:meth:`robid.model.RobotModel.forward_kinematics` (``T_{i-1,i} = A_i M_i(q_i) B_i``), and the point Jacobian
follows from the joint axes: dp/dq_j = z_j x (p - o_j) (revolute) or z_j (prismatic).

Continuous-time guarantee: the point moves at most |p(t) - p(t_k)| <= |t - t_k| * sum_j R_j max|qd_j|, where
R_j bounds the distance from joint j's axis to the point (sum of the constant translations along the chain,
the prismatic travels and the point offset) and max|qd_j| is the trajectory's velocity bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.model.robot_model import RobotModel


@dataclass(frozen=True, eq=False)
class CartesianLimit:
    """Keep ``point`` (metres, in the frame of body ``body``, 0-based joint index) in all half-spaces."""

    name: str
    body: int
    point: np.ndarray  # (3,)
    normals: np.ndarray  # (K, 3) unit normals, base frame
    offsets: np.ndarray  # (K,)  n . p >= offset
    description: dict  # the limit as written (box / plane), for trajectory files and comments

    @staticmethod
    def from_box_and_planes(
        name: str,
        body: int,
        point,
        box_min=None,
        box_max=None,
        planes: list[tuple[np.ndarray, float]] | None = None,
    ) -> CartesianLimit:
        normals, offsets = [], []
        eye = np.eye(3)
        if box_min is not None:
            for i in range(3):
                if np.isfinite(box_min[i]):
                    normals.append(eye[i])
                    offsets.append(float(box_min[i]))
        if box_max is not None:
            for i in range(3):
                if np.isfinite(box_max[i]):
                    normals.append(-eye[i])
                    offsets.append(-float(box_max[i]))
        for n, d in planes or []:
            n = np.asarray(n, dtype=float)
            norm = float(np.linalg.norm(n))
            normals.append(n / norm)
            offsets.append(float(d) / norm)
        desc: dict = {"name": name, "body": int(body), "point": [float(v) for v in point]}
        if box_min is not None or box_max is not None:
            lo = box_min if box_min is not None else [-np.inf] * 3
            hi = box_max if box_max is not None else [np.inf] * 3
            desc["box"] = {"min": [_finite_or_none(v) for v in lo], "max": [_finite_or_none(v) for v in hi]}
        if planes:
            desc["planes"] = [{"normal": [float(v) for v in n], "offset": float(d)} for n, d in planes]
        return CartesianLimit(
            name=name,
            body=int(body),
            point=np.asarray(point, dtype=float).reshape(3),
            normals=np.asarray(normals, dtype=float).reshape(-1, 3),
            offsets=np.asarray(offsets, dtype=float),
            description=desc,
        )


def _finite_or_none(v) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


def _rotation_batch(u: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues R = I + sin(a) K + (1 - cos(a)) K^2 for unit u and N angles: (N, 3, 3)."""
    x, y, z = u
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    k2 = k @ k
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3)[None] + s * k[None] + (1.0 - c) * k2[None]


def chain_frames(model: RobotModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For N configurations: body poses T (N, dof, 4, 4), joint axes z (N, dof, 3) and axis points o (N, dof, 3),
    both in the base frame (the frame after A_j, where joint j's motion acts)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    n, dof = q.shape
    poses = np.empty((n, dof, 4, 4))
    axes = np.empty((n, dof, 3))
    origins = np.empty((n, dof, 3))
    t = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    for j, joint in enumerate(model.joints):
        g = joint.geometry
        a = np.eye(4)
        a[:3, :3] = np.array(g.a_rotation)
        a[:3, 3] = g.a_translation
        b = np.eye(4)
        b[:3, :3] = np.array(g.b_rotation)
        b[:3, 3] = g.b_translation
        u = np.asarray(g.axis, dtype=float)
        ta = t @ a
        axes[:, j] = ta[:, :3, :3] @ u
        origins[:, j] = ta[:, :3, 3]
        m = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
        if joint.revolute:
            m[:, :3, :3] = _rotation_batch(u, q[:, j] + g.angle_offset)
        else:
            m[:, :3, 3] = u[None, :] * (q[:, j] + g.displacement_offset)[:, None]
        t = ta @ m @ b
        poses[:, j] = t
    return poses, axes, origins


def point_positions_and_jacobians(
    model: RobotModel, q: np.ndarray, limit: CartesianLimit, frames=None
) -> tuple[np.ndarray, np.ndarray]:
    """Point positions (N, 3) and Jacobians dp/dq (N, 3, dof) in the base frame; ``frames``: chain_frames(model, q)
    when already computed (shared by every limit of one evaluation)."""
    poses, axes, origins = chain_frames(model, q) if frames is None else frames
    tb = poses[:, limit.body]
    p = tb[:, :3, :3] @ limit.point + tb[:, :3, 3]
    jac = np.zeros((p.shape[0], 3, model.dof))
    for j, joint in enumerate(model.joints[: limit.body + 1]):
        if joint.revolute:
            jac[:, :, j] = cross_rows(axes[:, j], p - origins[:, j])
        else:
            jac[:, :, j] = axes[:, j]
    return p, jac


def point_positions(model: RobotModel, q: np.ndarray, limit: CartesianLimit, frames=None) -> np.ndarray:
    """Point positions (N, 3) in the base frame (what a feasibility test needs, without the Jacobian)."""
    poses = (chain_frames(model, q) if frames is None else frames)[0][:, limit.body]
    return poses[:, :3, :3] @ limit.point + poses[:, :3, 3]


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b row by row for (N, 3) arrays (np.cross without its axis handling, a third of its time here)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def lever_arms(model: RobotModel, limit: CartesianLimit, prismatic_travel: np.ndarray) -> np.ndarray:
    """R_j (dof,): bound on |dp/dq_j| for every configuration (distance to the axis, or 1 for prismatic).

    ``prismatic_travel[i]`` bounds |q_i + displacement offset| for prismatic joints (ignored for revolute).
    """
    dof = model.dof
    r = np.zeros(dof)
    for j in range(min(limit.body + 1, dof)):
        joint = model.joints[j]
        if not joint.revolute:
            r[j] = 1.0
            continue
        dist = float(np.linalg.norm(joint.geometry.b_translation))
        for i in range(j + 1, limit.body + 1):
            gi = model.joints[i].geometry
            dist += float(np.linalg.norm(gi.a_translation)) + float(np.linalg.norm(gi.b_translation))
            if not model.joints[i].revolute:
                dist += float(prismatic_travel[i])
        r[j] = dist + float(np.linalg.norm(limit.point))
    return r
