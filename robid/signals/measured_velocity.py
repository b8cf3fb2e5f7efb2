"""The controller's measured velocity on the processed grid: the velocity whose sign the Coulomb term takes.

Many controllers log a joint velocity of their own (UR ``actual_qd``, KUKA ``$VEL_ACT_MA``), computed from the
motor encoder at its full resolution and rate. At rest it is exactly zero, where the velocity robid
differentiates from the logged positions carries the noise of the position's quantisation (1e-4 rad on the UR10e
logs): its sign jumps from sample to sample, and a Coulomb term on it predicts up to +-0.7 fc of friction
torque on a joint that stands still. The sign of the measured velocity is the better estimate of the sign of the
true velocity (docs/identification.md, "Coulomb friction near zero velocity"); its magnitude is not used:
the inertial and viscous columns keep the processed, band-limited states (a controller velocity carries its own
filter and lag, different from the torque's band).

On the processed grid:

* one averaged period (mode ``periodic``): the mean over the averaged periods of the measured velocity at
  ``t + k T`` (the periods the average left out are left out here too); its noise std is that of one sample over
  sqrt(K);
* every other path: the measured velocity interpolated linearly at the processed times.

The noise std of one sample is :func:`robid.signals.noise.robust_white_std` on the uniform grid (blind to the
motion and to the steps of a reversal), and no less than the quantisation noise of the logged values,
step / sqrt(12) (:func:`robid.signals.noise.logged_step`: UR logs carry 4 decimals). The floor matters at
rest: a joint that stands still logs exact zeros, the robust estimate is then zero or the ringing of the
resampling spline (1e-90 rad/s), and a sign taken at that scale would be noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.defaults import PERIODIC
from robid.signals.noise import quantisation_variance, robust_white_std
from robid.signals.path_result import PathResult, format_values


@dataclass(frozen=True, eq=False)
class MeasuredVelocity:
    """``on_grid`` (N, dof) the measured velocity on the processed grid; ``whole`` (n, dof) on the uniform grid of
    the whole (windowed) record, for the non-periodic path's parallel filtering; ``std`` (dof,) the noise std
    of ``on_grid``; ``line`` the account's line."""

    on_grid: np.ndarray
    whole: np.ndarray
    std: tuple[float, ...]
    line: str


def measured_velocity(t: np.ndarray, qd: np.ndarray, result: PathResult, step: np.ndarray) -> MeasuredVelocity:
    """The measured velocity ``qd`` (n, dof) on the uniform grid ``t`` (n,) carried to the grid of ``result``;
    ``step`` (dof,) the step of the logged values (:func:`robid.signals.noise.logged_step`), module docstring."""
    t = np.asarray(t, dtype=float)
    qd = np.asarray(qd, dtype=float)
    robust = np.asarray(robust_white_std(qd), dtype=float) if qd.shape[0] > 3 else np.zeros(qd.shape[1])
    std_one = np.maximum(robust, np.sqrt(quantisation_variance(step)))
    if result.mode == PERIODIC and result.period is not None:
        total = result.n_periods + len(result.rejected)
        used = [k for k in range(total) if (k + 1) not in result.rejected]
        v = np.mean([_at(t, qd, result.t + k * result.period) for k in used], axis=0)
        std = std_one / np.sqrt(len(used))
        how = f"mean over the {len(used)} averaged periods"
    else:
        v = _at(t, qd, result.t)
        std = std_one
        how = "at the processed samples"
    line = (
        "Coulomb sign from the controller's measured velocity (" + how + "); its noise std per joint "
        + format_values(tuple(float(s) for s in std))
    )
    return MeasuredVelocity(on_grid=v, whole=qd, std=tuple(float(s) for s in std), line=line)


def _at(t: np.ndarray, qd: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Linear interpolation of every column of ``qd`` at ``times`` (held at the ends)."""
    return np.stack([np.interp(times, t, qd[:, j]) for j in range(qd.shape[1])], axis=1)
