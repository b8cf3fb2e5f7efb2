"""Joint limits (:class:`JointLimitSet`), one certified check item (:class:`LimitCheck`), and the joint limits' check
of a trajectory on a grid with the excursion bound between samples (robid.excitation.constraints, module docstring;
the passive joints of a closed chain reuse it, robid.excitation.passive_limits)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from robid.excitation.fourier import FourierTrajectory
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


