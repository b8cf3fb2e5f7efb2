"""The virtual robot's constrained dynamics of a closed chain, in the active joints' coordinates (docs/simulation.md,
"Closed chains").

Independent of robid's regressor and of robid.model.closure: the tree's dynamics are the simulator's own
(robid.simulation.tree_dynamics), and the loops enter by **Lagrange multipliers** (Featherstone 2008, section 8.1;
Khalil & Dombre 2002, section 10.3), not by the projection the identification model uses::

    [ M    J^T ] [ qdd    ]   [ S_a tau_a - h ]        M, h = C qd + g: the tree's mass matrix and bias
    [ J    0   ] [ lambda ] = [ -Jd qd        ]        J: the closing points' relative velocity, two rows per loop

(J's rows per loop: the gap's components in the loop's plane, a basis fixed in the loop's root body -- a planar
loop closes two coordinates). qdd_a = A tau_a + b is affine in the active torques, so the active coordinates' mass
matrix and bias are M_a = A^-1 and h_a = -M_a b: the interface of robid.simulation.rnea.RigidBodyDynamics, which
the plant uses unchanged. The passive positions are solved at every state by Newton iterations on the closing
points' gap, warm started from the last state (or followed from the zero pose, the robot file's assembly, in steps
of 0.1 rad), and held to ``CLOSURE_TOLERANCE`` (1e-9 of the loop's size; the iterations go to 1e-13).
"""

from __future__ import annotations

import math

import numpy as np

from robid.model.loops import active_tree_indices, ancestors, passive_tree_indices, tree_joints, tree_parents
from robid.simulation.tree_dynamics import TreeDynamics

CLOSURE_TOLERANCE = 1e-9


