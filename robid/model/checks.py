"""Physical plausibility checks on link inertial data, with errors that name the field."""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import Link


def check_link(link: Link, where: str) -> None:
    """Mass >= 0; inertia about the COM symmetric positive semidefinite with the triangle inequalities.

    The principal moments of a rigid body satisfy I1 + I2 >= I3 for every permutation (e.g. Traversaro et
    al. 2016, "Identification of fully physical consistent inertial parameters", eq. 6); a small relative
    tolerance admits rounded published values.
    """
    if link.mass < 0:
        raise RobidInputError(f"{where}.mass: must be >= 0, got {link.mass}")
    inertia = link.inertia_tensor_com()
    principal = np.linalg.eigvalsh(inertia)
    scale = max(float(np.max(np.abs(principal))), 1e-300)
    tol = 1e-6 * scale
    if principal[0] < -tol:
        raise RobidInputError(
            f"{where}.inertia: not positive semidefinite (principal moments {principal.tolist()})"
        )
    for k in range(3):
        others = principal.sum() - principal[k]
        if principal[k] > others + tol:
            raise RobidInputError(
                f"{where}.inertia: violates the triangle inequality (principal moments {principal.tolist()}:"
                f" {principal[k]:.6g} > {others:.6g}; published sets that are not physically consistent can be"
                " accepted with inertia_check: false)"
            )
