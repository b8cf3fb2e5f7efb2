"""Identification from the motor encoders only (robid.elastic.motor_encoders_only, docs/elastic.md): Gauss-Newton
over the joints' stiffness and damping, each step the chosen linear estimator on the drive rows linearised at the
previous estimate."""

from __future__ import annotations

import numpy as np

from robid.errors import RobidOptionError
from robid.identification.datasets import row_correlation, stack
from robid.identification.estimates import unconstrained_estimate
from robid.identification.options import IdentificationOptions, load_run
from robid.robot import Robot

#: Gauss-Newton of the motor-encoder-only identification: at most this many steps, converged when no parameter
#: moves by more than GAUSS_NEWTON_TOLERANCE of its standard deviation
GAUSS_NEWTON_STEPS = 30
GAUSS_NEWTON_TOLERANCE = 1e-4


def motor_side_estimate(robot: Robot, files, o: IdentificationOptions):
    """Gauss-Newton over the stiffness and damping of a motor-encoder-only identification
    (robid.elastic.motor_encoders_only), from the robot file's values: each step is the chosen linear estimator on
    the drive rows linearised at the previous estimate; the stiffness moves in compliance 1/k, where the link
    states are nearly linear. (data sets of the last step, their stacked regressor, estimate, notes)."""
    from robid.elastic.motor_encoders_only import spring_parameters

    if o.static_deflection:
        raise RobidOptionError("motor_encoders_only", "not with {static_deflection}: choose one (the first identifies "
                               "the stiffness, the second takes the robot file's)")
    base = robot.base_parameters()
    stiffness = [k for k, _ in spring_parameters(robot).values()]
    values = base.values(robot.parameters)
    for step in range(1, GAUSS_NEWTON_STEPS + 1):
        sets = tuple(load_run(robot, f, o, values) for f in files)
        W, tau = stack(list(sets))
        est, _ = unconstrained_estimate(W, tau, base.names, o.method, row_correlation(list(sets)))
        new = np.array(est.values, dtype=float)
        compliance = 1.0 / values[stiffness] - (new[stiffness] - values[stiffness]) / values[stiffness] ** 2
        if not np.all(compliance > 0):
            raise RobidOptionError(
                "motor_encoders_only", "the stiffness is not determined by these motor-side data (a Gauss-Newton "
                f"step crossed zero compliance at step {step}); excite faster motion or measure the link positions"
            )
        new[stiffness] = 1.0 / compliance
        moved = np.abs(new - values) / np.maximum(np.asarray(est.std, dtype=float), 1e-300)
        values = new
        if np.nanmax(moved) < GAUSS_NEWTON_TOLERANCE:
            note = f"motor encoders only: Gauss-Newton over stiffness and damping converged in {step} steps"
            return sets, W, est, (note,)
    raise RobidOptionError(
        "motor_encoders_only", f"Gauss-Newton did not converge in {GAUSS_NEWTON_STEPS} steps (largest move "
        f"{np.nanmax(moved):.3g} std): the stiffness is poorly determined by these data"
    )


