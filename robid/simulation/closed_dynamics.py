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

Two numeric forms of the same equations, as for serial chains (robid.simulation.rnea's docstring): vectorised over
samples (``_kkt``: M from n unit-acceleration passes of TreeDynamics, for the feed-forward table, the truth and
any batch), and for ONE state, the integrator's right-hand side (``mass_matrix_and_bias``: closure, J, Jd qd, M by
composite rigid bodies and h in plain-Python scalars, tree_dynamics.ScalarTree, 7-11x faster there:
benchmarks/RESULTS.md). Both end in the same multipliers' solve (``_solve_kkt``) and agree to rounding
(tests/test_closed_chain_single_state.py).
"""

from __future__ import annotations

import math

import numpy as np

from robid.model.loops import active_tree_indices, ancestors, passive_tree_indices, tree_joints, tree_parents
from robid.simulation.tree_dynamics import ScalarTree, TreeDynamics, _rot

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
        self._scalar = ScalarTree(self.tree)
        self._active_index = np.array(self.active)
        self._units = np.zeros((self.n + 2 * len(self.loops), self.dof))  # the multipliers' unit active torques
        self._units[self.active, np.arange(self.dof)] = 1.0
        self._plane_columns = [(root, [tuple(e.tolist()) for e in basis.T]) for root, basis in self._planes]
        local = self.tree.local_point  # the closing points in their joint frames
        self._ends = [(a, tuple(local(a, xa).tolist()), pa, b, tuple(local(b, xb).tolist()), pb)
                      for a, xa, pa, b, xb, pb in self.loops]
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
        """Gaps (N, 3 L), their Jacobian (N, 3 L, n) and the poses (rotations and origins of the joint frames)."""
        m = self.tree.poses(q)
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
        """Gauss-Newton on the passive positions (in place, vectorised): (converged mask, reduced J at q). At most
        40 steps; the gap and J returned are those of the final q."""
        for k in range(41):
            g, jac, m = self._gap_jacobian(q)
            if np.abs(g).max(initial=0.0) < 1e-13 * self.size or k == 40:
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
        jr = self._reduced_jacobian(q)
        for s in np.linspace(0.0, 1.0, steps + 1)[1:]:  # each step's tangent: the reduced J where the last closed
            step = s * q_active - q[:, self.active]
            q[:, self.passive] -= np.linalg.solve(jr[:, :, self.passive], jr[:, :, self.active] @ step[:, :, None])[
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
        n, nt = q.shape[0], self.n
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
        return (*self._solve_kkt(mass, bias, jr, jd_qd), q, qd)

    def _solve_kkt(self, mass, bias, jr, jd_qd) -> tuple[np.ndarray, np.ndarray]:
        """(M_a, h_a) from the tree's M (N, n, n) and h (N, n), the reduced J (N, c, n) and Jd qd (N, c): the
        multipliers' system of the module docstring, solved for the unit active torques and for zero torques."""
        n, nt, na, c = mass.shape[0], self.n, self.dof, jr.shape[1]
        kkt = np.zeros((n, nt + c, nt + c))
        kkt[:, :nt, :nt] = mass
        kkt[:, :nt, nt:] = jr.transpose(0, 2, 1)
        kkt[:, nt:, :nt] = jr
        rhs = np.empty((n, nt + c, na + 1))
        rhs[:, :, :na] = self._units
        rhs[:, :nt, na] = -bias
        rhs[:, nt:, na] = -jd_qd
        sol = np.linalg.solve(kkt, rhs)[:, self._active_index]
        m_a = np.linalg.inv(sol[:, :, :na])
        return m_a, -(m_a @ sol[:, :, na:])[..., 0]

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
        """M_a (dof, dof) and h_a (dof,) for ONE state (the integrator's path): :meth:`_kkt`'s equations with the
        closure, M (composite rigid bodies), h and Jd qd in plain-Python scalars (tree_dynamics.ScalarTree; numpy's
        per-call overhead on 3-vectors dominates one state), the multipliers' system solved as for many."""
        q_tree, jr, planes, pl, rotation = self._closed_state([float(x) for x in np.ravel(q)])
        qd_tree = [0.0] * self.n
        for k, v in zip(self.active, np.ravel(qd), strict=True):
            qd_tree[k] = float(v)
        rhs = [-sum(row[k] * qd_tree[k] for k in self.active) for row in jr]
        for k, v in zip(self.passive, _solve([[row[k] for k in self.passive] for row in jr], rhs)[0], strict=True):
            qd_tree[k] = v
        velocities = self._scalar.velocities(pl, qd_tree)
        jd_qd = []
        for (a, la, _, b, lb, _), (e0, e1) in zip(self._ends, planes, strict=True):
            ya, yb = _point_acceleration(rotation[a], velocities[a], la), _point_acceleration(rotation[b],
                                                                                            velocities[b], lb)
            d = (yb[0] - ya[0], yb[1] - ya[1], yb[2] - ya[2])
            jd_qd += [e0[0] * d[0] + e0[1] * d[1] + e0[2] * d[2], e1[0] * d[0] + e1[1] * d[1] + e1[2] * d[2]]
        mass, bias = self._scalar.mass_matrix(pl), self._scalar.bias(pl, rotation, velocities)
        m_a, h_a = self._solve_kkt(np.array([mass]), np.array([bias]), np.array([jr]), np.array([jd_qd]))
        return m_a[0], h_a[0]

    def _closed_state(self, q_active: list):
        """One state's closure in scalars, as :meth:`_positions` (warm started from the last state, the zero pose's
        continuation if that fails): (tree positions, reduced J rows, plane bases, placements, rotations)."""
        if self._warm is not None:
            q, jr = self._warm[0].tolist(), self._warm[1][0].tolist()
            step = [x - q[k] for x, k in zip(q_active, self.active, strict=True)]
            rhs = [sum(row[k] * s for k, s in zip(self.active, step, strict=True)) for row in jr]
            dp = _solve([[row[k] for k in self.passive] for row in jr], rhs)[0]
            for k, d in zip(self.passive, dp, strict=True):
                q[k] -= d
            for k, x in zip(self.active, q_active, strict=True):
                q[k] = x
            state = self._newton_single(q, 40)
            if state is not None:
                return state
            self._warm = None
        q = self._positions(np.array([q_active]))[0][0].tolist()  # closed (it raises otherwise)
        state = self._newton_single(q, 0)
        if state is None:  # the scalar gap or branch on the edge of the vectorised one's tolerance
            raise RuntimeError(f"virtual robot: the loops of {self.model.name!r} do not close at {q_active}")
        return state

    def _newton_single(self, q: list, iterations: int):
        """:meth:`_newton` for one state in scalars (q in place); None if the closure fails or changes branch."""
        for k in range(iterations + 1):
            gaps, rows, pl, rotation, origin = self._gap_single(q)
            worst = max(abs(x) for x in gaps)
            if worst < 1e-13 * self.size or k == iterations:
                break
            jp = np.array([[row[j] for j in self.passive] for row in rows])
            step = np.clip(np.linalg.lstsq(jp, -np.array(gaps), rcond=None)[0], -0.5, 0.5)
            for j, d in zip(self.passive, step.tolist(), strict=True):
                q[j] += d
        planes = []
        for root, basis in self._plane_columns:
            planes.append([_rot(rotation[root], *e) if root >= 0 else e for e in basis])
        jr = [[e[0] * rows[3 * k][j] + e[1] * rows[3 * k + 1][j] + e[2] * rows[3 * k + 2][j] for j in range(self.n)]
              for k, pair in enumerate(planes) for e in pair]
        if worst >= CLOSURE_TOLERANCE * self.size or _solve([[r[j] for j in self.passive] for r in jr],
                                                            [0.0] * len(jr))[1] != self._branch[0]:
            return None
        self._warm = (np.array(q), np.array([jr]))
        return q, jr, planes, pl, rotation

    def _gap_single(self, q: list):
        """:meth:`_gap_jacobian` for one state in scalars: gaps (3 L), Jacobian rows (3 L lists of n), placements,
        rotations and origins in the base frame."""
        pl = self._scalar.placements(q)
        rotation, origin = self._scalar.poses(pl)
        gaps, rows = [], []
        for a, la, pa, b, lb, pb in self._ends:
            ya, yb = _point(rotation[a], origin[a], la), _point(rotation[b], origin[b], lb)
            gaps += [yb[0] - ya[0], yb[1] - ya[1], yb[2] - ya[2]]
            block = [[0.0] * self.n for _ in range(3)]
            for sign, y, path in ((1.0, yb, pb), (-1.0, ya, pa)):
                for j in path:
                    revolute, axis = self._scalar.items[j][:2]
                    z0, z1, z2 = _rot(rotation[j], *axis)
                    if revolute:
                        o = origin[j]
                        r0, r1, r2 = y[0] - o[0], y[1] - o[1], y[2] - o[2]
                        z0, z1, z2 = z1 * r2 - z2 * r1, z2 * r0 - z0 * r2, z0 * r1 - z1 * r0
                    block[0][j] += sign * z0
                    block[1][j] += sign * z1
                    block[2][j] += sign * z2
            rows += block
        return gaps, rows, pl, rotation, origin

    def tree_states(self, q_active, qd_active) -> tuple[np.ndarray, np.ndarray]:
        """Tree positions and velocities at active states (for the truth of a run and the tests)."""
        _, _, q, qd = self._kkt(np.atleast_2d(q_active), np.atleast_2d(qd_active))
        return q, qd


