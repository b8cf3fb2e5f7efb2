"""Joint stiffness from link and motor encoders, with the time offset between the two encoders estimated.

The spring of an elastic joint carries the link-side torque (Spong's model; Zollo et al. 2015, eq. 2-6)::

    K (q - theta) + D (qd - thetad) = -tau_link(q, qd, qdd)

tau_link the rigid-body (and compensator) torque of the link side. Two effects hide it in real recordings:

* **Encoder time offset.** The link ("secondary") and motor encoders are often read at different instants of the
  controller cycle: a reading of q delayed by ``lag`` looks like a deflection ``-lag * thetad``. On the KUKA KR300
  recordings (Weigand et al. 2021) this term is 3.0-3.1 ms on every axis and every run, and it makes 90 % of the
  recorded motor-link difference (0.03-0.04 deg): the elastic part is about 0.003 deg.
* **Offsets.** Both encoders may be referenced at the start of the record, so the deflection is known up to a
  constant (the static deflection at the start, K^-1 times the torque there).

Per joint, robid fits (docs/elastic.md section "Stiffness from link and motor encoders")::

    q(t) - theta(t - lag) = c_run - (tau_link(t) + D (qd - thetad)) / K           (D optional, default 0)

with ``c_run`` one offset per run, ``lag`` and ``1/K`` common to all runs, and, when the run gives the link
acceleration, a free column ``beta_run * qdd`` per run that absorbs an error of the model's inertia about the
joint's own axis (``beta = (M_jj,model - M_jj,true) / K``). K then rests on the parts of the link torque that are
not the joint's own inertia (gravity, compensator, velocity and coupling terms), which a CAD model knows better. On the
KR300, beta changes sign from run to run: it absorbs more than an inertia error, so it is fitted per run.
``tau_link`` comes from a rigid-body model (nominal or identified values) of the link side. The motor position is
delayed exactly (cubic spline of each run, samples within |lag| of the ends left out); for a given lag the rest is
linear least squares, and the lag minimises the residual (a grid over +-``max_lag`` refined by a bounded scalar
search). A Taylor column
(``lag * thetad``) would not do: on the KR300 the elastic deflection is 5e-5 rad, the size of the second-order
term of a 3 ms delay at 1 rad/s^2. K = 1 / (fitted 1/K); its standard deviation by the delta method at the fitted
lag, with the residual's serial correlation counted (variance inflation ``1 + 2 sum rho(k)``,
robid.estimation.compensator.refinement.serial_inflation). The spread of K over runs fitted one by one is reported
beside it: it is the honest uncertainty when the model's link torque is only approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError


@dataclass(frozen=True)
class JointStiffness:
    """Stiffness of one joint: pooled over runs (``stiffness``, ``std``), the encoder ``lag`` (s, positive when
    the link encoder reads later than the motor encoder) with its std, the elastic and the total rms deflection,
    and the per-run stiffness values (``per_run``)."""

    joint: str
    stiffness: float
    std: float
    lag: float
    lag_std: float
    elastic_rms: float
    deflection_rms: float
    residual_rms: float
    per_run: tuple[float, ...]

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.stiffness)

    def summary(self, reference: float | None = None) -> str:
        text = (
            f"{self.joint}: K = {self.stiffness:.4g} +- {self.std:.2g} N m/rad ({self.relative_std_percent:.2g} %); "
            f"runs one by one {', '.join(f'{k:.3g}' for k in self.per_run)}; encoder lag "
            f"{1e3 * self.lag:.3f} +- {1e3 * self.lag_std:.3f} ms; elastic deflection rms "
            f"{np.degrees(self.elastic_rms):.4f} deg of {np.degrees(self.deflection_rms):.4f} deg recorded"
        )
        if reference is not None:
            text += f"; reference {reference:.4g} ({100 * (self.stiffness / reference - 1):+.1f} %)"
        return text


@dataclass(frozen=True)
class StiffnessRun:
    """One run of one joint on a uniform time grid ``t``: link position q, motor position theta (joint units), the
    link velocity qd, the link torque tau_link of the model, and optionally the link acceleration qdd (then the
    inertia column of the module docstring is fitted), all (N,). The motor velocity is that of the delayed motor
    position (its spline)."""

    t: np.ndarray
    q: np.ndarray
    theta: np.ndarray
    qd: np.ndarray
    tau_link: np.ndarray
    qdd: np.ndarray | None = None


#: s: the encoder time offsets searched
MAX_LAG = 0.02


def joint_stiffness(joint: str, runs: list[StiffnessRun], damping: float = 0.0,
                    max_lag: float = MAX_LAG) -> JointStiffness:
    """Fit K and the encoder lag of one joint over ``runs`` (module docstring); ``damping`` the spring damping D
    (N m s/rad) taken as known."""
    if not runs:
        raise RobidInputError(f"{joint}: no run to fit the stiffness on")
    lag, lag_std = _best_lag(runs, damping, max_lag)
    stiffness, std, elastic, residual = _fit(runs, damping, lag, joint)
    per_run = tuple(_fit([r], damping, _best_lag([r], damping, max_lag)[0], joint)[0] for r in runs)
    deflection = np.concatenate([(d := np.asarray(r.q) - np.asarray(r.theta)) - d.mean() for r in runs])
    deflection_rms = float(np.sqrt(np.mean(deflection**2)))  # about each run's own mean
    return JointStiffness(joint, stiffness, std, lag, lag_std, elastic, deflection_rms, residual, per_run)


def _system(runs: list[StiffnessRun], damping: float, lag: float):
    """(A, y) of the linear problem at a given lag: per-run offsets and the -load column."""
    from scipy.interpolate import CubicSpline

    rows, targets = [], []
    for k, r in enumerate(runs):
        t, q, th, qd, tau = (np.asarray(x, dtype=float) for x in (r.t, r.q, r.theta, r.qd, r.tau_link))
        inside = (t - lag >= t[0]) & (t - lag <= t[-1])
        spline = CubicSpline(t, th)
        th_lag = spline(t[inside] - lag)
        thd_lag = spline(t[inside] - lag, 1)
        offsets = np.zeros((int(inside.sum()), len(runs)))
        offsets[:, k] = 1.0
        load = tau[inside] + damping * (qd[inside] - thd_lag)  # -K (q - theta) = load
        inertia = np.zeros((offsets.shape[0], len(runs) if r.qdd is not None else 0))
        if r.qdd is not None:
            inertia[:, k] = np.asarray(r.qdd, dtype=float)[inside]
        rows.append(np.column_stack([offsets, inertia, -load]))
        targets.append(q[inside] - th_lag)
    return np.concatenate(rows), np.concatenate(targets)


def _solve(a: np.ndarray, y: np.ndarray):
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    x, *_ = np.linalg.lstsq(a / scale, y, rcond=None)
    x = x / scale
    return x, y - a @ x


def _best_lag(runs, damping: float, max_lag: float) -> tuple[float, float]:
    """The lag minimising the mean squared residual, and its std from the curvature of that profile."""
    from scipy.optimize import minimize_scalar

    def cost(lag):
        a, y = _system(runs, damping, lag)
        return float(np.mean(_solve(a, y)[1] ** 2))

    h = float(np.median(np.diff(np.asarray(runs[0].t, dtype=float))))
    grid = np.arange(-max_lag, max_lag + 0.5 * h / 4, h / 4)
    best = grid[int(np.argmin([cost(g) for g in grid]))]
    lag = float(minimize_scalar(cost, bounds=(best - h / 4, best + h / 4), method="bounded",
                                options={"xatol": 1e-7}).x)
    # profile curvature: cost(lag) ~ s2 (1 + (lag - lag0)^2 / var * 1/n_eff); delta method on the residual
    step = 1e-5
    c0, cp, cm = cost(lag), cost(lag + step), cost(lag - step)
    curvature = (cp - 2 * c0 + cm) / step**2
    a, y = _system(runs, damping, lag)
    from robid.estimation.compensator.refinement import serial_inflation

    kappa = float(serial_inflation(_solve(a, y)[1][:, None])[0])
    n = y.size
    var = 2.0 * c0 * kappa / (n * curvature) if curvature > 0 else np.inf
    return lag, float(np.sqrt(var))


def _fit(runs: list[StiffnessRun], damping: float, lag: float, joint: str):
    """(K, std K, rms of the elastic part, rms residual) of the pooled least squares at ``lag``."""
    from robid.estimation.compensator.refinement import serial_inflation

    a, y = _system(runs, damping, lag)
    x, residual = _solve(a, y)
    dof = max(y.size - a.shape[1], 1)
    kappa = float(serial_inflation(residual[:, None])[0])
    cov = kappa * (residual @ residual / dof) * np.linalg.pinv(a.T @ a)
    inv_k, var_inv = x[-1], cov[-1, -1]
    if not inv_k > 0:
        raise RobidInputError(
            f"{joint}: stiffness: the deflection does not follow the link torque as a spring would (fitted 1/K = "
            f"{inv_k:.3g}); check the sign of the motor positions and the link torque model"
        )
    stiffness = 1.0 / inv_k
    std = float(np.sqrt(max(var_inv, 0.0))) / inv_k**2
    elastic = float(np.std(a[:, -1] * inv_k))
    return stiffness, std, elastic, float(residual.std())
