"""The virtual robot's per-joint data (robid.simulation.plant, module docstring): gains, reflected rotor inertia,
stiffness and damping of the elastic joints, and the drive-side friction law with its smoothed Coulomb term and
its slope."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.simulation.plant_settings import ControllerSettings
from robid.simulation.rnea import RigidBodyDynamics


@dataclass(frozen=True, eq=False)
class JointData:
    """Per-joint drive, friction, elasticity and gain arrays (dof,), joint units; NaN-free."""

    gear_ratio: np.ndarray
    reflected_inertia: np.ndarray
    fv: np.ndarray
    fc: np.ndarray
    f0: np.ndarray
    stiffness: np.ndarray  # 0 for rigid joints
    damping: np.ndarray
    link_viscous: np.ndarray
    elastic: np.ndarray  # bool
    kp: np.ndarray
    kd: np.ndarray
    gains_from_file: np.ndarray  # bool
    #: each joint's friction law (robid.model.Friction); fv, fc, f0 above are its linear part
    friction: tuple = ()

    @cached_property
    def nonlinear_joints(self) -> tuple[int, ...]:
        """The joints whose friction law is not linear (asked at every right-hand side: computed once)."""
        return tuple(j for j, law in enumerate(self.friction) if not law.is_linear)


def joint_data(model: RobotModel, dynamics: RigidBodyDynamics, q0: np.ndarray, ctrl: ControllerSettings) -> JointData:
    where = model.source or model.name
    n = model.dof
    gear = np.ones(n)
    ia = np.zeros(n)
    fv, fc, f0 = np.zeros(n), np.zeros(n), np.zeros(n)
    k, d, fl = np.zeros(n), np.zeros(n), np.zeros(n)
    elastic = np.zeros(n, dtype=bool)
    kp, kd = np.full(n, np.nan), np.full(n, np.nan)
    for i, joint in enumerate(model.joints):
        jw = f"{where}: joint {joint.name}"
        if joint.drive is not None:
            gear[i] = joint.drive.gear_ratio
            ia[i] = joint.drive.reflected_inertia
        fv[i], fc[i], f0[i] = joint.friction.viscous, joint.friction.coulomb, joint.friction.offset
        if joint.elasticity is not None:
            if ia[i] <= 0.0:
                raise RobidInputError(
                    f"{jw}: drive: rotor_inertia: an elastic joint needs a drive with rotor inertia > 0"
                )
            if not joint.elasticity.stiffness > 0:
                raise RobidInputError(f"{jw}: elasticity: stiffness: must be positive")
            elastic[i] = True
            k[i] = joint.elasticity.stiffness
            d[i] = joint.elasticity.damping
            fl[i] = joint.elasticity.link_viscous
        if joint.controller is not None:
            kp[i], kd[i] = joint.controller.position_gain, joint.controller.velocity_gain
            if not (kp[i] > 0 and kd[i] >= 0):
                raise RobidInputError(f"{jw}: controller: position_gain must be > 0 and velocity_gain >= 0")
    from_file = ~np.isnan(kp)
    if not from_file.all():
        inertia = ia + np.diag(dynamics.mass_matrix(q0)[0])
        w = 2.0 * math.pi * ctrl.default_bandwidth_hz
        kp = np.where(from_file, kp, inertia * w**2)
        kd = np.where(from_file, kd, 2.0 * ctrl.default_damping_ratio * inertia * w)
    laws = tuple(j.friction for j in model.joints)
    return JointData(gear, ia, fv, fc, f0, k, d, fl, elastic, kp, kd, from_file, laws)


def friction_torque(data: JointData, v: np.ndarray, eps: float, index=slice(None), q: np.ndarray | None = None
                    ) -> np.ndarray:
    """The drive-side friction f(v) of the joints ``index`` at drive velocities v and positions q (..., len(index)):
    fv v + fc tanh(v/eps) + f0, plus on a joint with a nonlinear model its excess (Stribeck, sigmoid, ripple;
    robid.model.Friction.excess) with tanh(v/eps) for sign(v). ``q`` is needed only for a ripple."""
    tau = data.fv[index] * v + data.fc[index] * np.tanh(v / eps) + data.f0[index]
    for k, law in _nonlinear_friction(data, index):
        vk = v[..., k]
        tau[..., k] += law.excess(vk, None if q is None else q[..., k], np.tanh(vk / eps))
    return tau


def friction_slope(data: JointData, v: np.ndarray, eps: float, q: np.ndarray | None = None) -> np.ndarray:
    """df/dv of :func:`friction_torque` for all joints at fixed q: fv + fc/eps sech^2(v/eps) (+ the nonlinear
    models' slopes)."""
    slope = data.fv + data.fc / eps / np.cosh(np.clip(v / eps, -300.0, 300.0)) ** 2
    for k, law in _nonlinear_friction(data, slice(None)):
        vk = v[..., k]
        sign_slope = 1.0 / eps / np.cosh(np.clip(vk / eps, -300.0, 300.0)) ** 2
        slope[..., k] += law.excess_slope(vk, None if q is None else q[..., k], np.tanh(vk / eps), sign_slope)
    return slope


def _nonlinear_friction(data: JointData, index) -> list:
    """(position within ``index``, friction law) of the joints in ``index`` whose friction is not linear."""
    if not data.nonlinear_joints:
        return []
    joints = np.arange(len(data.friction))[index]
    return [(k, data.friction[j]) for k, j in enumerate(np.atleast_1d(joints)) if not data.friction[j].is_linear]


