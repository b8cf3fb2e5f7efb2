"""Frequency response functions of the linearised elastic robot: joint space and at the flange.

From the linearised closed loop of robid.elastic.modal (M_bar dz'' + D_bar dz' + K_bar dz = f, Do 2021 eq. 2.7-2.12)
the receptance (displacement per force) at the angular frequency w is

    G(jw) = (K_bar - w^2 M_bar + j w D_bar)^-1                                          (joint space)

A force F at the flange acts on the link coordinates as J^T F and moves the flange by J dq, so the translational
receptance at the flange is (Do 2021 section 2.4.2; the compliance used in machining-stability prediction)

    G_flange(jw) = J_p G_qq(jw) J_p^T                                                    (3 x 3)

with G_qq the link-coordinate block of G and J_p the 3 x n position Jacobian of the last body frame's origin in
the base frame at the pose (central differences of the forward kinematics, step ``JACOBIAN_STEP``; truncation
~1e-14). Units: rad/(N m) or m/N in joint space, m/N at the flange.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.elastic.modal import LinearisedModel, linearise
from robid.errors import RobidInputError

#: central-difference step of the flange Jacobian, rad (m)
JACOBIAN_STEP = 1e-6


@dataclass(frozen=True)
class FrequencyResponse:
    """Receptances at ``frequencies_hz``: ``joint`` (F, m, m) over the linearised coordinates ``coordinates``,
    ``flange`` (F, 3, 3) translational, base-frame axes."""

    frequencies_hz: np.ndarray
    coordinates: tuple[str, ...]
    joint: np.ndarray
    flange: np.ndarray
    jacobian: np.ndarray

    def to_json(self) -> dict:
        """Magnitudes of the direct (diagonal) receptances, for ``robid modal --frf --json``."""
        return {
            "frequencies_hz": [float(f) for f in self.frequencies_hz],
            "coordinates": list(self.coordinates),
            "joint_magnitude": [[float(abs(g[i, i])) for i in range(g.shape[0])] for g in self.joint],
            "flange_magnitude_m_per_n": [[float(abs(g[i, i])) for i in range(3)] for g in self.flange],
        }


def joint_receptance(lin: LinearisedModel, frequencies_hz) -> np.ndarray:
    """G(jw) of the module docstring, (F, m, m) complex."""
    f = np.asarray(frequencies_hz, dtype=float).ravel()
    if f.size == 0 or not np.all(np.isfinite(f)) or np.any(f < 0):
        raise RobidInputError("frf: frequencies must be finite and >= 0 Hz")
    w = 2.0 * np.pi * f
    dyn = (lin.stiffness[None] - (w**2)[:, None, None] * lin.mass[None]
           + 1j * w[:, None, None] * lin.damping[None])
    return np.linalg.inv(dyn)


def flange_jacobian(model, pose) -> np.ndarray:
    """3 x n position Jacobian of the last body frame's origin (base frame) at ``pose``."""
    q = np.asarray(pose, dtype=float).ravel()
    n = q.size
    jac = np.zeros((3, n))
    for k in range(n):
        step = np.zeros(n)
        step[k] = JACOBIAN_STEP
        plus = model.forward_kinematics(q + step)[-1][:3, 3]
        minus = model.forward_kinematics(q - step)[-1][:3, 3]
        jac[:, k] = (plus - minus) / (2.0 * JACOBIAN_STEP)
    return jac


def frequency_response(robot, pose, frequencies_hz, motors: str = "controlled") -> FrequencyResponse:
    """Joint-space and flange receptances of ``robot`` (robid.Robot or RobotModel) at ``pose``."""
    from robid.model.robot_model import RobotModel

    model = robot if isinstance(robot, RobotModel) else robot.model
    lin = linearise(model, pose, motors)
    g = joint_receptance(lin, frequencies_hz)
    jac = flange_jacobian(model, pose)
    names = [j.name for j in model.joints]
    link = [lin.coordinates.index(f"q_{n}") if f"q_{n}" in lin.coordinates else None for n in names]
    # locked rotors: a rigid joint is held and does not move (its column of J does not contribute)
    rows = [k for k, c in enumerate(link) if c is not None]
    cols = [link[k] for k in rows]
    j_p = jac[:, rows]
    g_qq = g[:, cols][:, :, cols]
    flange = np.einsum("ai,fij,bj->fab", j_p, g_qq, j_p)
    return FrequencyResponse(np.asarray(frequencies_hz, dtype=float).ravel(), lin.coordinates, g, flange, jac)
