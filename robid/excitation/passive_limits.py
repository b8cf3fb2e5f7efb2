"""Limits of a closed chain's passive joints in excitation design and checks (docs/excitation.md, "Closed chains").

A parallelogram's inner angle is limited (its dead points are where the linkage folds), so the designer keeps the
passive joints within their ``limits`` of the robot file too:

* **linear chains** (parallelograms, q_p = G q_a): the passive motion of a Fourier trajectory is the Fourier
  trajectory with centre G c and coefficients G X, so its position, velocity and acceleration limits are
  certified in continuous time exactly as the active joints' (robid.excitation.grid_constraints, the bound
  M_{k+2} h^2 / 8 between samples), and its rows are linear in X;
* **numeric chains** (general planar loops): q_p(t) is solved by the closure on the grid, its rows' Jacobian is
  G(q(t)) times the basis, and between samples the margin is h^2 / 8 times twice the largest |qdd_p| sampled --
  an estimate, not a bound (docs/excitation.md says so); the check refines the grid like the joints'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.excitation.fourier import FourierTrajectory
from robid.excitation.joint_limits import QUANTITIES, JointLimitSet, LimitCheck, _joint_items

#: the passive joints' limits that are kept (position, velocity, acceleration)
PASSIVE_ORDERS = (0, 1, 2)


@dataclass(frozen=True, eq=False)
class PassiveJoints:
    """The passive joints of a closed chain with at least one limit: names, limits, and the relation G (linear
    chains) or the closure (numeric chains)."""

    names: tuple[str, ...]
    limits: JointLimitSet
    relation: np.ndarray | None
    closure: object | None  # robid.model.closure.LoopClosure

    @staticmethod
    def from_model(model) -> PassiveJoints | None:
        chain = getattr(model, "chain", None)
        if chain is None:
            return None
        lim = [j.limits for j in chain.passive]
        limits = JointLimitSet.create(
            len(lim), [(None, None) if x.position is None else x.position for x in lim],
            [x.velocity for x in lim], [x.acceleration for x in lim],
        )
        if not any(np.isfinite(getattr(limits, q)).any() for q in ("position", "velocity", "acceleration")):
            return None
        if chain.relation is not None:
            return PassiveJoints(tuple(chain.passive_names), limits, np.array(chain.relation, dtype=float), None)
        from robid.model.closure import LoopClosure

        return PassiveJoints(tuple(chain.passive_names), limits, None, LoopClosure(model))

    def with_margin(self, margin: float) -> PassiveJoints:
        return PassiveJoints(self.names, self.limits.with_margin(margin), self.relation, self.closure)

    def trajectory(self, traj: FourierTrajectory) -> FourierTrajectory:
        """The passive joints' motion of a linear chain: centre G c, coefficients G a, G b."""
        g = self.relation
        return FourierTrajectory(traj.period, g @ traj.center, g @ traj.a, g @ traj.b, traj.rest_order, self.names)

    def motion(self, q, qd, qdd) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Passive positions, velocities, accelerations (N, n_p) and G (N, n_p, n_a) at active states; samples where
        the loops cannot close are NaN."""
        if self.relation is not None:
            g = self.relation
            return q @ g.T, qd @ g.T, qdd @ g.T, np.broadcast_to(g, (q.shape[0], *g.shape))
        c = self.closure
        tree, ok = c.solve(q, strict=False)  # warm started from the last grid (robid.model.closure)
        s = c.states(np.where(ok[:, None], q, 0.0), qd, qdd, q_tree=np.where(ok[:, None], tree, 0.0))
        out = [x[:, c.passive] for x in (s.q, s.qd, s.qdd)] + [s.w[:, c.passive, :]]
        return tuple(np.where(ok.reshape((-1,) + (1,) * (x.ndim - 1)), x, np.nan) for x in out)

    # ---- the designer's rows ---------------------------------------------------------------------------------
    def rows(self, basis: np.ndarray, x_all: np.ndarray, center: np.ndarray, h: float, bounds, jacobian: bool):
        """Rows (L - s q_p^(k)(t_i) - margin) / L >= 0 for every finite passive limit, both signs, every sample,
        and their Jacobian (rows, dof * 2H); ``bounds(X, orders)`` is GridConstraints._bounds."""
        q, qd, qdd = (basis[k] @ x_all.T + (center if k == 0 else 0.0) for k in range(3))
        pos, vel, acc, gmat = self.motion(q, qd, qdd)
        per_order = (pos, vel, acc)
        if self.relation is not None:
            x_p = self.relation @ x_all
            m, dm = bounds(x_p, np.arange(2, 5))  # (3, n_p), (3, n_p, 2H)
            margins, dmargins = m * (h * h / 8.0), dm * (h * h / 8.0)
        else:
            peak = np.nanmax(np.abs(acc), axis=0) if acc.size else np.zeros(len(self.names))
            margins = np.zeros((3, len(self.names)))
            margins[0] = 2.0 * peak * h * h / 8.0
            dmargins = None
        gs, js = [], []
        nx = x_all.shape[1]
        for k in PASSIVE_ORDERS:
            for p in range(len(self.names)):
                scale = self._scale(k, p)
                for limit, sign in self._bounds(k, p):
                    value = per_order[k][:, p]
                    g = (limit - sign * value - margins[k, p]) / scale
                    gs.append(np.where(np.isfinite(g), g, -1.0))  # a sample that cannot close violates
                    if jacobian:
                        local = -sign * gmat[:, p, :, None] * basis[k][:, None, :]  # (G, dof, 2H)
                        if dmargins is not None:
                            local = local - self.relation[p][None, :, None] * dmargins[k, p][None, None, :]
                        js.append(np.nan_to_num(local).reshape(len(value), -1) / scale)
        if not gs:
            return None
        return np.concatenate(gs), (np.vstack(js) if jacobian else None), nx

    def _scale(self, k: int, p: int) -> float:
        """Row scale: half the position range, or the rate limit (rows O(1), as the joints')."""
        if k == 0:
            lo, hi = self.limits.position[p]
            return float((hi - lo) / 2.0) if np.isfinite(hi - lo) else 1.0
        return float(self.limits.symmetric(QUANTITIES[k])[p])

    def _bounds(self, k: int, p: int) -> list[tuple[float, float]]:
        """(limit, sign) of passive joint p's order-k limit, rows limit - sign x >= 0: position (hi, +1) and
        (-lo, -1) on the absolute position; rates (L, +1), (L, -1)."""
        if k == 0:
            lo, hi = self.limits.position[p]
            return [(v, s) for v, s in ((hi, 1.0), (-lo, -1.0)) if np.isfinite(v)]
        value = float(self.limits.symmetric(QUANTITIES[k])[p])
        return [(value, 1.0), (value, -1.0)] if np.isfinite(value) else []

    # ---- the check ---------------------------------------------------------------------------------------------
    def items(self, traj: FourierTrajectory, t: np.ndarray, h: float) -> list[LimitCheck]:
        """The check's items for the passive joints (linear chains: certified; numeric: sampled, with the margin
        estimate of the module docstring)."""
        if self.relation is not None:
            return [_passive_name(i) for i in _joint_items(self.trajectory(traj), self.limits, t, h)]
        q, qd, qdd = (traj.derivative(t, k) for k in range(3))
        pos, vel, acc, _ = self.motion(q, qd, qdd)
        out = []
        for k, values in enumerate((pos, vel, acc)):
            margin = 2.0 * np.nanmax(np.abs(acc), axis=0) * h * h / 8.0 if k == 0 else np.zeros(len(self.names))
            for p, name in enumerate(self.names):
                bounds = self._bounds(k, p)
                if bounds:
                    out.append(_sampled_item(QUANTITIES[k], f"{name} (passive)", values[:, p], bounds,
                                             float(margin[p]), tuple(self.limits.position[p]) if k == 0 else
                                             float(self.limits.symmetric(QUANTITIES[k])[p])))
        return out


def _passive_name(item: LimitCheck) -> LimitCheck:
    from dataclasses import replace

    return replace(item, name=f"{item.name} (passive)")


def _sampled_item(quantity: str, name: str, values: np.ndarray, bounds, margin: float, limit) -> LimitCheck:
    """The worst sample of ``values`` against ``bounds`` [(limit, sign)], with ``margin`` between samples (not
    certified); a sample where the loops cannot close (NaN) is a violation."""
    if not np.all(np.isfinite(values)):
        return LimitCheck(quantity, name, limit, float("nan"), float("nan"), -np.inf, -np.inf, True)
    sampled, sign = min((lim - float((sign * values).max()), sign) for lim, sign in bounds)
    value = float(values.max() if sign > 0 else values.min())
    return LimitCheck(quantity, name, limit, value, value + sign * margin, sampled - margin, sampled, True)


__all__ = ["PassiveJoints"]
