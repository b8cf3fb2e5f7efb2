"""simulate(): run the virtual robot along a trajectory and record what its controller would log."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.simulation.plant import ControllerSettings, IntegratorSettings, IntegratorStats, Plant
from robid.simulation.reference import ReferenceMotion
from robid.simulation.sensors import SensorRecording, SensorSettings, current_factors, measure, sampling_instants
from robid.simulation.truth import true_parameters

DEFAULT_PERIODS = 2


@dataclass(frozen=True)
class SimulationSettings:
    """Everything that, with the robot file and the trajectory, fixes a simulation's output."""

    sensors: SensorSettings
    controller: ControllerSettings
    integrator: IntegratorSettings
    periods: float
    duration: float
    warmup: float
    seed: int | None
    trajectory_period: float
    rest_to_rest: bool


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """A virtual robot run. Arrays are (N, dof) over the N samples (N,) unless noted.

    ``t`` time stamps written to the file; ``t_sampled`` the instants the plant was sampled at (t - delay +
    jitter); ``q, qd, theta, thetad, tau`` the true (noise-free) link positions and velocities, motor positions
    and velocities (joint units; equal to q, qd on rigid joints) and commanded drive torques at ``t_sampled``;
    ``q_ref`` the reference there; ``measured`` what the file holds; ``truth`` the parameters the plant used
    (robid.simulation.truth); ``stats`` the integrator's counters.
    """

    robot: str
    joint_names: tuple[str, ...]
    t: np.ndarray
    t_sampled: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray
    tau: np.ndarray
    q_ref: np.ndarray
    measured: SensorRecording
    truth: dict[str, float]
    settings: SimulationSettings
    stats: IntegratorStats
    plant: Plant | None = field(default=None, repr=False)

    def accelerations(self) -> tuple[np.ndarray, np.ndarray]:
        """True link and motor accelerations (qdd, theta_dd) at ``t_sampled``, from the plant's equations of motion
        (thetadd = qdd on rigid joints). For tests that compare the recorded torque with an inverse model."""
        if self.plant is None:
            raise ValueError("this result carries no plant")
        states = np.hstack(
            [self.q, self.qd, self.theta[:, self.plant.elastic_index], self.thetad[:, self.plant.elastic_index]]
        )
        rates = np.array([self.plant.rhs(t, x) for t, x in zip(self.t_sampled, states, strict=True)])
        n, ne = self.q.shape[1], len(self.plant.elastic_index)
        qdd = rates[:, n : 2 * n] if rates.size else np.zeros_like(self.q)
        thetadd = qdd.copy()
        if ne and rates.size:
            thetadd[:, self.plant.elastic_index] = rates[:, 2 * n + ne :]
        return qdd, thetadd

    @property
    def tracking_error(self) -> np.ndarray:
        """max |q - q_ref| per joint over the run (rad or m)."""
        return np.abs(self.q - self.q_ref).max(axis=0) if self.q.shape[0] else np.zeros(self.q.shape[1])

    def truth_document(self) -> dict:
        """JSON-ready record of what the virtual robot used: parameters (docs/interfaces.md 1.3 names), noise, seed."""
        s = self.settings
        return {
            "robid": 1,
            "kind": "simulation-truth",
            "robot": self.robot,
            "joint_names": list(self.joint_names),
            "parameters": dict(self.truth),
            "coulomb_epsilon": s.integrator.coulomb_epsilon,
            "seed": s.seed,
            "q_noise_std": s.sensors.q_noise,
            "tau_noise_std": self.measured.tau_noise_std.tolist(),
        }

    def write_csv(self, path: str | Path) -> Path:
        """The canonical measurement file (docs/interfaces.md section 3), written atomically."""
        return self.measured.write_csv(path)


def _model(robot) -> RobotModel:
    if isinstance(robot, RobotModel):
        return robot
    model = getattr(robot, "model", None)  # a robid.Robot
    if isinstance(model, RobotModel):
        return model
    from robid.model.loader import read_robot

    return read_robot(robot)


