"""Motion limits and their continuous-time verification.

A check on samples alone can miss a violation between samples. robid bounds the excursion between samples
with a bound on the next derivatives (:meth:`FourierTrajectory.derivative_bound`): for x = q^(k) sampled with
step h, on every interval

    x(t) <= max(x_i, x_{i+1}) + min( M_{k+1} h / 2 ,  M_{k+2} h^2 / 8 )

(mean-value theorem, and the error bound of linear interpolation |x - L| <= h^2/8 max|x''|), with
M_k = sum_l (l w)^(k-1) sqrt(a_l^2 + b_l^2) >= max |q^(k)|. The check refines the grid until every limit
is either certified (sampled extreme + bound within the limit) or definitely violated (a sample beyond it).
The designer imposes the same certified inequalities on its constraint grid, so its result is feasible in
continuous time by construction.

Cartesian limits use the first-order bound with the point speed bound of :mod:`robid.excitation.cartesian`.
Torque limits (nominal inverse dynamics) are checked on the dense grid only: no derivative bound is available
for a general model, which is why the safety margin applies to them as well.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robid.excitation.cartesian import (
    CartesianLimit,
    lever_arms,
    point_positions_and_jacobians,
)
from robid.excitation.channels import channel_derivatives
from robid.excitation.fourier import FourierTrajectory, basis
from robid.model.robot_model import RobotModel

QUANTITIES = ("position", "velocity", "acceleration", "jerk")
TorqueFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class JointLimitSet:
    """Per-joint limits in SI units; +-inf where a limit is not imposed.

    ``position`` (dof, 2) [min, max]; ``velocity``, ``acceleration``, ``jerk``, ``torque`` (dof,) symmetric.
    """

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray
    torque: np.ndarray

    @staticmethod
    def create(dof: int, position=None, velocity=None, acceleration=None, jerk=None, torque=None) -> JointLimitSet:
        def sym(v):
            if v is None:
                return np.full(dof, np.inf)
            values = list(v) if isinstance(v, list | tuple | np.ndarray) else [v] * dof
            return np.array([np.inf if x is None else float(x) for x in values], dtype=float)

        pos = np.tile([-np.inf, np.inf], (dof, 1))
        if position is not None:
            pos = np.array(
                [
                    [(-np.inf if lo is None else float(lo)), (np.inf if hi is None else float(hi))]
                    for lo, hi in position
                ],
                dtype=float,
            ).reshape(dof, 2)
        return JointLimitSet(pos, sym(velocity), sym(acceleration), sym(jerk), sym(torque))

    @property
    def dof(self) -> int:
        return self.position.shape[0]

    def symmetric(self, quantity: str) -> np.ndarray:
        return getattr(self, quantity)

    def with_margin(self, margin: float) -> JointLimitSet:
        """Shrink every limit by the fraction ``margin``: rates scaled by (1 - margin), each position range
        narrowed by margin * (max - min) / 2 at both ends (ranges stay centred where they were)."""
        if not 0.0 <= margin < 1.0:
            raise ValueError("margin must be in [0, 1)")
        lo, hi = self.position[:, 0], self.position[:, 1]
        half = np.where(np.isfinite(hi - lo), (hi - lo) / 2.0, 0.0)
        pos = np.stack([lo + margin * half, hi - margin * half], axis=1)
        f = 1.0 - margin
        return JointLimitSet(pos, self.velocity * f, self.acceleration * f, self.jerk * f, self.torque * f)

    def to_dict(self) -> dict:
        def lst(a):
            return [None if not math.isfinite(v) else float(v) for v in a]

        return {
            "position": [lst(row) for row in self.position],
            "velocity": lst(self.velocity),
            "acceleration": lst(self.acceleration),
            "jerk": lst(self.jerk),
            "torque": lst(self.torque),
        }

    @staticmethod
    def from_dict(d: dict, dof: int) -> JointLimitSet:
        return JointLimitSet.create(
            dof, d.get("position"), d.get("velocity"), d.get("acceleration"), d.get("jerk"), d.get("torque")
        )

    @staticmethod
    def from_model(model: RobotModel) -> JointLimitSet:
        lim = [j.limits for j in model.joints]
        return JointLimitSet.create(
            model.dof,
            [(None, None) if x.position is None else x.position for x in lim],
            [x.velocity for x in lim],
            [x.acceleration for x in lim],
            [x.jerk for x in lim],
            [x.torque for x in lim],
        )


@dataclass(frozen=True)
class LimitCheck:
    """One limit of one joint (or one Cartesian point).

    ``value`` is the worst sampled value (the extreme of |x|, or for position/Cartesian the sample nearest to
    a bound expressed as slack), ``bound`` the certified worst value between samples, ``slack`` = limit side
    minus the certified value (>= 0 means certified safe), ``sampled_slack`` the same without the bound.
    """

    quantity: str
    name: str
    limit: float | tuple[float, float]
    value: float
    bound: float
    slack: float
    sampled_slack: float
    certified: bool  # False for torque: sampled only

    @property
    def ok(self) -> bool:
        return self.slack >= 0.0 if self.certified else self.sampled_slack >= 0.0


@dataclass(frozen=True)
class CheckReport:
    """Result of :func:`check_trajectory`."""

    items: tuple[LimitCheck, ...]
    grid_points: int
    step: float

    @property
    def ok(self) -> bool:
        return all(i.ok for i in self.items)

    def violations(self) -> list[LimitCheck]:
        return [i for i in self.items if not i.ok]

    def summary(self) -> str:
        bad = self.violations()
        head = f"{len(self.items)} limits checked on {self.grid_points} points (step {self.step:.3g} s)"
        if not bad:
            return head + ": all satisfied in continuous time"
        worst = ", ".join(f"{b.quantity} {b.name} (slack {b.sampled_slack:.4g})" for b in bad[:6])
        return head + f": {len(bad)} violated: {worst}"

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "grid_points": self.grid_points,
            "step_s": self.step,
            "items": [
                {
                    "quantity": i.quantity,
                    "name": i.name,
                    "limit": list(i.limit) if isinstance(i.limit, tuple) else i.limit,
                    "value": i.value,
                    "bound": i.bound,
                    "slack": i.slack,
                    "certified": i.certified,
                    "ok": i.ok,
                }
                for i in self.items
            ],
        }


def excursion_bound(traj: FourierTrajectory, order: int, step: float) -> np.ndarray:
    """Per joint: how far q^(order) can move away from the samples, for samples ``step`` apart."""
    first = traj.derivative_bound(order + 1) * step / 2.0
    second = traj.derivative_bound(order + 2) * step**2 / 8.0
    return np.minimum(first, second)


def _joint_items(traj, limits, t, h) -> list[LimitCheck]:
    items = []
    names = traj.joint_names
    for k, quantity in enumerate(QUANTITIES):
        if k == 0:
            if not np.any(np.isfinite(limits.position)):
                continue
        elif not np.any(np.isfinite(limits.symmetric(quantity))):
            continue
        x = traj.derivative(t, k)
        delta = excursion_bound(traj, k, h)
        for j in range(traj.dof):
            if k == 0:
                lo, hi = limits.position[j]
                if not (np.isfinite(lo) or np.isfinite(hi)):
                    continue
                xmax, xmin = float(x[:, j].max()), float(x[:, j].min())
                s_hi, s_lo = hi - xmax, xmin - lo
                sampled = min(s_hi, s_lo)
                value = xmax if s_hi <= s_lo else xmin
                slack = sampled - delta[j]
                bound = value + delta[j] if s_hi <= s_lo else value - delta[j]
                items.append(LimitCheck(quantity, names[j], (float(lo), float(hi)), value, bound, slack, sampled, True))
            else:
                lim = float(limits.symmetric(quantity)[j])
                if not np.isfinite(lim):
                    continue
                value = float(np.abs(x[:, j]).max())
                items.append(
                    LimitCheck(
                        quantity, names[j], lim, value, value + delta[j], lim - value - delta[j], lim - value, True
                    )
                )
    return items


def _cartesian_items(traj, cartesian, model, limits, t, h) -> list[LimitCheck]:
    items = []
    if not cartesian:
        return items
    q = traj.derivative(t, 0)
    m1 = traj.derivative_bound(1)
    travel = np.max(np.abs(np.where(np.isfinite(limits.position), limits.position, 0.0)), axis=1)
    travel = np.maximum(travel, np.abs(traj.center) + traj.derivative_bound(0))
    for lim in cartesian:
        p, _ = point_positions_and_jacobians(model, q, lim)
        delta = h / 2.0 * float(lever_arms(model, lim, travel) @ m1)
        for n, d in zip(lim.normals, lim.offsets, strict=True):
            dist = p @ n - d
            i = int(np.argmin(dist))
            sampled = float(dist[i])
            items.append(
                LimitCheck(
                    f"cartesian:{_face(n)}",
                    lim.name,
                    float(d),
                    sampled + float(d),
                    sampled + float(d) - delta,
                    sampled - delta,
                    sampled,
                    True,
                )
            )
    return items


def _face(n: np.ndarray) -> str:
    for i, axis in enumerate("xyz"):
        if abs(abs(n[i]) - 1.0) < 1e-12:
            return f"{axis}>=" if n[i] > 0 else f"{axis}<="
    return "plane"


def _torque_items(traj, limits, torque_fn, t) -> list[LimitCheck]:
    if torque_fn is None or not np.any(np.isfinite(limits.torque)):
        return []
    q, qd, qdd = traj.evaluate(t, 2)
    tau = np.asarray(torque_fn(q, qd, qdd))
    items = []
    for j in range(traj.dof):
        lim = float(limits.torque[j])
        if not np.isfinite(lim):
            continue
        value = float(np.abs(tau[:, j]).max())
        items.append(LimitCheck("torque", traj.joint_names[j], lim, value, value, lim - value, lim - value, False))
    return items


def check_trajectory(
    traj: FourierTrajectory,
    limits: JointLimitSet,
    cartesian: Sequence[CartesianLimit] = (),
    model: RobotModel | None = None,
    torque_fn: TorqueFunction | None = None,
    initial_points: int = 1024,
    max_points: int = 1 << 19,
    torque_points: int = 4096,
) -> CheckReport:
    """Verify every limit for all time (the trajectory is T-periodic, one period covers it).

    The grid doubles until each kinematic and Cartesian limit is certified or definitely violated.
    """
    if cartesian and model is None:
        raise ValueError("Cartesian limits need the robot model")
    n = max(initial_points, 64 * traj.harmonics)
    while True:
        t = np.arange(n) * (traj.period / n)
        h = traj.period / n
        items = _joint_items(traj, limits, t, h) + _cartesian_items(traj, cartesian, model, limits, t, h)
        undecided = [i for i in items if i.slack < 0.0 <= i.sampled_slack]
        if not undecided or 2 * n > max_points:
            break
        n *= 2
    nt = min(n, max(torque_points, 32 * traj.harmonics))
    tt = np.arange(nt) * (traj.period / nt)
    items += _torque_items(traj, limits, torque_fn, tt)
    return CheckReport(tuple(items), n, h)


class GridConstraints:
    """The certified limit inequalities on a grid over one period, as g(X) >= 0 with the Jacobian dg/dX.

    X is the coefficient matrix (dof, 2H) = [a, b]; every row of g is scaled by its limit so that the rows are
    O(1). Joint limits: L - x_i - M_{k+2} h^2/8 >= 0 (both signs, positions against their two bounds);
    Cartesian: n . p_i - d - (h/2) sum_j R_j M1_j >= 0; torque: L -+ tau_i >= 0 (sampled).
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
    ):
        self.limits = limits
        self.period = period
        self.harmonics = harmonics
        self.center = np.asarray(center, dtype=float)
        self.dof = self.center.shape[0]
        self.t = np.arange(grid_points) * (period / grid_points)
        self.h = period / grid_points
        self.basis = [basis(self.t, period, harmonics, k) for k in range(4)]
        ls = np.arange(1, harmonics + 1) * (2.0 * math.pi / period)
        self._harmonic_scale = ls
        self.cartesian = tuple(cartesian)
        self.model = model
        self.torque_fn = torque_fn if np.any(np.isfinite(limits.torque)) else None
        if self.cartesian:
            travel = np.max(np.abs(np.where(np.isfinite(limits.position), limits.position, 0.0)), axis=1)
            self._arms = [lever_arms(model, c, travel) for c in self.cartesian]

    def _bound_and_gradient(self, x: np.ndarray, order: int) -> tuple[float, np.ndarray]:
        """M_order for one joint's coefficients x (2H,) and its gradient (smoothed at zero amplitude)."""
        h = self.harmonics
        a, b = x[:h], x[h:]
        amp = np.sqrt(a * a + b * b + 1e-24)  # >= the true amplitude: the bound stays rigorous
        w = self._harmonic_scale ** (order - 1)
        return float(w @ amp), np.concatenate([w * a / amp, w * b / amp])

    def evaluate(self, x_all: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """g (m,) and dg/dX (m, dof * 2H) for the coefficient matrix X (dof, 2H)."""
        x_all = np.asarray(x_all, dtype=float).reshape(self.dof, 2 * self.harmonics)
        nx = 2 * self.harmonics
        rows_g: list[np.ndarray] = []
        rows_j: list[np.ndarray] = []
        G = self.t.shape[0]
        lim = self.limits
        for k, quantity in enumerate(QUANTITIES):
            for j in range(self.dof):
                if k == 0:
                    lo, hi = lim.position[j] - self.center[j]
                    bounds = [(hi, 1.0), (-lo, -1.0)]
                else:
                    L = float(lim.symmetric(quantity)[j])
                    bounds = [(L, 1.0), (L, -1.0)]
                vals = self.basis[k] @ x_all[j]
                m, dm = self._bound_and_gradient(x_all[j], k + 2)
                delta = m * self.h**2 / 8.0
                ddelta = dm * self.h**2 / 8.0
                for L, sign in bounds:
                    if not np.isfinite(L):
                        continue
                    scale = 1.0 / max(abs(L), 1e-9)
                    rows_g.append((L - sign * vals - delta) * scale)
                    jac = np.zeros((G, self.dof * nx))
                    jac[:, j * nx : (j + 1) * nx] = (-sign * self.basis[k] - ddelta[None, :]) * scale
                    rows_j.append(jac)
        if self.cartesian:
            g, jac = self._cartesian(x_all)
            rows_g.append(g)
            rows_j.append(jac)
        if self.torque_fn is not None:
            g, jac = self._torque(x_all)
            rows_g.append(g)
            rows_j.append(jac)
        if not rows_g:
            return np.zeros(0), np.zeros((0, self.dof * nx))
        return np.concatenate(rows_g), np.vstack(rows_j)

    def _cartesian(self, x_all):
        nx = 2 * self.harmonics
        q = self.basis[0] @ x_all.T + self.center
        m1, dm1 = zip(*(self._bound_and_gradient(x_all[j], 1) for j in range(self.dof)), strict=True)
        gs, js = [], []
        for c, arms in zip(self.cartesian, self._arms, strict=True):
            p, jac_q = point_positions_and_jacobians(self.model, q, c)
            delta = self.h / 2.0 * float(arms @ np.array(m1))
            for n, d in zip(c.normals, c.offsets, strict=True):
                scale = 1.0  # metres are O(1) already
                gs.append((p @ n - d - delta) * scale)
                nj = np.einsum("i,nij->nj", n, jac_q)  # (G, dof)
                jac = np.zeros((q.shape[0], self.dof * nx))
                for j in range(self.dof):
                    jac[:, j * nx : (j + 1) * nx] = nj[:, j : j + 1] * self.basis[0] - self.h / 2.0 * arms[j] * dm1[j]
                js.append(jac * scale)
        return np.concatenate(gs), np.vstack(js)

    def _torque(self, x_all):
        nx = 2 * self.harmonics
        q, qd, qdd = (self.basis[k] @ x_all.T + (self.center if k == 0 else 0.0) for k in range(3))
        tau = np.asarray(self.torque_fn(q, qd, qdd))
        G = q.shape[0]
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
                js.append(-sign * dtau[:, r].reshape(G, -1) / L)
        return np.concatenate(gs), np.vstack(js)
