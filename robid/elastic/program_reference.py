"""The motor-side reference a controller program commands for an elastic robot (``robid export --motor-side``).

A controller that closes its position loops on the motor encoders tracks the motor positions theta (motor angle /
gear ratio, joint units). For the links to follow the designed q(t) it must be commanded the theta(t) of
:func:`robid.elastic.motor_reference.motor_reference` (Spong's reduced model, Lismonde 2020 section 2.2): on every
elastic joint K (theta - q) + D_s (thetad - qd) = tau_L, i.e. theta = q + K^-1 tau_L without spring damping; on a
rigid joint theta = q.

:class:`MotorSidePath` is that reference as the exporters' :class:`~robid.excitation.programs.common.CommandedPath`,
on the program's timeline (:mod:`robid.excitation.programs.common`):

* a rest-to-rest design run ``periods`` periods from standstill: ``motor_reference`` of the series with
  ``periods`` (per harmonic, plus the decay from the standstill deflection), exact at any time;
* the excited periods of a periodic design (CSV): the periodic steady state, per harmonic, exact;
* a periodic design with its fade-in and fade-out (KRL, RAPID): the faded path (C4) given as a ``SampledPath`` on a
  grid of step <= FINE_STEP with the fade junctions on nodes (plus the motors' settling after it), integrated from
  standstill; between nodes the quintic Hermite interpolant of theta, thetad, thetadd (error <= h^6
  max|theta^(6)| / 46080);
* URScript (rest-to-rest only): the deflection's periodic steady state as a Fourier series (DFT of the per-harmonic
  solution; harmonics dropped while their amplitudes sum to at most SERIES_TOLERANCE per joint) folded into the
  design's series, plus c decay^k per tick, decay = e^{-K DT / D_s} on damped joints, with c putting theta(0) on the
  standstill value (the homogeneous solution of the from-rest reference).

What the caller must know (torque steps of a C3 path, motors not settled when the program ends) is collected in
``warnings``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from robid.elastic.motor_reference import (
    SETTLING_TIME_CONSTANTS,
    MotorReference,
    SampledPath,
    hermite_basis,
    motor_reference,
)
from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.programs.common import DEG, CommandedSeries, timeline_derivative

#: largest grid step of the faded path's time-domain reference, s
FINE_STEP = 1e-3
#: the URScript deflection series drops harmonics while their amplitudes sum to at most this, rad (m) per joint
SERIES_TOLERANCE = 1e-10
#: the motors count as settled at the end of a program within this, rad (m): below one count of a 20-bit motor
#: encoder behind a 100:1 gear (6e-8 rad)
SETTLED = 1e-8
#: samples per period of the deflection's DFT: from the first power of 2 >= max(MIN_SAMPLES, 64 H), doubled until
#: the top eighth of the spectrum is below SPECTRUM_TAIL of its peak, at most MAX_SAMPLES
MIN_SAMPLES = 256
MAX_SAMPLES = 2**18
SPECTRUM_TAIL = 1e-15


class MotorSidePath:
    """Motor-side positions theta of ``robot`` (a RobotModel, or a robot file / built-in name) for the design
    ``trajectory`` (module docstring). ``robot_label``: how the user named the robot (for the comments)."""

    label = "motor-side"

    def __init__(self, robot, trajectory: FourierTrajectory, robot_label: str | None = None):
        from robid.model.loader import read_robot
        from robid.model.robot_model import RobotModel

        model = robot if isinstance(robot, RobotModel) else read_robot(robot)
        self.model = model
        self.robot_label = robot_label or (str(robot) if isinstance(robot, str | Path) else model.name)
        if not isinstance(trajectory, FourierTrajectory):
            raise RobidInputError(f"trajectory: expected a Fourier series design, got {type(trajectory).__name__}")
        self.trajectory = trajectory
        joints = model.joints
        self.elastic = np.array([j.elasticity is not None for j in joints])
        if not self.elastic.any():
            raise RobidInputError(
                f"robot {self.robot_label}: no elastic joint (no elasticity in the robot file), so the motor "
                "positions are the link positions"
            )
        self.stiffness = np.array([j.elasticity.stiffness if j.elasticity is not None else 0.0 for j in joints])
        self.damping = np.array([j.elasticity.damping if j.elasticity is not None else 0.0 for j in joints])
        self.warnings: list[str] = []
        names, default = tuple(trajectory.joint_names), tuple(f"q{j + 1}" for j in range(trajectory.dof))
        if names != default and trajectory.dof == model.dof and names != tuple(model.joint_names):
            self._warn(
                f"the trajectory's joints ({', '.join(names)}) are not named as the robot's "
                f"({', '.join(model.joint_names)}): matched by position"
            )
        # validates the robot against the trajectory (joints, rotor inertia, smoothness) and keeps the warnings
        self._keep(motor_reference(model, trajectory, t=np.array([0.0]), periods=1))
        self._faded_cache: dict[tuple[int, int], tuple[np.ndarray, MotorReference]] = {}
        self._settled: set[tuple[int, int]] = set()

    # ---- CommandedPath ---------------------------------------------------------------------------------------
    def positions(self, t: np.ndarray, periods: int, lead: int) -> np.ndarray:
        """theta on the program's timeline at program times ``t`` (N, dof)."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if lead == 0:
            if not self.trajectory.rest_to_rest:
                raise ValueError("a periodic design runs with fades: lead >= 1")
            self._check_settled(periods)
            return self._keep(motor_reference(self.model, self.trajectory, t=t, periods=periods)).theta
        grid, ref = self._faded(periods, lead)
        return _hermite(grid, (ref.theta, ref.thetad, ref.thetadd), t)

    def excited(self, t: np.ndarray) -> list[np.ndarray]:
        """[theta, thetad, thetadd] of the excited periods from t = 0: from standstill for a rest-to-rest design
        (run for as many periods as ``t`` spans), the periodic steady state otherwise."""
        t = np.asarray(t, dtype=float).reshape(-1)
        traj = self.trajectory
        if traj.rest_to_rest:
            periods = max(1, int(math.floor(float(np.max(t, initial=0.0)) / traj.period)) + 1)
            self._check_settled(periods)
            ref = motor_reference(self.model, traj, t=t, periods=periods)
        else:
            ref = motor_reference(self.model, traj, t=t)
        ref = self._keep(ref)
        return [np.array(ref.theta), np.array(ref.thetad), np.array(ref.thetadd)]

    def series(self, dt: float) -> CommandedSeries:
        """theta of a rest-to-rest design as the URScript series (module docstring)."""
        traj = self.trajectory
        if not traj.rest_to_rest:
            raise ValueError("the motor-side series needs a rest-to-rest design")
        d = self._deflection_spectrum()
        magnitude = np.abs(d[1:])
        tails = np.cumsum(magnitude[::-1], axis=0)[::-1]  # tails[h - 1]: sum of the amplitudes from harmonic h on
        kept = np.flatnonzero(np.any(tails > SERIES_TOLERANCE, axis=1))
        top = int(kept[-1]) + 1 if kept.size else 0
        h = max(traj.harmonics, top)
        ls = np.arange(1, traj.harmonics + 1) * traj.omega
        sa, sb = np.zeros((traj.dof, h)), np.zeros((traj.dof, h))
        sa[:, : traj.harmonics], sb[:, : traj.harmonics] = traj.a / ls, traj.b / ls
        # delta = Re d_0 + sum_h Re d_h cos(h w t) - Im d_h sin(h w t); theta = q - delta
        sa[:, :top] += d[1 : top + 1].imag.T
        sb[:, :top] += d[1 : top + 1].real.T
        center = traj.center - d[0].real
        rest = self._keep(motor_reference(self.model, traj, t=np.array([0.0]), periods=1)).deflection[0]
        start = -(rest - (d[0].real + d[1 : top + 1].real.sum(axis=0)))
        damped = self.elastic & (self.damping > 0)
        rate = np.where(damped, self.stiffness / np.where(damped, self.damping, 1.0), np.inf)
        decay = np.where(damped, np.exp(-rate * dt), 0.0)
        note = (
            f"series: the design's {traj.harmonics} harmonics minus the deflection's periodic steady state ({top} "
            f"harmonics, the dropped ones sum to <= {SERIES_TOLERANCE:g} rad per joint), plus DE * DECAY^k: the "
            "decay from the standstill deflection (DECAY = exp(-K DT / D_s) on damped joints, 0 elsewhere)"
        )
        return CommandedSeries(center, sa, sb, np.where(self.elastic, start, 0.0), decay, note)

    def comments(self, deviation: np.ndarray) -> list[str]:
        names = self.model.joint_names
        elastic = [j for j in range(self.model.dof) if self.elastic[j]]
        rigid = [names[j] for j in range(self.model.dof) if not self.elastic[j]]
        springs = "; ".join(f"{names[j]} K {self.stiffness[j]:.6g}, D_s {self.damping[j]:.6g}" for j in elastic)
        lines = [
            "MOTOR-SIDE REFERENCE (robid export --motor-side): the joint values are the motor positions theta "
            "(motor angle / gear ratio, joint units) that make the links follow the designed trajectory q, not q",
            "motor-side reference: theta = q + K^-1 tau_link with the spring damping D_s: K (theta - q) + D_s "
            "(thetad - qd) = tau_link = M(q) qdd + C qd + G(q) + D_l qd (G with the gravity compensators), from "
            "standstill at the start (Spong reduced model; robid.elastic.motor_reference, Lismonde 2020 section 2.2)",
            f"robot {self.model.name} ({self.robot_label}); stiffness K and spring damping D_s (SI): {springs}"
            + (f"; rigid joints (theta = q): {', '.join(rigid)}" if rigid else ""),
            "max deflection |theta - q| per joint over the program's samples: "
            + ", ".join(f"{names[j]} {deviation[j]:.3g} rad ({deviation[j] * DEG:.3g} deg)" for j in elastic),
        ]
        return lines + [f"motor-side warning: {w}" for w in self.warnings]

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def _keep(self, ref: MotorReference) -> MotorReference:
        for w in ref.warnings:
            self._warn(w)
        return ref

    @property
    def _time_constant(self) -> float:
        damped = self.elastic & (self.damping > 0)
        return float(np.max(np.where(damped, self.damping / np.where(damped, self.stiffness, 1.0), 0.0)))

    def _settle_warning(self, end: float, theta_end: np.ndarray, theta_final: np.ndarray) -> None:
        gap = np.abs(theta_end - theta_final)
        if float(np.max(gap)) > SETTLED:
            worst = int(np.argmax(gap))
            self._warn(
                f"the motors have not settled when the program ends (t = {end:g} s): {self.model.joint_names[worst]} "
                f"is {gap[worst]:.3g} rad from its final standstill position (spring damping time constant "
                f"{self._time_constant:.3g} s); the controller holds the last commanded position"
            )

    def _check_settled(self, periods: int) -> None:
        if (periods, 0) in self._settled or self._time_constant == 0.0:
            return
        self._settled.add((periods, 0))
        end = periods * self.trajectory.period
        after = end + 2.0 * SETTLING_TIME_CONSTANTS * self._time_constant
        ref = motor_reference(self.model, self.trajectory, t=np.array([end, after]), periods=periods)
        self._settle_warning(end, ref.theta[0], ref.theta[1])

    def _faded(self, periods: int, lead: int) -> tuple[np.ndarray, MotorReference]:
        """The reference of the faded timeline on its grid (cached per periods and lead)."""
        key = (periods, lead)
        if key not in self._faded_cache:
            traj = self.trajectory
            per_period = max(1, math.ceil(traj.period / FINE_STEP))
            step = traj.period / per_period
            nodes = (periods + 2 * lead) * per_period
            settle = math.ceil(SETTLING_TIME_CONSTANTS * self._time_constant / step)
            grid = np.arange(nodes + (settle + 1 if settle else 0) + 1) * step
            path = SampledPath(grid, tuple(timeline_derivative(traj, grid, periods, lead, k) for k in range(5)))
            ref = self._keep(motor_reference(self.model, path))
            if settle:
                self._settle_warning(float(grid[nodes]), ref.theta[nodes], ref.theta[-1])
            self._faded_cache[key] = (grid, ref)
        return self._faded_cache[key]

    def _deflection_spectrum(self) -> np.ndarray:
        """Complex amplitudes d_h (H_d + 1, dof) of the periodic steady-state deflection delta(t) = Re sum_h d_h
        e^{j h w t}: DFT of the per-harmonic solution (module docstring)."""
        traj = self.trajectory
        steady = FourierTrajectory(traj.period, traj.center, traj.a, traj.b, None, traj.joint_names)
        n = 1 << (max(MIN_SAMPLES, 64 * traj.harmonics) - 1).bit_length()
        while n <= MAX_SAMPLES:
            ref = self._keep(motor_reference(self.model, steady, t=np.arange(n) * (traj.period / n)))
            d = np.fft.rfft(ref.deflection, axis=0) / n
            d[1:] *= 2.0
            magnitude = np.abs(d)
            if np.all(magnitude[n // 8 :] <= SPECTRUM_TAIL * max(float(magnitude.max()), 1e-300)):
                return d[: n // 8]
            n *= 2
        raise RobidInputError(
            f"trajectory: the deflection keeps harmonics beyond {MAX_SAMPLES // 8} of the period; a smoother or "
            "slower design is needed for a URScript motor-side program"
        )


def _hermite(grid: np.ndarray, data: tuple[np.ndarray, np.ndarray, np.ndarray], t: np.ndarray) -> np.ndarray:
    """Quintic Hermite interpolant of (value, rate, second rate) given at ``grid`` nodes, at ``t`` (N, dof); exact
    at the nodes, the end values held outside."""
    value, rate, second = data
    t = np.clip(t, grid[0], grid[-1])
    i = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, grid.size - 2)
    h = (grid[i + 1] - grid[i])[:, None]
    u = ((t - grid[i])[:, None]) / h
    basis = np.moveaxis(hermite_basis(u), -1, 0)  # six (N, 1) arrays
    j = i + 1
    return (
        basis[0] * value[i]
        + basis[1] * h * rate[i]
        + basis[2] * h * h * second[i]
        + basis[3] * value[j]
        + basis[4] * h * rate[j]
        + basis[5] * h * h * second[j]
    )
