"""Motion limits and their continuous-time verification.

A check on samples alone can miss a violation between samples. robid bounds the excursion between samples
with a bound on the next derivatives (:meth:`FourierTrajectory.derivative_bound`): for x = q^(k) sampled with
step h, on every interval

    x(t) <= max(x_i, x_{i+1}) + min( M_{k+1} h / 2 ,  M_{k+2} h^2 / 8 )

(mean-value theorem, and the error bound of linear interpolation |x - L| <= h^2/8 max|x''|), with
M_k = sum_l (l w)^(k-1) sqrt(a_l^2 + b_l^2) >= max |q^(k)|. The check refines the grid until every limit
is either certified (sampled extreme + bound within the limit) or definitely violated (a sample beyond it).
The designer imposes the same certified inequalities on its constraint grid
(:class:`robid.excitation.grid_constraints.GridConstraints`), so its result is feasible in continuous time by
construction.

Cartesian limits use the first-order bound with the point speed bound of :mod:`robid.excitation.cartesian`.
Torque limits (nominal inverse dynamics) are checked on the dense grid only: no derivative bound is available
for a general model, which is why the safety margin applies to them as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robid.excitation.cartesian import (
    CartesianLimit,
    chain_frames,
    lever_arms,
    point_positions_and_jacobians,
)
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.joint_limits import QUANTITIES as QUANTITIES
from robid.excitation.joint_limits import JointLimitSet, LimitCheck, TorqueFunction, _joint_items
from robid.excitation.joint_limits import excursion_bound as excursion_bound
from robid.model.robot_model import RobotModel


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


def _cartesian_items(traj, cartesian, model, limits, t, h) -> list[LimitCheck]:
    items = []
    if not cartesian:
        return items
    q = traj.derivative(t, 0)
    m1 = traj.derivative_bound(1)
    travel = np.max(np.abs(np.where(np.isfinite(limits.position), limits.position, 0.0)), axis=1)
    travel = np.maximum(travel, np.abs(traj.center) + traj.derivative_bound(0))
    frames = chain_frames(model, q)  # shared by every point and distance
    for lim in cartesian:
        if hasattr(lim, "distances"):  # a distance between volumes (robid.excitation.collision)
            items.append(_distance_item(lim, model, q, travel, m1, h, frames))
            continue
        p, _ = point_positions_and_jacobians(model, q, lim, frames)
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


def _distance_item(lim, model, q, travel, m1, h, frames=None) -> LimitCheck:
    """The check of a distance between volumes (robid.excitation.collision.DistanceLimit): its smallest sampled
    value, less the most it can change between samples, against the clearance; named by its pair."""
    dist, _ = lim.distances(model, q, frames)
    delta = h / 2.0 * float(lim.arms(model, travel) @ m1)
    sampled = float(np.min(dist))
    return LimitCheck("collision", lim.name, lim.clearance, sampled, sampled - delta,
                      sampled - delta - lim.clearance, sampled - lim.clearance, True)


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


def _passive_joints(model):
    """A closed chain's passive joints with limits (robid.excitation.passive_limits), else None."""
    if model is None or getattr(model, "chain", None) is None:
        return None
    from robid.excitation.passive_limits import PassiveJoints

    return PassiveJoints.from_model(model)


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
    """Verify every limit for all time (the trajectory is T-periodic, one period covers it); with a closed chain's
    ``model``, its passive joints' limits too (robid.excitation.passive_limits).

    The grid doubles until each kinematic and Cartesian limit is certified or definitely violated.
    """
    if cartesian and model is None:
        raise ValueError("Cartesian limits need the robot model")
    n = max(initial_points, 64 * traj.harmonics)
    passive = _passive_joints(model)
    while True:
        t = np.arange(n) * (traj.period / n)
        h = traj.period / n
        items = _joint_items(traj, limits, t, h) + _cartesian_items(traj, cartesian, model, limits, t, h)
        items += passive.items(traj, t, h) if passive is not None else []
        undecided = [i for i in items if i.slack < 0.0 <= i.sampled_slack]
        if not undecided or 2 * n > max_points:
            break
        n *= 2
    nt = min(n, max(torque_points, 32 * traj.harmonics))
    tt = np.arange(nt) * (traj.period / nt)
    items += _torque_items(traj, limits, torque_fn, tt)
    return CheckReport(tuple(items), n, h)
