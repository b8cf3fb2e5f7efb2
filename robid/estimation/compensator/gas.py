"""The gas cylinder's regressor column for the estimation, and the physical region of its geometry
(docs/compensator.md, sections 1 and 5; the gas law itself is robid.model.compensator's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from robid.errors import RobidInputError
from robid.model.compensator import gas_p0_column, gas_volume


def gas_cylinder_column(
    length: np.ndarray, dlength: np.ndarray, *, area: float, l0: float, v0: float, n: float
) -> np.ndarray:
    """Regressor column of p0 for a gas cylinder: ``A (v0 / (v0 - A (l - l0)))^n dl/dq``.

    With ``F = -p0 A (v0/(v0 - A (l - l0)))^n`` (pulling the anchors together) the motor supplies
    ``tau = -F dl/dq`` (docs/interfaces.md 1.2), which is p0 times this column (robid.model.compensator.gas_p0_column).
    ``length`` and ``dlength`` are l(q) and dl/dq at the samples (any shape). A geometry whose gas volume is not
    positive at some sample is refused with a message naming it.
    """
    length = np.asarray(length, dtype=float)
    if np.any(gas_volume(length, area, l0, v0) <= 0):
        raise RobidInputError(
            f"gas cylinder: gas volume v0 - A (l - l0) <= 0 at l = {float(np.max(length)):.4g} m "
            f"(v0 = {v0:.4g} m^3, l0 = {l0:.4g} m, A = {area:.4g} m^2)"
        )
    return gas_p0_column(length, np.asarray(dlength, dtype=float), area, l0, v0, n)


def gas_volume_positive(length: np.ndarray) -> Callable[[Mapping[str, float]], bool]:
    """``feasible(geometry)`` for :func:`robid.estimation.compensator.refinement.refine_nonlinear_compensator`:
    whether the gas volume ``v0 - A (l - l0)`` is positive at every length l given (the recorded stroke)."""
    length = np.asarray(length, dtype=float)

    def feasible(geometry: Mapping[str, float]) -> bool:
        return bool(np.all(gas_volume(length, geometry["area"], geometry["l0"], geometry["v0"]) > 0))

    return feasible
