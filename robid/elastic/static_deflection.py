"""Static-deflection correction: link positions from motor encoders on robots with elastic joints.

Most industrial robots measure only the motor side: the recorded "joint position" is theta, the motor angle divided
by the gear ratio. Under gravity the links hang on their springs, q = theta + deflection. At rest the link equation
of Spong's model (Zollo et al. 2015, eq. 2-6; docs/elastic.md) reduces to

    G(q) + K (q - theta) = 0        =>        q = theta - K^-1 G(q)

G the gravity and compensator torques of the link side, K the joint stiffness of the robot file (zero deflection on a
rigid joint). robid solves it per sample by fixed-point iteration from q = theta; the iteration contracts with the
factor max |dG/dq| / K (1e-3 to 1e-2 on industrial robots), so a few steps reach 1e-12 rad. The dynamic part of the
deflection (K^-1 of the inertial and velocity torques) is left: the correction is the quasi-static one, exact at
rest and first order in the motion's own torques.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.errors import RobidInputError

#: rad (m): the fixed point is accepted when an iteration moves no sample by more than this
TOLERANCE = 1e-12
MAX_ITERATIONS = 50


def link_positions(model, theta) -> tuple[np.ndarray, int]:
    """(q, iterations): the link positions that hang at rest on the springs of ``model`` (a RobotModel) from the
    motor positions ``theta`` (N, dof), module docstring."""
    from robid.robot import load_robot

    theta = np.atleast_2d(np.asarray(theta, dtype=float))
    stiffness = np.array([j.elasticity.stiffness if j.elasticity is not None else np.inf for j in model.joints])
    if not np.any(np.isfinite(stiffness)):
        raise RobidInputError(f"{model.name}: static deflection: no elastic joint (elasticity in the robot file)")
    terms = ("rigid", "compensator") if any(j.compensator is not None for j in model.joints) else ("rigid",)
    link_side = load_robot(model, terms=terms)
    zeros = np.zeros_like(theta)
    compliance = 1.0 / stiffness  # 0 on rigid joints
    q = theta.copy()
    for iteration in range(1, MAX_ITERATIONS + 1):
        new = theta - link_side.inverse_dynamics(q, zeros, zeros) * compliance
        step = float(np.max(np.abs(new - q))) if new.size else 0.0
        q = new
        if step <= TOLERANCE:
            return q, iteration
    raise RobidInputError(
        f"{model.name}: static deflection: the fixed point q = theta - K^-1 G(q) did not converge in "
        f"{MAX_ITERATIONS} steps (last step {step:.3g}); is a stiffness far too small for its gravity torque?"
    )


def corrected_measurement(measurement, model):
    """The measurement with its positions (motor encoders, theta) replaced by the statically deflected link
    positions, and a note saying so with the largest correction per elastic joint."""
    theta = np.asarray(measurement.q, dtype=float)
    q, iterations = link_positions(model, theta)
    worst = np.max(np.abs(q - theta), axis=0)
    parts = ", ".join(f"{j.name} {np.degrees(w):.3g} deg" for j, w in zip(model.joints, worst, strict=True)
                      if j.elasticity is not None)
    note = (f"static deflection: positions read as motor-side (theta) and corrected to the link by q = theta - "
            f"K^-1 G(q) ({iterations} fixed-point steps); largest correction {parts}")
    return dataclasses.replace(measurement, q=q), note
