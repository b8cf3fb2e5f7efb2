"""The motion the virtual robot is asked to follow: a Fourier trajectory run for whole periods.

A periodic trajectory is the Fourier series at every time (the robot is assumed to be on it already at t = 0).
A rest-to-rest trajectory (``rest_order`` set) starts and ends at its centre with zero derivatives up to the
rest order; outside ``[0, periods * T]`` the reference holds the centre, which keeps it C^rest_order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ReferenceMotion:
    """q_ref(t) and its time derivatives from a trajectory object with ``derivative(t, order)``, ``period``,
    ``center`` and ``rest_order`` (robid.excitation.fourier.FourierTrajectory)."""

    trajectory: object
    periods: float

    @property
    def period(self) -> float:
        return float(self.trajectory.period)

    @property
    def duration(self) -> float:
        """Length of the commanded motion, s."""
        return self.periods * self.period

    @property
    def dof(self) -> int:
        return int(np.asarray(self.trajectory.center).shape[0])

    @property
    def rest_to_rest(self) -> bool:
        return getattr(self.trajectory, "rest_order", None) is not None

    def trajectory_derivatives(self, t: np.ndarray, max_order: int = 2) -> list[np.ndarray]:
        """The Fourier series itself (no hold), [q, ..., q^(max_order)] each (N, dof)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        return [np.asarray(self.trajectory.derivative(t, k), dtype=float) for k in range(max_order + 1)]

    def derivatives(self, t: np.ndarray, max_order: int = 2) -> list[np.ndarray]:
        """[q, qd, ..., q^(max_order)] at times t, each (N, dof)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = self.trajectory_derivatives(t, max_order)
        if self.rest_to_rest:
            outside = (t < 0.0) | (t > self.duration)
            if np.any(outside):
                out[0][outside] = np.asarray(self.trajectory.center, dtype=float)
                for k in range(1, max_order + 1):
                    out[k][outside] = 0.0
        return out