def _point(rotation, origin, local) -> tuple[float, float, float]:
    """Base-frame position of a point with coordinates ``local`` in a joint frame (rotation, origin)."""
    x = _rot(rotation, *local)
    return origin[0] + x[0], origin[1] + x[1], origin[2] + x[2]


def _point_acceleration(rotation, velocities, local) -> tuple[float, float, float]:
    """TreeDynamics.point_acceleration for one state: R (a + wd x r + w x (w x r))."""
    w0, w1, w2, d0, d1, d2, a0, a1, a2 = velocities
    r0, r1, r2 = local
    x0, x1, x2 = w1 * r2 - w2 * r1, w2 * r0 - w0 * r2, w0 * r1 - w1 * r0
    return _rot(rotation, a0 + d1 * r2 - d2 * r1 + w1 * x2 - w2 * x1, a1 + d2 * r0 - d0 * r2 + w2 * x0 - w0 * x2,
                a2 + d0 * r1 - d1 * r0 + w0 * x1 - w1 * x0)


def _solve(a: list, b: list) -> tuple[list, float]:
    """x with a x = b for a small square system (lists), by Gaussian elimination with partial pivoting, and the
    sign of det a (0 if singular)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    sign = 1.0
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if m[p][c] == 0.0:
            return [math.nan] * n, 0.0
        if p != c:
            m[c], m[p], sign = m[p], m[c], -sign
        sign = sign if m[c][c] > 0.0 else -sign
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x, sign


def _take(motion, rows):
    """The motion of the samples ``rows`` (a slice) of a batched forward pass."""
    from robid.simulation.tree_dynamics import TreeMotion

    return TreeMotion(*([x[rows] for x in getattr(motion, f)] for f in ("rotation", "origin", "w", "wd", "a")))


def _lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least-squares solution of a stack of small systems a x = b (N, r, c), (N, r)."""
    return (np.linalg.pinv(a) @ b[:, :, None])[..., 0]
