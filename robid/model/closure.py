"""Loop closure of a closed-chain robot, numerically: positions, velocities and accelerations of the passive joints
from the active ones, and the loop-closure Jacobian (docs/model.md, "Closed chains").

Each loop (robid.model.loops) is cut into two paths hanging from its root body; the closing pair of points
``p_a`` (on the last body of path a) and ``p_b`` must coincide. In the root's frame the loop is planar (revolute
axes parallel to the normal n, prismatic axes in the plane), so the closure is two equations per loop::

    phi(q) = E^T (p_b(q) - p_a(q)) = 0,        E = [e1 e2] an orthonormal basis of the loop's plane

(Khalil & Dombre 2002, section 7.3, the loop-closure equations of a planar loop). Differentiating,
``J_a qd_a + J_p qd_p = 0`` and ``J_a qdd_a + J_p qdd_p + Jd qd = 0``, so with G = -J_p^-1 J_a::

    qd_p = G qd_a,    qdd_p = G qdd_a - J_p^-1 (Jd qd),    W = d q_tree / d q_a = [I; G]  (rows in tree order)

The columns of the point Jacobian are ``z_j x (p - o_j)`` (revolute joint j with unit axis z_j through o_j) or
``z_j`` (prismatic), and its derivative along the motion, per joint,
``qd_j [(w_j x z_j) x (p - o_j) + z_j x (v_p - v_oj)]`` (revolute) or ``qd_j (w_j x z_j)`` (prismatic), w_j being
the angular velocity of the body that carries joint j's axis and v the velocities of the points, all relative to
the root body (the root's own motion moves the closed loop rigidly and drops out of phi).

Positions: the robot file's loops close at the zero pose (every joint at q = 0), which fixes the assembly branch;
:meth:`LoopClosure.solve` follows the straight path from the zero pose to the requested active positions in steps
of at most 0.1 rad (m), a tangent predictor (q_p += G dq_a) and Newton iterations on the passive joints at each
step, and checks that the branch is kept (the sign of det J_p). A pose where the loop cannot close (the closing
points out of reach, or a dead point where det J_p = 0) is reported by sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.model.loops import active_tree_indices, loop_paths, passive_tree_indices, tree_joints, tree_parents

#: closure residual (relative to the loop's size) a solution must reach, and the one it is iterated towards
CLOSURE_TOLERANCE = 1e-9
_NEWTON_TOLERANCE = 1e-13
#: largest condition number of J_p at the random states of the base-parameter derivation
SAMPLE_CONDITION = 100.0
_STEP = 0.1  # rad (m): largest change of an active position between two continuation steps


@dataclass(frozen=True, eq=False)
class ChainStates:
    """Positions, velocities and accelerations of every tree joint (N, n_tree), and W = d q_tree / d q_a
    (N, n_tree, n_active): the closed chain's torques are tau_a = W^T tau_tree (Khalil & Dombre 2002, eq. 10.7)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    w: np.ndarray


@dataclass(frozen=True)
class _LoopGeometry:
    name: str
    root: int
    path_a: tuple[int, ...]
    path_b: tuple[int, ...]
    xyz_a: np.ndarray
    xyz_b: np.ndarray
    plane: np.ndarray  # (3, 2): e1, e2 in the root frame
    size: float  # m: length scale of the residual