def _trajectory(trajectory):
    if hasattr(trajectory, "derivative") and hasattr(trajectory, "period"):
        return trajectory
    inner = getattr(trajectory, "trajectory", None)  # a TrajectoryFile
    if inner is not None:
        return inner
    from robid.excitation.trajectory_file import load_trajectory

    return load_trajectory(trajectory).trajectory


def simulate(
    robot,
    trajectory,
    *,
    periods: float | None = None,
    duration: float | None = None,
    sensors: SensorSettings | None = None,
    controller: ControllerSettings | None = None,
    integrator: IntegratorSettings | None = None,
    seed: int | None = 0,
    warmup: float = 0.0,
) -> SimulationResult:
    """Simulate ``robot`` (RobotModel, robid.Robot, file or built-in name) following ``trajectory``
    (FourierTrajectory, TrajectoryFile or a trajectory JSON path).

    ``periods`` (default 2) periods of motion are commanded; a rest-to-rest trajectory then holds its centre.
    ``duration`` (default periods * T) is the recorded length: samples at k / rate for 0 <= k / rate < duration
    (the end point is left out so that whole periods stack). ``warmup`` seconds are simulated before t = 0 and
    not recorded. ``seed`` seeds the one random generator of the sensors.
    """
    sensors = SensorSettings() if sensors is None else sensors
    controller = ControllerSettings() if controller is None else controller
    integrator = IntegratorSettings() if integrator is None else integrator
    model = _model(robot)
    reference = _reference(_trajectory(trajectory), model, DEFAULT_PERIODS if periods is None else periods)
    if sensors.torque_signal != "torque":
        current_factors(model)  # fail before integrating
    duration = reference.duration if duration is None else float(duration)
    if not (duration > 0 and math.isfinite(duration)):
        raise RobidInputError(f"simulate: duration: must be positive, got {duration!r}")
    if not (warmup >= 0 and math.isfinite(warmup)):
        raise RobidInputError(f"simulate: warmup: must be >= 0, got {warmup!r}")
    settings = SimulationSettings(
        sensors,
        controller,
        integrator,
        reference.periods,
        duration,
        float(warmup),
        seed,
        reference.period,
        reference.rest_to_rest,
    )
    return _run(model, reference, settings)


def _reference(traj, model: RobotModel, periods: float) -> ReferenceMotion:
    """The commanded motion: ``periods`` periods of the trajectory (whole ones for a rest-to-rest design)."""
    if not (periods > 0 and math.isfinite(periods)):
        raise RobidInputError(f"simulate: periods: must be positive, got {periods!r}")
    reference = ReferenceMotion(traj, float(periods))
    if reference.rest_to_rest and float(periods) != round(periods):
        raise RobidInputError(f"simulate: periods: a rest-to-rest trajectory runs whole periods, got {periods!r}")
    if reference.dof != model.dof:
        raise RobidInputError(
            f"trajectory: center: has {reference.dof} joints, the robot {model.name!r} has {model.dof}"
        )
    return reference


def _run(model: RobotModel, reference: ReferenceMotion, settings: SimulationSettings) -> SimulationResult:
    """Sample times k / rate (k / rate < duration) and their jittered instants, integrate the closed loop from
    before the first instant (minus the warm-up) to the last, and record what the sensors give there."""
    sensors = settings.sensors
    count = max(1, math.ceil(settings.duration * sensors.rate - 1e-9))  # k / rate < duration
    t = np.arange(count) / sensors.rate
    rng = np.random.default_rng(settings.seed)
    s = sampling_instants(t, sensors, rng)
    t_start = min(0.0, float(s.min())) - settings.warmup
    t_end = max(settings.duration, float(s.max()))
    plant = Plant(model, reference, settings.controller, settings.integrator, t_start, t_end)
    sol, stats = plant.integrate()
    q, qd, theta, thetad = plant.split(sol.sol(s).T)
    tau = plant.motor_torque(s, q, qd, theta, thetad)
    q_ref = reference.derivatives(s, 0)[0]
    measured = measure(model, t, q, theta, tau, sensors, rng)
    names, truth = tuple(model.joint_names), true_parameters(model)
    return SimulationResult(
        model.name, names, t, s, q, qd, theta, thetad, tau, q_ref, measured, truth, settings, stats, plant
    )
