"""JSON-ready numbers for the compensator records' ``to_dict()``."""

from __future__ import annotations

import numpy as np


def finite_or_none(x) -> float | None:
    """``float(x)``, or None (JSON null) when it is not finite."""
    x = float(x)
    return x if np.isfinite(x) else None
