"""A planar two-link arm in closed form: a small stand-in robot for examples and tests of the designer.

Both joints rotate about z, link lengths l1, l2 along the x axes (standard DH a = l, alpha = 0), gravity
g along -y of the base frame (the arm moves in a vertical plane). Lagrange's equations with
ZZ1R = ZZ1 + m2 l1^2, MX1R = mx1 + m2 l1, w = qd1 + qd2, K = MX2 cos q2 - MY2 sin q2 give::

    tau1 = ZZ1R qdd1 + ZZ2 wd + l1 K (wd + qdd1) + l1 K' qd2 (w + qd1) + g (MX1R c1 - MY1 s1 + MX2 c12 - MY2 s12)
    tau2 = ZZ2 wd + l1 K qdd1 - l1 K' qd1^2 + g (MX2 c12 - MY2 s12)                 (K' = dK/dq2)

plus viscous and Coulomb friction per joint: 10 base parameters
(ZZ1R, MX1R, MY1, ZZ2, MX2, MY2, fv1, fc1, fv2, fc2). This is independent of robid's symbolic stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robid.model.robot_model import Joint, JointGeometry, Limits, RobotModel

BASE_NAMES = ("ZZ1R", "MX1R", "MY1", "ZZ2", "MX2", "MY2", "fv1", "fc1", "fv2", "fc2")
_I3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def planar_2r_model(l1: float = 0.5, l2: float = 0.4, limits: Limits | None = None) -> RobotModel:
    """RobotModel of the arm (kinematics and limits only; the dynamics are in :func:`base_regressor`)."""
    limits = limits or Limits(position=(-np.pi, np.pi), velocity=2.0, acceleration=4.0)
    joints = tuple(
        Joint(
            name=f"J{i + 1}",
            type="revolute",
            geometry=JointGeometry(_I3, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), _I3, (length, 0.0, 0.0)),
            limits=limits,
        )
        for i, length in enumerate((l1, l2))
    )
    return RobotModel(name="planar-2r", joints=joints, gravity=(0.0, -9.81, 0.0), kinematics="dh")


def base_regressor(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, l1: float = 0.5, g: float = 9.81) -> np.ndarray:
    """(N, 2, 10) base regressor of the arm, columns :data:`BASE_NAMES`."""
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    q1, q2 = q[:, 0], q[:, 1]
    qd1, qd2 = qd[:, 0], qd[:, 1]
    qdd1, qdd2 = qdd[:, 0], qdd[:, 1]
    c1, s1, c2, s2 = np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)
    c12, s12 = np.cos(q1 + q2), np.sin(q1 + q2)
    w = qd1 + qd2
    wd = qdd1 + qdd2
    y = np.zeros((q.shape[0], 2, 10))
    # joint 1
    y[:, 0, 0] = qdd1
    y[:, 0, 1] = g * c1
    y[:, 0, 2] = -g * s1
    y[:, 0, 3] = wd
    y[:, 0, 4] = l1 * (c2 * (wd + qdd1) - s2 * qd2 * (w + qd1)) + g * c12
    y[:, 0, 5] = l1 * (-s2 * (wd + qdd1) - c2 * qd2 * (w + qd1)) - g * s12
    y[:, 0, 6] = qd1
    y[:, 0, 7] = np.sign(qd1)
    # joint 2
    y[:, 1, 3] = wd
    y[:, 1, 4] = l1 * (c2 * qdd1 + s2 * qd1**2) + g * c12
    y[:, 1, 5] = l1 * (-s2 * qdd1 + c2 * qd1**2) - g * s12
    y[:, 1, 8] = qd2
    y[:, 1, 9] = np.sign(qd2)
    return y


#: plausible nominal base values (m1 = 4 kg, m2 = 3 kg, l1 = 0.5 m, COMs at mid-link)
NOMINAL = np.array(
    [0.25 + 0.75 + 3.0 * 0.25, 4.0 * 0.25 + 3.0 * 0.5, 0.0, 0.16 + 3.0 * 0.04, 0.6, 0.0, 0.8, 0.5, 0.5, 0.3]
)


@dataclass(frozen=True)
class _Base:
    l1: float
    names: tuple[str, ...] = BASE_NAMES

    def regressor(self, q, qd, qdd):
        return base_regressor(q, qd, qdd, self.l1)


@dataclass(frozen=True)
class Planar2R:
    """Stand-in with the shape of ``robid.load_robot(...)``: ``.model``, ``.base_parameters().regressor``."""

    l1: float = 0.5
    l2: float = 0.4
    model: RobotModel = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.model is None:
            object.__setattr__(self, "model", planar_2r_model(self.l1, self.l2))

    @property
    def dof(self) -> int:
        return 2

    @property
    def joint_names(self) -> list[str]:
        return self.model.joint_names

    def base_parameters(self) -> _Base:
        return _Base(self.l1)

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        return base_regressor(q, qd, qdd, self.l1) @ NOMINAL
