"""The per-joint excitation floor: every joint's RMS velocity over the period at least a fraction of its velocity
limit, as inequality rows of the designer.

Why. A condition-number criterion ranks how evenly the trajectory excites the base parameters; it does not see
the data selection that follows. Coulomb friction is identified from sign(qd), so it needs velocity reversals
and |qd| clearly above the speed at which the identification keeps samples (``--min-speed``,
:data:`robid.defaults.DEFAULT_MIN_SPEED`): near standstill a real joint sticks, and those rows are left out. A
criterion that also weighs the raw condition number (``cond_both``) can buy a better number by shrinking a joint
whose columns are large in raw units (the TX200 3-axis arm's joint 3 went to 0.13 rad/s RMS), which starves
exactly those samples. The floor forbids it, independently of the criterion. Excitation design with bounded
amplitudes per joint as constraints: Presse and Gautier (1993), "New criteria of exciting trajectories for robot
identification", ICRA, and Swevers et al. (1997), IEEE TRA 13(5), section IV (the optimisation under motion
constraints).

The row. With the Swevers series of :mod:`robid.excitation.fourier`, qd_j(t) = sum_l a_jl cos(l w t) + b_jl
sin(l w t), so by Parseval the mean square velocity over one period is exactly

    rms_j^2 = (1/T) int_0^T qd_j(t)^2 dt = sum_l (a_jl^2 + b_jl^2) / 2 = ||X_j||^2 / 2,

a smooth quadratic of the coefficients X_j = [a_j, b_j] (no grid, no inter-sample error). In the rest-to-rest
coordinates X_j = z_j N^T of an orthonormal N, ||X_j|| = ||z_j||. The row, scaled to O(1), is

    g_j = rms_j^2 / f_j^2 - 1 >= 0,   dg_j/dX_j = X_j / f_j^2,

with f_j = ``fraction`` x v_j, v_j the joint's reachable speed (:func:`reachable_speed`): the velocity limit
where that binds, else the largest velocity amplitude a single harmonic of the period can have within the joint's
position range around the centre, acceleration and jerk limits (the designer's, narrowed by the margin). The
velocity limit alone is no reference: the UR10e wrist's 2 pi rad/s cannot be approached within its published
acceleration limits in a 20 s period. The set {g >= 0} is not convex (the outside of a ball), so a start may
begin below it: the starts are lifted onto it first and SLSQP linearises the row (robid.excitation.optimiser).
A sinusoid of RMS r spends the fraction 1 - (2/pi) arcsin(s / (r sqrt 2)) of its period above the speed s: at
r = 0.2 x 1.8 rad/s (joint 3 of the TX200 3-axis arm in a 4 s period) and s = 0.1 rad/s that is 87 %; at
r = 0.13 rad/s, 63 %.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from robid.excitation.starts import largest_feasible_scale

#: default floor: the RMS velocity of every joint over one period at least this fraction of its reachable speed
#: (:func:`reachable_speed`; docs/excitation.md "Excitation floor")
DEFAULT_MIN_RMS_VELOCITY = 0.2


def rms_velocity(x_all: np.ndarray) -> np.ndarray:
    """RMS of qd_j over one period for the coefficients X (dof, 2H) = [a, b] (Parseval: sqrt(sum (a^2 + b^2) / 2))."""
    x_all = np.asarray(x_all, dtype=float)
    return np.sqrt(0.5 * np.sum(x_all * x_all, axis=1))


def reachable_speed(
    position: np.ndarray,
    velocity: np.ndarray,
    acceleration: np.ndarray,
    jerk: np.ndarray,
    center: np.ndarray,
    period: float,
    harmonics: int,
) -> np.ndarray:
    """v_j = max over l = 1..H of min(velocity_j, l w R_j, acceleration_j / (l w), jerk_j / (l w)^2), w = 2 pi / T,
    R_j the distance from the centre to the nearer position limit: the largest velocity amplitude of a single
    harmonic l w of joint j within its limits (q = (v / (l w)) sin(l w t): position amplitude v / (l w),
    acceleration v l w, jerk v (l w)^2). inf where no limit bounds it. (dof,) arrays; position (dof, 2)."""
    position = np.asarray(position, dtype=float).reshape(-1, 2)
    center = np.asarray(center, dtype=float).reshape(-1)
    reach = np.minimum(center - position[:, 0], position[:, 1] - center)  # inf for an unlimited joint
    lw = np.arange(1, harmonics + 1) * (2.0 * np.pi / period)  # (H,)
    per_harmonic = np.minimum.reduce([
        np.broadcast_to(np.asarray(velocity, dtype=float)[:, None], (center.size, lw.size)),
        reach[:, None] * lw[None, :],
        np.asarray(acceleration, dtype=float)[:, None] / lw[None, :],
        np.asarray(jerk, dtype=float)[:, None] / lw[None, :] ** 2,
    ])
    return per_harmonic.max(axis=1)


def floor_speeds(fraction: float, reachable: np.ndarray) -> np.ndarray:
    """f_j = ``fraction`` x v_j (:func:`reachable_speed`); 0 (no floor) where v_j is not finite or positive, or
    the fraction is 0."""
    v = np.asarray(reachable, dtype=float).reshape(-1)
    ok = np.isfinite(v) & (v > 0.0)
    return np.where(ok, fraction * np.where(ok, v, 0.0), 0.0)


class VelocityFloor:
    """The rows g_j = rms_j^2 / f_j^2 - 1 >= 0 of the joints with f_j > 0 (module docstring)."""

    def __init__(self, floor: np.ndarray):
        self.floor = np.asarray(floor, dtype=float).reshape(-1)
        self.joints = np.flatnonzero(self.floor > 0.0)

    @property
    def rows(self) -> int:
        return int(self.joints.size)

    def values(self, x_all: np.ndarray) -> np.ndarray:
        """g (rows,) at the coefficients X (dof, 2H)."""
        x = np.asarray(x_all, dtype=float)[self.joints]
        return 0.5 * np.sum(x * x, axis=1) / self.floor[self.joints] ** 2 - 1.0

    def jacobian(self, x_all: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
        """dg/dX (rows, dof * 2H), or dg/dZ (rows, dof * r) for X_j = Z_j ``null``^T when ``null`` (2H, r) is
        given."""
        x_all = np.asarray(x_all, dtype=float)
        dof, width = x_all.shape
        local = x_all[self.joints] / self.floor[self.joints, None] ** 2  # (rows, 2H)
        if null is not None:
            local = local @ null
            width = null.shape[1]
        jac = np.zeros((self.rows, dof, width))
        jac[np.arange(self.rows), self.joints, :] = local
        return jac.reshape(self.rows, dof * width)

    def met(self, x_all: np.ndarray, tolerance: float = 0.0) -> bool:
        """Every floored joint's RMS velocity >= (1 - tolerance) f_j."""
        if not self.rows:
            return True
        rms = rms_velocity(np.asarray(x_all, dtype=float)[self.joints])
        return bool(np.all(rms >= (1.0 - tolerance) * self.floor[self.joints]))

    def worst_ratio(self, x_all: np.ndarray) -> float:
        """min over the floored joints of RMS velocity_j / f_j at the coefficients X (inf without a floor)."""
        rms = rms_velocity(np.asarray(x_all, dtype=float)[self.joints])
        return float(np.min(rms / self.floor[self.joints], initial=math.inf))

    def missed(self, x_all: np.ndarray, names: Sequence[str], fraction: float, starts: int) -> str:
        """The one-line error when none of ``starts`` starts reached the floor, naming the joints of the closest
        start X that stay below it."""
        rms = rms_velocity(x_all)
        low = [f"{names[j]} {rms[j]:.3g} < {self.floor[j]:.3g}" for j in self.joints if rms[j] < self.floor[j]]
        return (
            f"min_rms_velocity: none of the {starts} starts reached the excitation floor ({fraction:g} x the "
            f"reachable speed, RMS over the period) on every joint (closest start: {', '.join(low)} rad/s); lower "
            "min_rms_velocity (0 turns it off), widen the position or acceleration limits, or shorten the period"
        )


