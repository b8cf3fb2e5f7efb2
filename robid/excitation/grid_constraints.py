"""The designer's limit inequalities on a grid over one period, vectorised, with window screening.

Rows g(X) >= 0 for the Fourier coefficients X (dof, 2H) = [a, b] (:mod:`robid.excitation.fourier`), each
scaled by its limit so that rows are O(1):

* joint limits, every grid sample t_i, both signs (positions against their two bounds):
  (L - s q_j^(k)(t_i) - M_{k+2,j} h^2/8) / L >= 0, with M_k = sum_l (l w)^(k-1) sqrt(a_l^2 + b_l^2) the
  derivative bound of :meth:`FourierTrajectory.derivative_bound` and h the grid step (the linear-interpolation
  error bound; docs/excitation.md "Limits in continuous time"). All joints, orders and samples come from one
  product of the stacked basis (4, G, 2H) with X; the Jacobian is the basis row minus dM/dX h^2/8;
* Cartesian points: n . p_i - d - (h/2) sum_j R_j M_{1,j} >= 0 (:mod:`robid.excitation.cartesian`), and distances
  between volumes d_i - clearance - (h/2) sum_j (R_j + R'_j) M_{1,j} >= 0 (:mod:`robid.excitation.collision`);
* torques: (L -+ tau_i) / L >= 0 on the samples (nominal inverse dynamics).

**Window screening** (what the optimiser uses). SLSQP solves a least-squares QP over every row at every
iteration, so its cost grows with the row count (9 216 rows for 6 joints, 3 limited orders and 256 samples).
Every block of G rows (one joint, order and sign, or one Cartesian face, or one torque sign) is cut into
``windows`` consecutive windows of samples and only the smallest row of each window is passed on. The feasible
set is exactly the same (all rows >= 0 if and only if every window's minimum is >= 0); the screened row is a
piecewise-smooth function of X whose Jacobian is the chosen sample's row. With 2-4 windows per harmonic each
window holds a few samples and at most one local extremum of a joint's motion (a trigonometric polynomial of
degree H has at most H maxima per period), so the row of a window keeps following the same peak.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from robid.excitation.cartesian import (
    CartesianLimit,
    chain_frames,
    lever_arms,
    point_positions,
    point_positions_and_jacobians,
)
from robid.excitation.channels import channel_derivatives
from robid.excitation.collision import DistanceLimit
from robid.excitation.constraints import QUANTITIES, JointLimitSet, TorqueFunction
from robid.excitation.fourier import basis
from robid.model.robot_model import RobotModel


class GridConstraints:
    """The certified limit inequalities on ``grid_points`` samples t_i = i T / n of one period.

    ``evaluate(X)`` gives every row and dg/dX; ``evaluate_windows(X, windows, null)`` the minimum row of each
    window and its Jacobian, with respect to X or, when ``null`` (2H, r) is given, to the coordinates Z of
    X_j = Z_j null^T (the rest-to-rest subspace of :func:`robid.excitation.fourier.rest_nullspace`).
    """

    def __init__(
        self,
        limits: JointLimitSet,
        period: float,
        harmonics: int,
        grid_points: int,
        center: np.ndarray,
        cartesian: Sequence[CartesianLimit] = (),
        model: RobotModel | None = None,
        torque_fn: TorqueFunction | None = None,
        softness: float = 1e-3,
        passive=None,
    ):
        self.limits = limits
        self.passive = passive  # robid.excitation.passive_limits.PassiveJoints of a closed chain, margin applied
        self.softness = softness
        self.period = period
        self.harmonics = harmonics
        self.center = np.asarray(center, dtype=float)
        self.dof = self.center.shape[0]
        self.t = np.arange(grid_points) * (period / grid_points)
        self.h = period / grid_points
        self.basis = np.stack([basis(self.t, period, harmonics, k) for k in range(4)])  # (4, G, 2H)
        self._harmonic_scale = np.arange(1, harmonics + 1) * (2.0 * math.pi / period)
        self.cartesian = tuple(cartesian)
        self.model = model
        self.torque_fn = torque_fn if np.any(np.isfinite(limits.torque)) else None
        if self.cartesian:
            travel = np.max(np.abs(np.where(np.isfinite(limits.position), limits.position, 0.0)), axis=1)
            self._arms = [c.arms(model, travel) if isinstance(c, DistanceLimit) else lever_arms(model, c, travel)
                          for c in self.cartesian]
        self._blocks = self._joint_blocks()
        self._reduced_basis: tuple[np.ndarray, np.ndarray] | None = None  # (null, basis @ null)

    def _joint_blocks(self) -> tuple[np.ndarray, ...]:
        """(order k, joint j, limit L, sign s, row scale) of every finite joint limit, in the row order
        quantity -> joint -> (upper, lower)."""
        ks, js, ls, ss = [], [], [], []
        lim = self.limits
        for k, quantity in enumerate(QUANTITIES):
            for j in range(self.dof):
                if k == 0:
                    lo, hi = lim.position[j] - self.center[j]
                    bounds = [(hi, 1.0), (-lo, -1.0)]
                else:
                    value = float(lim.symmetric(quantity)[j])
                    bounds = [(value, 1.0), (value, -1.0)]
                for value, sign in bounds:
                    if np.isfinite(value):
                        ks.append(k)
                        js.append(j)
                        ls.append(value)
                        ss.append(sign)
        k, j = np.array(ks, dtype=int), np.array(js, dtype=int)
        L, s = np.array(ls, dtype=float), np.array(ss, dtype=float)
        return k, j, L, s, 1.0 / np.maximum(np.abs(L), 1e-9)

    @property
    def rows(self) -> int:
        """Number of rows of :meth:`evaluate`."""
        g = self.t.shape[0]
        n = self._blocks[0].shape[0] * g
        n += sum(len(c.offsets) for c in self.cartesian) * g
        if self.torque_fn is not None:
            n += 2 * int(np.sum(np.isfinite(self.limits.torque))) * g
        if self.passive is not None:
            n += self._passive(np.zeros((self.dof, 2 * self.harmonics)), jacobian=False)[0].shape[0]
        return n

    # ---- joint limits ----------------------------------------------------------------------------------------
    def _bounds(self, x_all: np.ndarray, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M_order per joint (len(orders), dof) and dM/dX (len(orders), dof, 2H); the amplitude is smoothed at zero
        (sqrt(a^2 + b^2 + 1e-24) >= the true amplitude, so the bound stays rigorous)."""
        h = self.harmonics
        a, b = x_all[:, :h], x_all[:, h:]
        amp = np.sqrt(a * a + b * b + 1e-24)  # (dof, H)
        w = self._harmonic_scale[None, :] ** (np.asarray(orders)[:, None] - 1)  # (n_orders, H)
        m = np.einsum("oh,jh->oj", w, amp)
        dm = np.concatenate([w[:, None, :] * (a / amp)[None], w[:, None, :] * (b / amp)[None]], axis=2)
        return m, dm

    def _joint_values(self, x_all: np.ndarray):
        """Row values (blocks, G) and the pieces of their Jacobian: the signed, scaled basis per block and the
        bound gradient per block (blocks, 2H)."""
        k, j, L, s, scale = self._blocks
        values = np.einsum("kgh,jh->kjg", self.basis, x_all)  # (4, dof, G) = q^(k)_j(t_g) - [k = 0] c_j
        m, dm = self._bounds(x_all, np.arange(2, 6))  # orders k + 2 for k = 0..3
        delta = m * (self.h**2 / 8.0)  # (4, dof)
        g = (L[:, None] - s[:, None] * values[k, j] - delta[k, j][:, None]) * scale[:, None]
        ddelta = dm[k, j] * (self.h**2 / 8.0)  # (blocks, 2H)
        return g, ddelta

    def _joint_rows(self, x_all: np.ndarray, windows: int | None, null: np.ndarray | None):
        k, j, _, s, scale = self._blocks
        g, ddelta = self._joint_values(x_all)
        nb, G = g.shape
        if null is None:
            basis_rows, dd = self.basis, ddelta
        else:
            basis_rows, dd = self._basis_in(null), ddelta @ null
        nvar = basis_rows.shape[2]
        if windows is None:
            # row (b, i): -s_b B_k(t_i) - d delta_b, in the columns of joint j_b, times the row scale
            local = -s[:, None, None] * basis_rows[k] - dd[:, None, :]
            gsel = g
        else:
            gsel, weights = _soft_min(g, windows, self.softness)  # (blocks, W), (blocks, W, S)
            size = weights.shape[2]
            padded = np.zeros((4, weights.shape[1] * size, nvar))
            padded[:, :G] = basis_rows
            padded = padded.reshape(4, weights.shape[1], size, nvar)
            local = np.empty((nb, weights.shape[1], nvar))
            for order in np.unique(k):  # the weighted basis row of each window, one product per order
                sel = k == order
                local[sel] = np.einsum("bws,wsv->bwv", weights[sel], padded[order])
            local = -s[:, None, None] * local - dd[:, None, :]  # the weights sum to 1
        local *= scale[:, None, None]
        rows = local.shape[1]
        jac = np.zeros((nb, rows, self.dof, nvar))
        jac[np.arange(nb), :, j, :] = local
        return gsel.reshape(-1), jac.reshape(nb * rows, self.dof * nvar)

    def _basis_in(self, null: np.ndarray) -> np.ndarray:
        if self._reduced_basis is None or self._reduced_basis[0] is not null:
            self._reduced_basis = (null, self.basis @ null)
        return self._reduced_basis[1]

    # ---- all rows ----------------------------------------------------------------------------------------------
    def evaluate(self, x_all: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """g (m,) and dg/dX (m, dof * 2H) for the coefficient matrix X (dof, 2H): every row of every sample."""
        return self.evaluate_windows(x_all, None, None)

    def evaluate_windows(
        self, x_all: np.ndarray, windows: int | None, null: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The smallest row of each of ``windows`` sample windows per block (None: every row) and its Jacobian,
        with respect to X (dof, 2H), or to Z (dof, r) with X_j = Z_j ``null``^T when ``null`` is given."""
        x_all = np.asarray(x_all, dtype=float).reshape(self.dof, 2 * self.harmonics)
        nvar = 2 * self.harmonics if null is None else null.shape[1]
        gs, js = [], []
        if self._blocks[0].size:
            g, jac = self._joint_rows(x_all, windows, null)
            gs.append(g)
            js.append(jac)
        for rows in (self._cartesian, self._torque, self._passive):
            part = rows(x_all)
            if part is None:
                continue
            g, jac = _screen(*part, self.t.shape[0], windows, self.softness)
            if null is not None:
                jac = np.einsum("mjx,xr->mjr", jac.reshape(-1, self.dof, 2 * self.harmonics), null)
                jac = jac.reshape(g.shape[0], -1)
            gs.append(g)
            js.append(jac)
        if not gs:
            return np.zeros(0), np.zeros((0, self.dof * nvar))
        return np.concatenate(gs), (js[0] if len(js) == 1 else np.vstack(js))

    def values(self, x_all: np.ndarray) -> np.ndarray:
        """Every row of :meth:`evaluate` without the Jacobian (what feasibility tests need)."""
        x_all = np.asarray(x_all, dtype=float).reshape(self.dof, 2 * self.harmonics)
        parts = [self._joint_values(x_all)[0].reshape(-1)] if self._blocks[0].size else []
        for rows in (self._cartesian, self._torque, self._passive):
            part = rows(x_all, jacobian=False)
            if part is not None:
                parts.append(part[0])
        return np.concatenate(parts) if parts else np.zeros(0)

    def all_met(self, x_all: np.ndarray) -> bool:
        """Whether every row of :meth:`values` is >= 0 (a NaN row is not), the cheap blocks first: the joint rows,
        then the torque, passive and Cartesian ones (the forward kinematics of every sample), each computed only
        when every block before it held -- the same answer as ``min(values) >= 0``, a bisection's infeasible
        trials mostly decided without the Cartesian rows."""
        x_all = np.asarray(x_all, dtype=float).reshape(self.dof, 2 * self.harmonics)
        if self._blocks[0].size and not np.min(self._joint_values(x_all)[0], initial=0.0) >= 0.0:
            return False
        for rows in (self._torque, self._passive, self._cartesian):
            part = rows(x_all, jacobian=False)
            if part is not None and not np.min(part[0], initial=0.0) >= 0.0:
                return False
        return True

    def _cartesian(self, x_all, jacobian: bool = True):
        if not self.cartesian:
            return None
        nx = 2 * self.harmonics
        q = self.basis[0] @ x_all.T + self.center
        m1, dm1 = self._bounds(x_all, np.array([1]))
        m1, dm1 = m1[0], dm1[0]  # (dof,), (dof, 2H)
        gs, js = [], []
        frames = chain_frames(self.model, q)  # shared by every point and distance
        for c, arms in zip(self.cartesian, self._arms, strict=True):
            delta = self.h / 2.0 * float(arms @ m1)
            ddelta = (self.h / 2.0) * arms[:, None] * dm1  # (dof, 2H)
            if isinstance(c, DistanceLimit):  # a distance between volumes (robid.excitation.collision)
                dist, grad = c.distances(self.model, q, frames)
                gs.append(dist - c.clearance - delta)
                if jacobian:
                    jac = grad[:, :, None] * self.basis[0][:, None, :] - ddelta[None]
                    js.append(jac.reshape(q.shape[0], self.dof * nx))
                continue
            if not jacobian:
                p = point_positions(self.model, q, c, frames)
                gs += [p @ n - d - delta for n, d in zip(c.normals, c.offsets, strict=True)]
                continue
            p, jac_q = point_positions_and_jacobians(self.model, q, c, frames)
            for n, d in zip(c.normals, c.offsets, strict=True):
                gs.append(p @ n - d - delta)  # metres are O(1) already
                nj = np.einsum("i,nij->nj", n, jac_q)  # (G, dof)
                jac = nj[:, :, None] * self.basis[0][:, None, :] - ddelta[None]
                js.append(jac.reshape(q.shape[0], self.dof * nx))
        return np.concatenate(gs), (np.vstack(js) if jacobian else None)

    def _torque(self, x_all, jacobian: bool = True):
        if self.torque_fn is None:
            return None
        nx = 2 * self.harmonics
        q, qd, qdd = (self.basis[k] @ x_all.T + (self.center if k == 0 else 0.0) for k in range(3))
        tau = np.asarray(self.torque_fn(q, qd, qdd))
        G = q.shape[0]
        if jacobian:
            dtau = np.zeros((G, self.dof, self.dof, nx))  # sample, torque row, joint, coefficient
            for kind, j, d in channel_derivatives(self.torque_fn, q, qd, qdd, tau):
                dtau[:, :, j, :] += d[:, :, None] * self.basis[kind][:, None, :]
        gs, js = [], []
        for r in range(self.dof):
            L = float(self.limits.torque[r])
            if not np.isfinite(L):
                continue
            for sign in (1.0, -1.0):
                gs.append((L - sign * tau[:, r]) / L)
                if jacobian:
                    js.append(-sign * dtau[:, r].reshape(G, -1) / L)
        return np.concatenate(gs), (np.vstack(js) if jacobian else None)


    def _passive(self, x_all, jacobian: bool = True):
        """Rows of the passive joints' limits (robid.excitation.passive_limits), every sample."""
        if self.passive is None:
            return None
        out = self.passive.rows(self.basis, x_all, self.center, self.h, self._bounds, jacobian)
        return None if out is None else out[:2]


def _soft_min(g: np.ndarray, windows: int, softness: float) -> tuple[np.ndarray, np.ndarray]:
    """Soft minimum of each of ``windows`` runs of consecutive samples of every row of g (blocks, G), and its
    weights (blocks, windows, size) over the samples of each window (zero on padding).

    m_w = min_i g_i - tau log sum_i exp(-(g_i - min g) / tau)  <=  min_i g_i  (and >= min g - tau log size);
    dm_w/dg_i = softmax(-g / tau)_i. Every window holds ceil(G / windows) samples but the last, which may hold
    fewer."""
    nb, G = g.shape
    windows = max(1, min(int(windows), G))
    size = -(-G // windows)
    windows = -(-G // size)  # drop windows that would be empty
    padded = np.full((nb, windows * size), np.inf)
    padded[:, :G] = g
    padded = padded.reshape(nb, windows, size)
    low = padded.min(axis=2, keepdims=True)
    e = np.exp(-(padded - low) / softness)
    total = e.sum(axis=2, keepdims=True)
    return (low - softness * np.log(total))[:, :, 0], e / total


def _screen(
    g: np.ndarray, jac: np.ndarray, samples: int, windows: int | None, softness: float
) -> tuple[np.ndarray, np.ndarray]:
    """Window screening (soft minimum) of rows laid out in blocks of ``samples`` consecutive rows."""
    if windows is None:
        return g, jac
    soft, weights = _soft_min(g.reshape(-1, samples), windows, softness)
    nb, nw, size = weights.shape
    padded = np.zeros((nb, nw * size, jac.shape[1]))
    padded[:, :samples] = jac.reshape(nb, samples, -1)
    combined = np.einsum("bws,bwsv->bwv", weights, padded.reshape(nb, nw, size, -1))
    return soft.reshape(-1), combined.reshape(nb * nw, -1)
