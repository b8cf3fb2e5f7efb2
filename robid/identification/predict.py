"""Predicted joint torques for a measurement file, at that file's own time stamps.

Velocities and accelerations come from the signal stage (non-periodic path: zero-phase low-pass and
consistent differentiation, unless the file holds measured qd/qdd); the base regressor at those states times
the identified values gives the torque on the processed grid, interpolated linearly to the file's own time
stamps. Samples in the trimmed edges of the filter (and any dropped row) get NaN and are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.record import IdentificationRecord
from robid.robot import Robot
from robid.signals import ProcessingOptions, process


@dataclass(frozen=True, eq=False)
class Prediction:
    t: np.ndarray
    tau: np.ndarray  # (N, dof), NaN where no prediction is possible
    missing: int
    note: str


def check_result_matches(robot: Robot, record: IdentificationRecord, where: str = "RESULT.json") -> None:
    """Refuse a robot whose base parameters are not those of the record: other names (another robot, other
    terms) or other expressions (another geometry grouping the same names differently)."""
    base = robot.base_parameters()
    if tuple(base.names) != record.names:
        raise RobidInputError(
            f"{where}: its base parameters ({len(record.names)}) do not match robot {robot.name}"
            f" with terms {', '.join(robot.terms)} ({len(base.names)}); use the robot it was identified with"
        )
    for p, expression in zip(record.base_parameters, base.expressions, strict=True):
        if "".join(p.expression.split()) != "".join(expression.split()):
            raise RobidInputError(
                f"{where}: base parameter {p.name} is {p.expression} in the result but {expression} for robot "
                f"{robot.name}: another geometry; use the robot it was identified with"
            )


def predict_file(
    robot: Robot,
    record: IdentificationRecord,
    path: str | Path,
    *,
    mapping: str | Path | None = None,
    policy: ScreeningPolicy | None = None,
    cutoff_hz: float | None = None,
) -> Prediction:
    check_result_matches(robot, record)
    measurement = read_measurement(path, robot.model, mapping=mapping, policy=policy)
    processed = process(measurement, ProcessingOptions(mode="nonperiodic", cutoff_hz=cutoff_hz))
    tau_grid = robot.base_parameters().regressor(processed.q, processed.qd, processed.qdd) @ record.values
    t = np.asarray(measurement.t, dtype=float)
    tau = np.full((t.size, robot.dof), np.nan)
    inside = (t >= processed.t[0]) & (t <= processed.t[-1])
    for j in range(robot.dof):
        tau[inside, j] = np.interp(t[inside], processed.t, tau_grid[:, j])
    missing = int((~inside).sum())
    note = (
        f"{missing} of {t.size} samples outside the filtered window (filter edges) have no prediction (NaN)"
        if missing
        else "every sample predicted"
    )
    return Prediction(t=t, tau=tau, missing=missing, note=note)