class ClosedChainDynamics:
    """Rigid-body dynamics of a closed-chain RobotModel in its active coordinates (module docstring)."""

    def __init__(self, model):
        self.model = model
        self.dof = model.dof
        tree, parents = tree_joints(model), tree_parents(model)
        self.tree = TreeDynamics(tree, parents, model.gravity)
        self.n = len(tree)
        self.active, self.passive = active_tree_indices(model), passive_tree_indices(model)
        index = {j.name: k for k, j in enumerate(tree)}
        self.loops = []
        for loop in model.chain.loops:
            a, b = (index[e.body] for e in loop.close)
            ends = (a, loop.close[0].xyz, ancestors(parents, a), b, loop.close[1].xyz, ancestors(parents, b))
            self.loops.append(ends)
        self.size = max(1.0, max(float(np.abs(j.geometry.b_translation).sum()) for j in tree))
        self._planes = [self._plane(loop, parents) for loop in self.loops]
        self._warm = None  # (tree positions, reduced J) of the last single state solved
        self._branch = np.sign(np.linalg.det(self._reduced_jacobian(np.zeros((1, self.n)))[:, :, self.passive]))

    def _plane(self, loop, parents) -> tuple[int, np.ndarray]:
        """The loop's root body (deepest common ancestor, -1 the base) and an orthonormal basis (3, 2) of the
        loop's plane in the root's joint frame, from the gap Jacobian's range at the zero pose."""
        _, _, pa, _, _, pb = loop
        common = [j for j in pa if j in pb]
        root = common[-1] if common else -1
        zero = np.zeros((1, self.n))
        m, _ = self.tree.motion(zero, zero, zero, np.zeros(1))
        a, xa, pa, b, xb, pb = loop
        block = (self.tree.point_jacobian(m, b, self.tree.point(m, b, xb)[0], pb)
                 - self.tree.point_jacobian(m, a, self.tree.point(m, a, xa)[0], pa))[0]
        basis = np.linalg.svd(block)[0][:, :2]
        rotation = m.rotation[root][0] if root >= 0 else np.eye(3)
        return root, rotation.T @ basis

    # ---- closure ------------------------------------------------------------------------------------------
    def gap(self, q: np.ndarray) -> np.ndarray:
        """Closing points' gaps p_b - p_a, (N, 3 n_loops), m."""
        return self._gap_jacobian(q)[0]

    def _gap_jacobian(self, q: np.ndarray):
        """Gaps (N, 3 L), their Jacobian (N, 3 L, n) and the motion (one forward pass, no velocity)."""
        zero = np.zeros_like(q)
        m, _ = self.tree.motion(q, zero, zero, np.zeros(q.shape[0]))
        gaps, jac = [], []
        for a, xa, pa, b, xb, pb in self.loops:
            ya, yb = self.tree.point(m, a, xa)[0], self.tree.point(m, b, xb)[0]
            gaps.append(yb - ya)
            jac.append(self.tree.point_jacobian(m, b, yb, pb) - self.tree.point_jacobian(m, a, ya, pa))
        return np.hstack(gaps), np.concatenate(jac, axis=1), m

    def _velocity_product(self, m) -> np.ndarray:
        """Jd qd (N, 3 L): the closing points' relative acceleration at qdd = 0 without gravity (motion ``m``)."""
        out = []
        for a, xa, _, b, xb, _ in self.loops:
            la, lb = self.tree.point(m, a, xa)[1], self.tree.point(m, b, xb)[1]
            out.append(self.tree.point_acceleration(m, b, lb) - self.tree.point_acceleration(m, a, la))
        return np.hstack(out)

    def _on_planes(self, rows: np.ndarray, m) -> np.ndarray:
        """Per loop, the components of 3-rows (N, 3 L, ...) in the loop's plane (a basis fixed in the loop's root
        body: a planar loop closes two coordinates; at a closed state with consistent velocities the gap and its
        rate vanish, so the moving basis adds nothing to either)."""
        out = []
        for k, (root, basis) in enumerate(self._planes):
            e = basis if root < 0 else m.rotation[root] @ basis
            et = np.swapaxes(np.broadcast_to(e, (rows.shape[0], 3, 2)), 1, 2)
            out.append(et @ rows[:, 3 * k : 3 * k + 3])
        return np.concatenate(out, axis=1)

    def _reduced_jacobian(self, q: np.ndarray) -> np.ndarray:
        _, jac, m = self._gap_jacobian(q)
        return self._on_planes(jac, m)

    def _newton(self, q: np.ndarray):
        """Gauss-Newton on the passive positions (in place, vectorised): (converged mask, reduced J at q)."""
        for _ in range(40):
            g, jac, m = self._gap_jacobian(q)
            if np.abs(g).max(initial=0.0) < 1e-13 * self.size:
                break
            jp = jac[:, :, self.passive]
            step = np.linalg.lstsq(jp[0], -g[0], rcond=None)[0][None] if q.shape[0] == 1 else _lstsq(jp, -g)
            q[:, self.passive] += np.clip(step, -0.5, 0.5)
        jr = self._on_planes(jac, m)
        same = np.sign(np.linalg.det(jr[:, :, self.passive])) == self._branch
        return (np.abs(g).max(axis=1) < CLOSURE_TOLERANCE * self.size) & same, jr

    def positions(self, q_active: np.ndarray) -> np.ndarray:
        """Tree positions (N, n) closing the loops for active positions (N, n_active)."""
        return self._positions(q_active)[0]

    def _positions(self, q_active: np.ndarray):
        """Tree positions and the reduced J there; one state is warm started from the last one solved (moved along
        the tangent), more are followed from the zero pose."""
        q_active = np.atleast_2d(np.asarray(q_active, dtype=float))
        if q_active.shape[0] == 1 and self._warm is not None:
            q, jr = self._warm[0][None].copy(), self._warm[1]
            step = q_active[0] - q[0, self.active]
            q[0, self.passive] -= np.linalg.solve(jr[0][:, self.passive], jr[0][:, self.active] @ step)
            q[0, self.active] = q_active[0]
            ok, jr = self._newton(q)
            if ok[0]:
                self._warm = (q[0].copy(), jr)
                return q, jr
        q = np.zeros((q_active.shape[0], self.n))
        steps = max(1, math.ceil(float(np.abs(q_active).max(initial=0.0)) / 0.1))
        for s in np.linspace(0.0, 1.0, steps + 1)[1:]:
            jac = self._reduced_jacobian(q)
            step = s * q_active - q[:, self.active]
            q[:, self.passive] -= np.linalg.solve(jac[:, :, self.passive], jac[:, :, self.active] @ step[:, :, None])[
                ..., 0]
            q[:, self.active] = s * q_active
            ok, jr = self._newton(q)
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            raise RuntimeError(f"virtual robot: the loops of {self.model.name!r} do not close at {q_active[k]}")
        if q.shape[0] == 1:
            self._warm = (q[0].copy(), jr)
        return q, jr

    # ---- dynamics -----------------------------------------------------------------------------------------
    def _kkt(self, q_active: np.ndarray, qd_active: np.ndarray):
        """(M_a, h_a, q, qd) at active states (module docstring): one forward and backward pass over, per state,
        the n unit accelerations (mass matrix), the bias with gravity and the velocity product without."""
        q, jr = self._positions(q_active)
        n, na, nt = q.shape[0], self.dof, self.n
        qd = np.zeros_like(q)
        qd[:, self.active] = qd_active
        qd[:, self.passive] = -np.linalg.solve(jr[:, :, self.passive], jr[:, :, self.active] @ qd_active[:, :, None])[
            ..., 0]
        rows = nt + 2
        qq = np.repeat(q, rows, axis=0)
        vv = np.zeros_like(qq)
        aa = np.zeros_like(qq)
        gs = np.zeros(n * rows)
        aa.reshape(n, rows, nt)[:, :nt] = np.eye(nt)
        vv.reshape(n, rows, nt)[:, nt:] = qd[:, None, :]
        gs.reshape(n, rows)[:, nt] = 1.0
        tau, motion = self.tree.inverse_dynamics_scaled(qq, vv, aa, gs)
        tau = tau.reshape(n, rows, nt)
        mass, bias = np.swapaxes(tau[:, :nt], 1, 2), tau[:, nt]
        last = _take(motion, slice(nt + 1, None, rows))
        jd_qd = self._on_planes(self._velocity_product(last)[:, :, None], last)[..., 0]
        c = jr.shape[1]
        kkt = np.zeros((n, nt + c, nt + c))
        kkt[:, :nt, :nt] = mass
        kkt[:, :nt, nt:] = np.swapaxes(jr, 1, 2)
        kkt[:, nt:, :nt] = jr
        rhs = np.zeros((n, nt + c, na + 1))
        rhs[:, self.active, np.arange(na)] = 1.0
        rhs[:, :nt, na] = -bias
        rhs[:, nt:, na] = -jd_qd
        sol = np.linalg.solve(kkt, rhs)[:, self.active, :]
        m_a = np.linalg.inv(sol[:, :, :na])
        return m_a, -(m_a @ sol[:, :, na, None])[..., 0], q, qd

    def tree_mass_matrix(self, q: np.ndarray) -> np.ndarray:
        n = q.shape[0]
        qq = np.repeat(q, self.n, axis=0)
        cols = self.tree.inverse_dynamics(qq, np.zeros_like(qq), np.tile(np.eye(self.n), (n, 1)), gravity=False)
        return cols.reshape(n, self.n, self.n).transpose(0, 2, 1)

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """tau_a = M_a qdd_a + h_a of the rigid bodies, (N, n_active)."""
        q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
        m_a, h_a, _, _ = self._kkt(q, qd)
        return (m_a @ qdd[:, :, None])[..., 0] + h_a

    def mass_matrix(self, q) -> np.ndarray:
        q = np.atleast_2d(np.asarray(q, dtype=float))
        return self._kkt(q, np.zeros_like(q))[0]

    def mass_matrix_and_bias(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """M_a (dof, dof) and h_a (dof,) for ONE state (the integrator's path)."""
        m_a, h_a, _, _ = self._kkt(np.ravel(q)[None], np.ravel(qd)[None])
        return m_a[0], h_a[0]

    def tree_states(self, q_active, qd_active) -> tuple[np.ndarray, np.ndarray]:
        """Tree positions and velocities at active states (for the truth of a run and the tests)."""
        _, _, q, qd = self._kkt(np.atleast_2d(q_active), np.atleast_2d(qd_active))
        return q, qd


def _take(motion, rows):
    """The motion of the samples ``rows`` (a slice) of a batched forward pass."""
    from robid.simulation.tree_dynamics import TreeMotion

    return TreeMotion(*([x[rows] for x in getattr(motion, f)] for f in ("rotation", "origin", "w", "wd", "a")))


def _lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least-squares solution of a stack of small systems a x = b (N, r, c), (N, r)."""
    return (np.linalg.pinv(a) @ b[:, :, None])[..., 0]