class LoopClosure:
    """The closure of every loop of ``model`` (a RobotModel with ``chain``); see the module docstring."""

    def __init__(self, model):
        if model.chain is None:
            raise ValueError(f"robot {model.name!r} has no loops")
        self.model = model
        self.tree = tree_joints(model)
        self.parents = tree_parents(model)
        self.active = active_tree_indices(model)
        self.passive = passive_tree_indices(model)
        index = {j.name: k for k, j in enumerate(self.tree)}
        self.loops = [self._geometry(loop, index) for loop in model.chain.loops]
        self._branch = np.sign(np.linalg.det(self.jacobian(np.zeros((1, len(self.tree))))[0][:, :, self.passive]))
        relation = model.chain.relation
        self.relation = None if relation is None else np.array(relation, dtype=float)
        self._last: dict[tuple[int, int], np.ndarray] = {}  # the last solution by shape: the next solve's start

    # ---- geometry ------------------------------------------------------------------------------------------
    def _geometry(self, loop, index) -> _LoopGeometry:
        body_a, body_b = (index[end.body] for end in loop.close)
        root, path_a, path_b = loop_paths(self.parents, body_a, body_b)
        xyz_a, xyz_b = (np.array(end.xyz, dtype=float) for end in loop.close)
        probe = _LoopGeometry(loop.name, root, tuple(path_a), tuple(path_b), xyz_a, xyz_b, np.eye(3)[:, :2], 1.0)
        zero = np.zeros((1, len(self.tree)))
        axes = [z[0] for j, z, _ in self.path_axes(probe, zero) if self.tree[j].revolute]
        normal = axes[0] if axes else np.array([0.0, 0.0, 1.0])
        e1 = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
        e1 /= np.linalg.norm(e1)
        plane = np.column_stack([e1, np.cross(normal, e1)])
        lengths = [np.linalg.norm(o[0]) for _, _, o in self.path_axes(probe, zero)]
        size = max([1e-3, float(np.linalg.norm(xyz_a)), float(np.linalg.norm(xyz_b)), *lengths])
        return _LoopGeometry(loop.name, root, tuple(path_a), tuple(path_b), xyz_a, xyz_b, plane, size)

    def path_axes(self, geo: _LoopGeometry, q: np.ndarray, which: str = "both"):
        """(joint, axis z_j (N, 3), point o_j on it (N, 3)) of every joint of the loop's paths, root frame."""
        out = []
        for path in (geo.path_a, geo.path_b) if which == "both" else ((geo.path_a,) if which == "a" else (geo.path_b,)):
            t = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4))
            for j in path:
                g = self.tree[j].geometry
                after_a = t @ _constant(g.a_rotation, g.a_translation)
                out.append((j, after_a[:, :3, :3] @ np.asarray(g.axis, dtype=float), after_a[:, :3, 3]))
                t = after_a @ _motion(g, q[:, j], self.tree[j].revolute) @ _constant(g.b_rotation, g.b_translation)
        return out

    def _point(self, path, xyz, q: np.ndarray) -> np.ndarray:
        """The closing point at the end of ``path`` (N, 3), root frame."""
        t = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4))
        for j in path:
            g = self.tree[j].geometry
            t = t @ _constant(g.a_rotation, g.a_translation) @ _motion(g, q[:, j], self.tree[j].revolute)
            t = t @ _constant(g.b_rotation, g.b_translation)
        return t[:, :3, :3] @ xyz + t[:, :3, 3]

    # ---- closure equations -------------------------------------------------------------------------------------
    def residual(self, q: np.ndarray) -> np.ndarray:
        """phi(q) (N, 2 n_loops), m, for tree positions q (N, n_tree)."""
        parts = []
        for geo in self.loops:
            gap = self._point(geo.path_b, geo.xyz_b, q) - self._point(geo.path_a, geo.xyz_a, q)
            parts.append(gap @ geo.plane)
        return np.concatenate(parts, axis=1)

    def jacobian(self, q: np.ndarray, qd: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """d phi / d q (N, 2 n_loops, n_tree) and, with ``qd``, the velocity product Jd qd (N, 2 n_loops)."""
        n = q.shape[0]
        jac = np.zeros((n, 2 * len(self.loops), len(self.tree)))
        bias = None if qd is None else np.zeros((n, 2 * len(self.loops)))
        for k, geo in enumerate(self.loops):
            for sign, which, path, xyz in ((1.0, "b", geo.path_b, geo.xyz_b), (-1.0, "a", geo.path_a, geo.xyz_a)):
                p = self._point(path, xyz, q)
                axes = self.path_axes(geo, q, which)
                cols = [self._column(j, z, o, p) for j, z, o in axes]
                for (j, _, _), col in zip(axes, cols, strict=True):
                    jac[:, 2 * k : 2 * k + 2, j] += sign * (col @ geo.plane)
                if qd is not None:
                    bias[:, 2 * k : 2 * k + 2] += sign * (self._point_bias(axes, p, qd) @ geo.plane)
        return jac, bias

    def _column(self, j: int, z: np.ndarray, o: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.cross(z, p - o) if self.tree[j].revolute else z

    def _point_bias(self, axes, p: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """d(J)/dt qd of the point p along the path ``axes`` (module docstring), (N, 3)."""
        v_p = sum(self._column(j, z, o, p) * qd[:, j, None] for j, z, o in axes)
        out = np.zeros_like(p)
        w = np.zeros_like(p)  # angular velocity of the body carrying the next axis, relative to the root
        for k, (j, z, o) in enumerate(axes):
            wz = np.cross(w, z)
            if self.tree[j].revolute:
                v_o = sum((self._column(i, zi, oi, o) * qd[:, i, None] for i, zi, oi in axes[:k]), np.zeros_like(p))
                out += qd[:, j, None] * (np.cross(wz, p - o) + np.cross(z, v_p - v_o))
                w = w + z * qd[:, j, None]
            else:
                out += qd[:, j, None] * wz
        return out

    # ---- solving -------------------------------------------------------------------------------------------
    def solve(self, q_active: np.ndarray, strict: bool = True, start: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Tree positions (N, n_tree) for active positions (N, n_active), and a mask of the samples that closed.

        ``strict`` raises a RobidInputError naming the first sample that cannot close. ``start`` (N, n_tree): closed
        tree positions near the requested ones; by default the last solution of as many samples (the optimiser and
        the integrator ask for nearby states again and again). Samples within 0.1 rad (m) of their start are
        followed in one predictor-corrector step, the others (and those it does not close) from the zero pose; a
        start never decides the result, the closure and branch checks do."""
        q_active = np.atleast_2d(np.asarray(q_active, dtype=float))
        n = q_active.shape[0]
        q = np.zeros((n, len(self.tree)))
        if self.relation is not None:
            q[:, self.active] = q_active
            q[:, self.passive] = q_active @ self.relation.T
            return q, np.ones(n, dtype=bool)
        ok = np.zeros(n, dtype=bool)
        start = self._last.get(q.shape) if start is None else start
        if start is not None and start.shape == q.shape:
            near = np.isfinite(start).all(axis=1) & (np.abs(q_active - start[:, self.active]).max(axis=1) < _STEP)
            if near.any():
                q[near] = start[near]
                self._predict(q, q_active)
                ok = near & self._newton(q) & self._closed(q)
        rest = ~ok
        if rest.any():
            q[rest] = self._followed(q_active[rest])
            ok[rest] = self._closed(q[rest])
        self._last[q.shape] = np.where(ok[:, None], q, np.nan)
        if strict and not ok.all():
            self._cannot_close(q_active, ok)
        return q, ok

    def _followed(self, q_active: np.ndarray) -> np.ndarray:
        """Tree positions followed from the zero pose in steps of at most _STEP (module docstring)."""
        q = np.zeros((q_active.shape[0], len(self.tree)))
        steps = max(1, math.ceil(float(np.abs(q_active).max(initial=0.0)) / _STEP))
        ok = np.ones(q_active.shape[0], dtype=bool)
        for s in np.linspace(0.0, 1.0, steps + 1)[1:]:
            self._predict(q, s * q_active)
            ok &= self._newton(q)
        q[~ok] = np.nan  # lost on the way (branch or rank): not closed, whatever Newton reaches later
        return q

    def _predict(self, q: np.ndarray, target: np.ndarray) -> None:
        """Move the active positions of q to ``target`` and the passive ones along the tangent G (in place): the
        corrector then stays on the branch it follows, also past a bifurcation (a parallelogram's dead point, where
        its antiparallelogram branch crosses with the same sign of det J_p)."""
        jac = self.jacobian(q)[0]
        jp = jac[:, :, self.passive]
        singular = np.abs(np.linalg.det(jp)) < 1e-12
        jp[singular] = np.eye(len(self.passive))
        step = target - q[:, self.active]
        predicted = -np.linalg.solve(jp, (jac[:, :, self.active] @ step[:, :, None]))[..., 0]
        q[:, self.passive] += np.clip(np.where(singular[:, None], 0.0, predicted), -0.5, 0.5)
        q[:, self.active] = target

    def _newton(self, q: np.ndarray) -> np.ndarray:
        """Newton iterations on the passive positions of q (in place); False where the branch or rank is lost."""
        scale = np.repeat([geo.size for geo in self.loops], 2)
        ok = np.ones(q.shape[0], dtype=bool)
        for _ in range(30):
            r = self.residual(q)
            if np.abs(r / scale).max(initial=0.0) < _NEWTON_TOLERANCE:
                break
            jp = self.jacobian(q)[0][:, :, self.passive]
            det = np.linalg.det(jp)
            good = np.sign(det) == self._branch
            ok &= good
            jp[~good] = np.eye(len(self.passive))
            step = np.linalg.solve(jp, -r[:, :, None])[:, :, 0]
            q[:, self.passive] += np.where(good[:, None], np.clip(step, -0.5, 0.5), 0.0)
        return ok

    def _closed(self, q: np.ndarray) -> np.ndarray:
        scale = np.repeat([geo.size for geo in self.loops], 2)
        finite = np.isfinite(q).all(axis=1)
        q = np.where(finite[:, None], q, 0.0)
        jp = self.jacobian(q)[0][:, :, self.passive]
        same_branch = np.sign(np.linalg.det(jp)) == self._branch
        return (np.abs(self.residual(q) / scale).max(axis=1) < CLOSURE_TOLERANCE) & same_branch & finite

    def _cannot_close(self, q_active: np.ndarray, ok: np.ndarray) -> None:
        k = int(np.flatnonzero(~ok)[0])
        names = [self.tree[j].name for j in self.active]
        pose = ", ".join(f"{n}={v:.6g}" for n, v in zip(names, q_active[k], strict=True))
        raise RobidInputError(
            f"robot {self.model.name!r}: the loops cannot close at sample {k} ({pose}; {int((~ok).sum())} of "
            f"{len(ok)} samples): the closing points are out of reach or at a dead point of the linkage"
        )

    def within_passive_limits(self, q: np.ndarray) -> np.ndarray:
        """(N,) True where every passive joint of the tree positions q is within its position limits (if any)."""
        ok = np.ones(q.shape[0], dtype=bool)
        for j in self.passive:
            limits = self.tree[j].limits.position
            if limits is not None:
                ok &= (q[:, j] >= limits[0]) & (q[:, j] <= limits[1])
        return ok

    def states(self, q_active, qd_active, qdd_active, q_tree: np.ndarray | None = None) -> ChainStates:
        """Every tree joint's position, velocity and acceleration, and W (module docstring); ``q_tree``: the tree
        positions when already solved (:meth:`solve`)."""
        q_a, qd_a, qdd_a = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q_active, qd_active, qdd_active))
        n, na = q_a.shape[0], len(self.active)
        q = self.solve(q_a)[0] if q_tree is None else np.asarray(q_tree, dtype=float)
        w = np.zeros((n, len(self.tree), na))
        w[:, self.active, np.arange(na)] = 1.0
        if self.relation is not None:
            w[:, self.passive, :] = self.relation
            return ChainStates(q, (w @ qd_a[:, :, None])[..., 0], (w @ qdd_a[:, :, None])[..., 0], w)
        jac = self.jacobian(q)[0]
        jp = jac[:, :, self.passive]
        w[:, self.passive, :] = -np.linalg.solve(jp, jac[:, :, self.active])
        qd = (w @ qd_a[:, :, None])[..., 0]
        _, bias = self.jacobian(q, qd)
        qdd = (w @ qdd_a[:, :, None])[..., 0]
        qdd[:, self.passive] -= np.linalg.solve(jp, bias[:, :, None])[..., 0]
        return ChainStates(q, qd, qdd, w)


def _constant(rotation, translation) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = np.asarray(rotation, dtype=float)
    t[:3, 3] = np.asarray(translation, dtype=float)
    return t


def _motion(geometry, q: np.ndarray, revolute: bool) -> np.ndarray:
    """M(q) of one joint for N positions, (N, 4, 4) (Rodrigues for a revolute joint)."""
    u = np.asarray(geometry.axis, dtype=float)
    out = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4)).copy()
    if revolute:
        k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
        angle = q + geometry.angle_offset
        out[:, :3, :3] = np.eye(3) + np.sin(angle)[:, None, None] * k + (1.0 - np.cos(angle))[:, None, None] * (k @ k)
    else:
        out[:, :3, 3] = u * (q + geometry.displacement_offset)[:, None]
    return out


def linear_relation(closure: LoopClosure, seed: int = 20261201) -> tuple[np.ndarray | None, float]:
    """The integer G with q_p = G q_a when the loops close for it at random poses (parallelograms), else None;
    and the largest relative closure residual of that check."""
    q0 = np.zeros((1, len(closure.tree)))
    jac = closure.jacobian(q0)[0][0]
    g = -np.linalg.solve(jac[:, closure.passive], jac[:, closure.active])
    rounded = np.round(g)
    if np.abs(g - rounded).max(initial=0.0) > 1e-9:
        return None, float("inf")
    rng = np.random.default_rng(seed)
    q_a = rng.uniform(-np.pi, np.pi, (16, len(closure.active)))
    q = np.zeros((16, len(closure.tree)))
    q[:, closure.active] = q_a
    q[:, closure.passive] = q_a @ rounded.T
    scale = np.repeat([geo.size for geo in closure.loops], 2)
    worst = float(np.abs(closure.residual(q) / scale).max(initial=0.0))
    return (rounded if worst < CLOSURE_TOLERANCE else None), worst


def sample_states(closure: LoopClosure, rng: np.random.Generator, n: int, bounds: np.ndarray):
    """``n`` random closed states (q_a, qd_a, qdd_a), each (n, n_active), active positions drawn in ``bounds``
    (n_active, 2) and kept where the loops close with cond(J_p) < SAMPLE_CONDITION (the base-parameter derivation:
    near a dead point the projected rows grow as 1/det J_p and their rounding would pass the rank test)."""
    na = len(closure.active)
    kept = np.zeros((0, na))
    for _ in range(50):
        trial = rng.uniform(bounds[:, 0], bounds[:, 1], (4 * n, na))
        q, ok = closure.solve(trial, strict=False)
        jp = closure.jacobian(np.where(ok[:, None], q, 0.0))[0][:, :, closure.passive]
        ok &= np.linalg.cond(jp) < SAMPLE_CONDITION  # away from dead points, where W and the rows blow up
        ok &= closure.within_passive_limits(q)  # and on the assembly the robot uses (a parallelogram, not its
        # antiparallelogram, which a straight path through a dead point can reach)
        kept = np.vstack([kept, trial[ok]])
        if len(kept) >= n:
            break
    if len(kept) < n:
        raise RobidInputError(
            f"robot {closure.model.name!r}: the loops close at too few poses within the active joints' limits"
            f" ({len(kept)} of the {n} random poses needed)"
        )
    return kept[:n], rng.uniform(-2.0, 2.0, (n, na)), rng.uniform(-5.0, 5.0, (n, na))


def body_poses(model, q_tree: np.ndarray) -> list[np.ndarray]:
    """4x4 pose of every tree body in the base frame at tree positions ``q_tree`` (n_tree,), tree order."""
    tree, parents = tree_joints(model), tree_parents(model)
    poses: list[np.ndarray] = []
    for j, joint in enumerate(tree):
        g = joint.geometry
        start = poses[parents[j]] if parents[j] >= 0 else np.eye(4)
        m = _motion(g, np.array([q_tree[j]]), joint.revolute)[0]
        poses.append(start @ _constant(g.a_rotation, g.a_translation) @ m @ _constant(g.b_rotation, g.b_translation))
    return poses


def tree_poses(model, q_active: np.ndarray) -> list[np.ndarray]:
    """4x4 poses of the active joints' bodies for active positions (n_active,), the loops closed."""
    closure = LoopClosure(model)
    q_tree = closure.solve(np.asarray(q_active, dtype=float)[None, :])[0][0]
    poses = body_poses(model, q_tree)
    return [poses[j] for j in closure.active]


def project(w: np.ndarray, y_tree: np.ndarray) -> np.ndarray:
    """W^T Y per sample: (N, n_tree, n_active) and (N, n_tree, ...) -> (N, n_active, ...) (tau_a = W^T tau_tree)."""
    if y_tree.ndim == 2:
        return np.einsum("nta,nt->na", w, y_tree)
    return np.einsum("nta,ntp->nap", w, y_tree)
