"""The payload's regressor: the last body's ten inertial columns of robid's standard regressor.

A payload fixed to the last body adds its standard parameters pi_p to that body's, so (the standard regressor being
linear in each body's ten parameters; Atkeson, An & Hollerbach 1986, eq. 12)

    tau_loaded(q, qd, qdd) = tau_unloaded(q, qd, qdd) + Y_last(q, qd, qdd) pi_p,

``Y_last`` the columns ``m_L, mx_L, ..., Izz_L`` of the last joint L. Every joint row carries payload torque.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import Link, RobotModel
from robid.payload.body import PAYLOAD_PARAMETERS, PayloadBody
from robid.robot import Robot


def payload_columns(robot: Robot) -> list[int]:
    """Indices of the last body's ten inertial parameters in ``robot.parameter_names``."""
    joint = robot.joint_names[-1]
    names = robot.parameter_names
    wanted = [f"{p}_{joint}" for p in PAYLOAD_PARAMETERS]
    missing = [w for w in wanted if w not in names]
    if missing:
        raise RobidInputError(f"{robot.name}: the model has no rigid-body parameters of the last body "
                              f"({', '.join(missing)}); payload identification needs the 'rigid' term")
    return [names.index(w) for w in wanted]


def payload_regressor(robot: Robot, q, qd, qdd) -> np.ndarray:
    """(N, dof, 10) payload regressor Y_last at the states, columns in PAYLOAD_PARAMETERS order."""
    cols = payload_columns(robot)
    if robot.motor_joints:
        raise RobidInputError(f"{robot.name}: payload identification uses the rigid layout; leave 'stiffness' out "
                              "of the terms")
    return np.ascontiguousarray(robot.regressor(q, qd, qdd)[:, :, cols])


def with_payload(model: RobotModel, payload: PayloadBody) -> RobotModel:
    """``model`` with ``payload`` rigidly added to its last body: masses add, the COM is the mass-weighted mean,
    the inertia about the new COM is the sum of both parallel-axis-shifted tensors (what a real load does; used to
    give the virtual robot a load)."""
    last = model.joints[-1]
    link = last.link
    m1, m2 = float(link.mass), float(payload.mass)
    m = m1 + m2
    if not m > 0:
        raise RobidInputError(f"payload: mass: the last body and the payload weigh {m:g} kg together")
    c1, c2 = np.asarray(link.com, dtype=float), np.asarray(payload.com, dtype=float)
    c = (m1 * c1 + m2 * c2) / m

    def shifted(inertia_c, mass, com):
        d = com - c
        return inertia_c + mass * (d @ d * np.eye(3) - np.outer(d, d))

    total = shifted(link.inertia_tensor_com(), m1, c1) + shifted(payload.tensor_com(), m2, c2)
    new_link = Link(mass=m, com=tuple(float(x) for x in c),
                    inertia_com=(float(total[0, 0]), float(total[1, 1]), float(total[2, 2]),
                                 float(total[0, 1]), float(total[0, 2]), float(total[1, 2])))
    joints = (*model.joints[:-1], dataclasses.replace(last, link=new_link))
    return dataclasses.replace(model, joints=joints, name=model.name)
