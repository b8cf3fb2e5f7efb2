"""Sensors of the virtual robot: sampling, encoder quantisation, noise, jitter and delay; the measurement CSV.

What a sample holds (docs/interfaces.md section 3; all joint-side units, rad or m, N m or N):

* ``t``: the time stamp the controller writes, ``t_k = k / rate``. The plant was sampled at
  ``s_k = t_k - delay + j_k`` (``j_k`` ~ N(0, jitter^2), clipped to +-0.4 / rate so samples stay ordered).
* ``q_j``: link-side position. Rigid joint: read by the motor encoder, ``q + n`` quantised to
  ``2 pi / (encoder_counts * gear_ratio)``. Elastic joint: read by a link-side encoder, quantised to
  ``2 pi / link_encoder_counts`` (None: not quantised). ``n`` ~ N(0, q_noise^2).
* ``theta_j`` (optional; written by default when the robot has elastic joints): motor position divided by the
  gear ratio, read by the motor encoder (same noise and quantisation as above). Equal to ``q_j`` on rigid joints.
* ``tau_j``: the **drive torque the controller commands**, in joint units (motor torque times gear ratio), the
  value a real controller reports from its current loop, plus N(0, sigma_j^2) noise. For a rigid joint it
  equals ``(M(q) qdd + c + g)_j + tau_comp_j + Ia_j qdd_j + fv qd + fc tanh(qd/eps) + f0`` -- the friction the
  drive overcomes is included; for an elastic joint
  ``Ia theta_dd + f(thetad) + K (theta - q) + D (thetad - qd)``. ``sigma_j = tau_noise_j + tau_noise_relative *
  RMS_j`` (RMS of that joint's noise-free torque over the run).
* ``i_j`` (instead of or besides ``tau``): motor current ``tau_j / (torque_constant_j * gear_ratio_j)``, A.

Random numbers come from one ``numpy.random.Generator`` seeded by the caller, drawn in a fixed order (jitter,
position noise, motor position noise, torque noise), so a seed fixes the file bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.io.files import write_csv
from robid.model.robot_model import RobotModel

#: --noise LEVEL presets: (q_noise rad, tau_noise_relative fraction of each joint's RMS torque)
NOISE_LEVELS = {
    "none": (0.0, 0.0),
    "low": (1e-6, 0.002),
    "realistic": (1e-5, 0.01),
    "high": (1e-4, 0.03),
}
TORQUE_SIGNALS = ("torque", "current", "both")


@dataclass(frozen=True)
class SensorSettings:
    """What the virtual robot's controller records; see the module docstring for the exact meaning."""

    rate: float = 250.0  # Hz (a 4 ms controller cycle)
    encoder_counts: int | None = 16384  # per motor revolution (after quadrature/interpolation); None: ideal
    link_encoder_counts: int | None = 2**20  # per joint revolution, link-side encoders of elastic joints
    q_noise: float = 0.0  # rad (m) standard deviation on positions
    tau_noise: float | tuple[float, ...] = 0.0  # N m (N) standard deviation, scalar or per joint
    tau_noise_relative: float = 0.0  # extra standard deviation as a fraction of each joint's RMS torque
    jitter: float = 0.0  # s, standard deviation of the sampling instant
    delay: float = 0.0  # s, the values lag their time stamps
    torque_signal: str = "torque"  # torque | current | both
    motor_positions: bool | None = None  # write theta columns; None: when the robot has elastic joints

    def __post_init__(self) -> None:
        if not (self.rate > 0 and math.isfinite(self.rate)):
            raise RobidInputError(f"sensors: rate: must be a positive frequency in Hz, got {self.rate!r}")
        for name in ("q_noise", "tau_noise_relative", "jitter", "delay"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise RobidInputError(f"sensors: {name}: must be >= 0, got {value!r}")
        tau = np.atleast_1d(np.asarray(self.tau_noise, dtype=float))
        if not (np.all(tau >= 0) and np.all(np.isfinite(tau))):
            raise RobidInputError(f"sensors: tau_noise: must be >= 0, got {self.tau_noise!r}")
        for name in ("encoder_counts", "link_encoder_counts"):
            value = getattr(self, name)
            if value is not None and not (int(value) == value and value > 0):
                raise RobidInputError(f"sensors: {name}: must be a positive integer or None, got {value!r}")
        if self.torque_signal not in TORQUE_SIGNALS:
            raise RobidInputError(f"sensors: torque_signal: {self.torque_signal!r} is not one of {TORQUE_SIGNALS}")

    @staticmethod
    def with_noise_level(level: str, **kwargs) -> SensorSettings:
        """Settings with a named noise preset (``NOISE_LEVELS``); other fields from kwargs."""
        if level not in NOISE_LEVELS:
            raise RobidOptionError("noise", f"unknown level {level!r} (one of {', '.join(NOISE_LEVELS)})")
        q_noise, relative = NOISE_LEVELS[level]
        return SensorSettings(q_noise=q_noise, tau_noise_relative=relative, **kwargs)


@dataclass(frozen=True, eq=False)
class SensorRecording:
    """What is written to the file: (N, dof) arrays; ``theta`` and ``current`` None when not recorded."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None
    theta: np.ndarray | None
    current: np.ndarray | None
    tau_noise_std: np.ndarray  # (dof,) the torque noise standard deviation actually used, N m
    q_resolution: np.ndarray  # (dof,) quantisation step of q (0: none)
    theta_resolution: np.ndarray  # (dof,) quantisation step of theta (0: none)

    def columns(self) -> list[str]:
        n = self.q.shape[1]
        cols = ["t"] + [f"q{j + 1}" for j in range(n)]
        if self.tau is not None:
            cols += [f"tau{j + 1}" for j in range(n)]
        if self.current is not None:
            cols += [f"i{j + 1}" for j in range(n)]
        if self.theta is not None:
            cols += [f"theta{j + 1}" for j in range(n)]
        return cols

    def table(self) -> np.ndarray:
        parts = [self.t[:, None], self.q]
        parts += [x for x in (self.tau, self.current, self.theta) if x is not None]
        return np.hstack(parts)

    def write_csv(self, path: str | Path) -> Path:
        """The canonical measurement CSV (docs/interfaces.md section 3), 12 significant digits: below any encoder step
        and noise level."""
        return write_csv(path, self.columns(), self.table(), digits=12)


def current_factors(model: RobotModel) -> np.ndarray:
    """torque_constant * gear_ratio per joint (joint torque per ampere); RobidInputError naming a missing one."""
    factors = []
    for j in model.joints:
        if j.drive is None or not j.drive.torque_constant:
            raise RobidInputError(
                f"{model.source or model.name}: joint {j.name}: drive: torque_constant: needed to write currents"
            )
        factors.append(j.drive.torque_constant * j.drive.gear_ratio)
    return np.array(factors)


def sampling_instants(t: np.ndarray, settings: SensorSettings, rng: np.random.Generator) -> np.ndarray:
    """s_k = t_k - delay + jitter_k (jitter clipped to +-0.4 sample periods)."""
    s = t - settings.delay
    if settings.jitter > 0:
        bound = 0.4 / settings.rate
        s = s + np.clip(rng.normal(0.0, settings.jitter, t.shape), -bound, bound)
    return s


def resolutions(model: RobotModel, settings: SensorSettings) -> tuple[np.ndarray, np.ndarray]:
    """Quantisation steps of q and theta per joint (0 = not quantised)."""
    gear = np.array([j.drive.gear_ratio if j.drive is not None else 1.0 for j in model.joints])
    elastic = np.array([j.elasticity is not None for j in model.joints])
    motor = np.zeros(model.dof) if settings.encoder_counts is None else 2 * np.pi / (settings.encoder_counts * gear)
    link = (
        np.zeros(model.dof)
        if settings.link_encoder_counts is None
        else np.full(model.dof, 2 * np.pi / settings.link_encoder_counts)
    )
    return np.where(elastic, link, motor), motor


def quantise(x: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Round to the nearest multiple of step (per column; step 0 leaves the column as it is)."""
    safe = np.where(step > 0, step, 1.0)
    return np.where(step > 0, np.round(x / safe) * safe, x)


def measure(
    model: RobotModel,
    t: np.ndarray,
    q: np.ndarray,
    theta: np.ndarray,
    tau: np.ndarray,
    settings: SensorSettings,
    rng: np.random.Generator,
) -> SensorRecording:
    """Apply noise and quantisation to the true signals sampled at the instants of :func:`sampling_instants`.

    The caller draws the jitter first from the same generator, so the order of draws is fixed.
    """
    n = model.dof
    elastic = any(j.elasticity is not None for j in model.joints)
    q_res, theta_res = resolutions(model, settings)
    q_meas = quantise(q + rng.normal(0.0, 1.0, q.shape) * settings.q_noise, q_res)
    record_theta = elastic if settings.motor_positions is None else settings.motor_positions
    theta_noise = rng.normal(0.0, 1.0, theta.shape) * settings.q_noise
    is_elastic = np.array([j.elasticity is not None for j in model.joints])
    # a rigid joint's motor encoder is its position sensor: the same reading for q and theta
    theta_meas = np.where(is_elastic, quantise(theta + theta_noise, theta_res), q_meas)
    tau_abs = np.broadcast_to(np.asarray(settings.tau_noise, dtype=float), (n,))
    rms = np.sqrt(np.mean(tau**2, axis=0)) if tau.shape[0] else np.zeros(n)
    sigma = tau_abs + settings.tau_noise_relative * rms
    tau_meas = tau + rng.normal(0.0, 1.0, tau.shape) * sigma
    current = None
    if settings.torque_signal in ("current", "both"):
        current = tau_meas / current_factors(model)
    return SensorRecording(
        t=np.asarray(t, dtype=float),
        q=q_meas,
        tau=tau_meas if settings.torque_signal in ("torque", "both") else None,
        theta=theta_meas if record_theta else None,
        current=current,
        tau_noise_std=sigma,
        q_resolution=q_res,
        theta_resolution=theta_res,
    )
