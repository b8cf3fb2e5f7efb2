"""The rows of the elastic layout (docs/elastic.md section 3, robid.identification.datasets): per joint the row that
carries its drive torque, and the regressor, target and row mask with link rows and drive rows (motor row plus link
row, the spring cancelled)."""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.robot import Robot
from robid.signals.records import ProcessedSignals


def drive_rows(robot: Robot) -> tuple[int, ...]:
    """Per joint, its row of the elastic layout that carries the drive torque: the drive row of an elastic joint
    (after the link rows), a rigid joint's own row."""
    return tuple(robot.dof + robot.motor_joints.index(j) if j in robot.motor_joints else j for j in range(robot.dof))


def elastic_rows(robot: Robot, processed: ProcessedSignals, source: str):
    """Unfiltered base regressor (N, rows, nb), target (N, rows) and row mask of the elastic layout: link rows of
    elastic joints target 0, their drive rows (motor row + link row, the spring cancelled;
    robid.identification.datasets, module docstring) the drive torque, a rigid joint's row its torque."""
    if processed.theta is None:
        raise RobidInputError(
            f"{source}: the elastic layout (terms with 'stiffness') needs motor positions: CSV columns theta1.."
            "thetan or a mapping's motor_positions"
        )
    base = robot.base_parameters()
    W = base.regressor(processed.q, processed.qd, processed.qdd,
                       motor=(processed.theta, processed.thetad, processed.thetadd))
    tau_joint = np.asarray(processed.tau, dtype=float)
    keep_joint = np.asarray(processed.keep, dtype=bool)
    rows = list(range(robot.dof)) + list(robot.motor_joints)  # the joint each row belongs to
    motor_rows = [robot.dof + i for i in range(len(robot.motor_joints))]
    W[:, motor_rows] += W[:, list(robot.motor_joints)]  # drive row = motor row + link row: the spring cancels
    tau = tau_joint[:, rows].copy()
    tau[:, list(robot.motor_joints)] = 0.0
    return W, tau, keep_joint[:, rows]
