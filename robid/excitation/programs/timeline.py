"""The commanded timeline of a controller program (robid.excitation.programs.common, "Timeline"): the design's
positions, faded in and out by the C4 smoothstep on a periodic design, and their time derivatives (Leibniz)."""

from __future__ import annotations

import math

import numpy as np

from robid.excitation.fourier import FourierTrajectory


def smoothstep9(s: np.ndarray) -> np.ndarray:
    s = np.clip(s, 0.0, 1.0)
    return s**5 * (126.0 + s * (-420.0 + s * (540.0 + s * (-315.0 + 70.0 * s))))


_SMOOTHSTEP9 = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 126.0, -420.0, 540.0, -315.0, 70.0])  # ascending powers


def smoothstep9_derivative(s: np.ndarray, order: int) -> np.ndarray:
    """d^k e / ds^k of :func:`smoothstep9`, 0 outside [0, 1] for k >= 1."""
    if order == 0:
        return smoothstep9(s)
    s = np.asarray(s, dtype=float)
    coefficients = np.polynomial.polynomial.polyder(_SMOOTHSTEP9, order)
    return np.where((s < 0.0) | (s > 1.0), 0.0, np.polynomial.polynomial.polyval(np.clip(s, 0.0, 1.0), coefficients))


def timeline_positions(traj: FourierTrajectory, t: np.ndarray, periods: int, lead: int) -> np.ndarray:
    """Commanded joint positions (N, dof) at program time t (0 = end of the approach)."""
    t = np.asarray(t, dtype=float)
    q = traj.derivative(t, 0)
    if lead == 0:
        return q
    total = (periods + 2 * lead) * traj.period
    ramp = lead * traj.period
    env = np.minimum(smoothstep9(t / ramp), smoothstep9((total - t) / ramp))
    return traj.center + env[:, None] * (q - traj.center)


def timeline_derivative(traj: FourierTrajectory, t: np.ndarray, periods: int, lead: int, order: int) -> np.ndarray:
    """d^k/dt^k of :func:`timeline_positions` (N, dof); with fades (lead > 0) the path rests at the centre outside
    [0, total] and, by Leibniz, p^(k) = sum_i C(k, i) e^(i) (q - c)^(k-i) with e the fade envelope (C4 at the
    junctions, so k <= 4 is continuous)."""
    t = np.asarray(t, dtype=float).reshape(-1)
    if order == 0:
        return timeline_positions(traj, t, periods, lead)
    if lead == 0:
        return traj.derivative(t, order)
    total = (periods + 2 * lead) * traj.period
    ramp = lead * traj.period
    fade_in, fade_out = t < ramp, t > total - ramp
    out = np.zeros((t.size, traj.dof))
    for i in range(order + 1):
        env = np.where(fade_in | fade_out, 0.0, 1.0 if i == 0 else 0.0)
        env = np.where(fade_in, smoothstep9_derivative(t / ramp, i) / ramp**i, env)
        env = np.where(fade_out, (-1.0) ** i * smoothstep9_derivative((total - t) / ramp, i) / ramp**i, env)
        deviation = traj.derivative(t, order - i) - (traj.center if i == order else 0.0)
        out += math.comb(order, i) * env[:, None] * deviation
    return out
