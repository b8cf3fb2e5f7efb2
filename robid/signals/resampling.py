"""Resampling of jittered time stamps onto a uniform grid.

Method: a cubic interpolating spline (scipy ``CubicSpline``, not-a-knot end conditions) through the recorded
samples at their true time stamps, evaluated on the uniform grid ``t0 + k/rate``. The same linear operator
is applied to every channel (positions and torques alike), so resampling keeps them consistent. For a signal
whose content lies well below the Nyquist frequency the interpolation error is O(h^4 x'''') -- far below the
noise of the data sets at hand (e.g. UR10e stamps jitter between 2 and 34 ms around 10 ms).
Default rate: the inverse of the median time step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

#: Time stamps whose steps all lie within this fraction of the median step count as uniform.
UNIFORM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Resampled:
    t: np.ndarray
    signals: dict[str, np.ndarray]
    rate: float
    description: str


def is_uniform(t: np.ndarray, tolerance: float = UNIFORM_TOLERANCE, resolution: float = 0.0) -> bool:
    """Steps all within ``tolerance`` of the median step, or within twice the stamps' float ``resolution``
    (absolute stamps such as 1.7e9 s are rounded to 2.4e-7 s: a uniform log then looks jittered)."""
    dt = np.diff(t)
    median = float(np.median(dt))
    return bool(np.max(np.abs(dt - median)) <= max(tolerance * median, 2.0 * resolution))


def to_uniform_grid(
    t: np.ndarray, signals: dict[str, np.ndarray | None], rate: float | None = None, resolution: float = 0.0
) -> Resampled:
    """All ``signals`` (N, ...) on a uniform grid from ``t[0]`` at ``rate`` (default 1/median step).

    ``resolution``: the float resolution of the time stamps as recorded (``numpy.spacing`` of the largest
    stamp); steps that differ by no more than twice that are rounding, not jitter: the grid is then
    t[0] + k (t[-1] - t[0]) / (N - 1) and nothing is interpolated.
    """
    t = np.asarray(t, dtype=float)
    present = {k: np.asarray(v, dtype=float) for k, v in signals.items() if v is not None}
    dt = np.diff(t)
    median = float(np.median(dt))
    uniform = is_uniform(t)
    if rate is None and (uniform or is_uniform(t, resolution=resolution)):
        step = median if uniform else (t[-1] - t[0]) / (t.size - 1)
        grid = t.copy() if uniform else t[0] + np.arange(t.size) * step
        rounding = "" if uniform else f" (time stamps uniform to their float resolution {resolution:.2g} s)"
        return Resampled(
            t=grid,
            signals={k: v.copy() for k, v in present.items()},
            rate=1.0 / step,
            description=f"uniform sampling at {1.0 / step:.6g} Hz{rounding}, no resampling",
        )
    target = rate if rate is not None else 1.0 / median
    n = int(np.floor((t[-1] - t[0]) * target * (1.0 + 1e-12))) + 1
    grid = t[0] + np.arange(n) / target
    grid = grid[grid <= t[-1]]
    out = {k: resample(t, v, grid) for k, v in present.items()}
    jitter = (
        f"time steps {1e3 * dt.min():.3g}-{1e3 * dt.max():.3g} ms (median {1e3 * median:.3g} ms)"
        if not uniform
        else f"uniform steps of {1e3 * median:.4g} ms"
    )
    return Resampled(
        t=grid,
        signals=out,
        rate=target,
        description=(
            f"resampled from {jitter} to a uniform {target:.6g} Hz grid ({grid.size} samples) by cubic-spline "
            "interpolation (not-a-knot) at the recorded time stamps, the same spline on every channel"
        ),
    )


def resample(t: np.ndarray, x: np.ndarray, t_new: np.ndarray) -> np.ndarray:
    """Cubic-spline values of ``x`` (N, ...) sampled at ``t`` on the times ``t_new`` (inside [t0, tN])."""
    return CubicSpline(t, x, axis=0, bc_type="not-a-knot")(t_new)
