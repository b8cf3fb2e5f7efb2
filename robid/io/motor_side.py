"""Motor-side signals to the joint side, as a mapping describes them (docs/signals.md section 2).

The transmission matrix N maps joint to motor positions, theta_motor = N q (+ const), so that by the
principle of virtual work the joint torques are tau = N^T tau_motor. N is diagonal (gear ratios) for serial
gears, with off-diagonal entries for coupled axes (e.g. a coupled wrist, theta_m6 = r (q5 + q6)).
Motor currents i become torques either through drive gains K (joint torque per ampere, tau = K i) or through
motor torque constants k_T and the transmission (tau = N^T (k_T i)).
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.io.mapping import ChannelMapping, Group
from robid.model.robot_model import RobotModel


class TransmissionMatrix:
    """The motor-to-joint matrix N of a mapping (theta_motor = N q, tau = N^T tau_motor), built on first use
    from the mapping's gear ratios, coupling or full matrix, or from the robot file's drive gear ratios."""

    def __init__(self, mapping: ChannelMapping, robot: RobotModel | None, n: int) -> None:
        self.spec = mapping.transmission
        self.robot = robot
        self.n = n
        self.where = mapping.source
        self._matrix: np.ndarray | None = None

    def matrix(self, where: str) -> np.ndarray:
        if self._matrix is not None:
            return self._matrix
        spec = self.spec
        if spec.matrix is not None:
            m = np.array(spec.matrix, dtype=float)
            if m.shape != (self.n, self.n):
                raise RobidInputError(f"{self.where}: transmission.matrix: shape {m.shape}, expected {self.n}x{self.n}")
        else:
            if spec.gear_ratios == "robot":
                ratios = self.robot_values("gear_ratio", where)
            else:
                ratios = np.asarray(spec.gear_ratios, dtype=float)
                if ratios.size != self.n:
                    raise RobidInputError(
                        f"{self.where}: transmission.gear_ratios: {ratios.size} values for {self.n} joints"
                    )
            m = np.diag(ratios)
            for motor, joint, ratio in spec.coupling:
                if motor > self.n or joint > self.n:
                    raise RobidInputError(
                        f"{self.where}: transmission.coupling: [{motor}, {joint}, ...] beyond {self.n} joints"
                    )
                m[motor - 1, joint - 1] = ratio
        if not np.all(np.isfinite(m)) or np.linalg.cond(m) > 1e12:
            raise RobidInputError(f"{self.where}: transmission: the matrix N is singular")
        self._matrix = m
        return m

    def robot_values(self, attribute: str, where: str) -> np.ndarray:
        """The robot file's drive ``attribute`` (gear_ratio, torque_constant) of every joint."""
        if self.robot is None:
            raise RobidInputError(f"{where}: needs the robot's drive {attribute}s, but no robot was given")
        out = []
        for joint in self.robot.joints:
            value = getattr(joint.drive, attribute, None) if joint.drive is not None else None
            if value is None:
                raise RobidInputError(
                    f"{where}: joint {joint.name} of robot {self.robot.name} has no drive {attribute}; give it in "
                    "the robot file or in the mapping"
                )
            out.append(float(value))
        return np.asarray(out)

    def describe(self) -> str:
        m = self._matrix
        if m is None:
            return "N unset"
        off = [(i + 1, j + 1, m[i, j]) for i in range(self.n) for j in range(self.n) if i != j and m[i, j] != 0]
        text = "N = diag(" + ", ".join(f"{v:g}" for v in np.diag(m)) + ")"
        if off:
            text += " with " + ", ".join(f"N[{i},{j}] = {v:g}" for i, j, v in off)
        return text


def currents_to_torque(
    i: np.ndarray, group: Group, transmission: TransmissionMatrix, where: str
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(joint torques (N, dof) from motor currents ``i`` (A), the note of the rule used): tau = K i with drive
    gains K, or tau = N^T (k_T i) with torque constants k_T (given, or the robot file's)."""
    n = i.shape[1]
    if group.gains is not None:
        gains = np.asarray(group.gains)
        if gains.size != n:
            raise RobidInputError(f"{where}: currents.gains: {gains.size} values for {n} joints")
        scaled = "" if group.gain_scale is None else f" (scaled by the drive-gain file {group.gain_scale})"
        return i * gains, (f"{where}: tau = K * i with drive gains K = [{', '.join(f'{g:g}' for g in gains)}] N m/A"
                           + scaled,)
    if group.torque_constants == "robot":
        kt = transmission.robot_values("torque_constant", f"{where}: currents")
    else:
        kt = np.asarray(group.torque_constants, dtype=float)
        if kt.size != n:
            raise RobidInputError(f"{where}: currents.torque_constants: {kt.size} values for {n} joints")
    m = transmission.matrix(f"{where}: currents")
    note = (f"{where}: tau = N^T (k_T * i) with k_T = [{', '.join(f'{k:g}' for k in kt)}] N m/A, "
            f"{transmission.describe()}")
    return (i * kt) @ m, (note,)


def motor_to_joint(
    x: np.ndarray, name: str, transmission: TransmissionMatrix, where: str
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(a motor-side signal ``name`` (N, dof) on the joint side, the note of the rule): torques
    tau = N^T tau_motor (rows: tau_j^T = tau_m^T N), positions, velocities and accelerations N^-1 x_motor."""
    if name == "torques":
        x = x @ transmission.matrix(f"{where}: torques")
        return x, (f"{where}: torques: motor side, tau = N^T tau_motor, {transmission.describe()}",)
    x = np.linalg.solve(transmission.matrix(f"{where}: {name}"), x.T).T
    return x, (f"{where}: {name}: motor side, divided by the transmission N, {transmission.describe()}",)