def lift_to_floor(
    z: np.ndarray,
    floor: VelocityFloor,
    coefficients: Callable[[np.ndarray], np.ndarray],
    feasible: Callable[[np.ndarray], bool],
    null: np.ndarray,
    harmonics: int,
    rng: np.random.Generator,
    target: float = 1.05,
    redraws: int = 20,
) -> np.ndarray:
    """A starting point z (dof, r) (drawn against the limits only; X = ``coefficients(z)``) with every joint whose
    RMS velocity is below ``target`` x its floor raised to it, one joint after the other, ``feasible`` kept: the
    joint's coordinates scaled up (bisection on the joint's own factor), and if its direction hits a limit first,
    up to ``redraws`` new directions of that joint from ``rng`` (the same 1/l scaling as the draws of
    :mod:`robid.excitation.starts`), each scaled likewise; the first that reaches the target wins, else the one
    that came closest. SLSQP linearises the floor's rows (a non-convex set) and fails to leave a start deep below
    it ("positive directional derivative"), so the start begins on the floor wherever the limits allow one joint
    to reach it alone."""
    z = np.array(z, dtype=float)
    scale = np.concatenate([np.arange(1, harmonics + 1), np.arange(1, harmonics + 1)]).astype(float)
    for j in floor.joints:
        need = target * floor.floor[j]
        if rms_velocity(coefficients(z))[j] >= need:
            continue

        def raised(zj: np.ndarray, j=j, need=need) -> tuple[float, np.ndarray]:
            """(RMS velocity, coordinates) of joint j's direction zj scaled as far as the limits allow, up to the
            target."""
            trial = z.copy()

            def feasible_at(v: np.ndarray) -> bool:
                trial[j] = float(v[0]) * zj
                return feasible(trial)

            norm_rms = float(np.linalg.norm(zj)) / math.sqrt(2.0)  # RMS velocity of zj (Parseval)
            if norm_rms == 0.0:
                return 0.0, zj
            alpha = largest_feasible_scale(feasible_at, np.ones(1), upper=need / norm_rms)
            return alpha * norm_rms, alpha * zj

        best = raised(z[j])
        for _ in range(redraws if best[0] < need else 0):
            candidate = raised((rng.standard_normal(2 * harmonics) / scale) @ null)
            if candidate[0] > best[0]:
                best = candidate
            if best[0] >= need * (1.0 - 1e-9):
                break
        z[j] = best[1]
    return z
