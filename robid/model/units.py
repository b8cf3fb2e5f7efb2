"""Unit conversion at the edge: numbers are SI (rad, m), strings may carry a unit ("90deg", "250mm")."""

from __future__ import annotations

import math
import re

from robid.errors import RobidInputError

_UNITS = {
    "deg": math.pi / 180.0,
    "rad": 1.0,
    "mm": 1e-3,
    "m": 1.0,
}
_PATTERN = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z/^0-9]*)\s*$")


_KIND = {"deg": "angle", "rad": "angle", "mm": "length", "m": "length"}


def parse_quantity(value: object, where: str, kind: str | None = None) -> float:
    """A float from a number or a string with a unit (deg, rad, mm, m; '/s' suffixes are allowed).

    ``where`` names the field for the error message; ``kind`` ("angle" or "length") refuses a unit of the other
    kind (``a: "90deg"``).
    """
    if isinstance(value, bool):
        raise RobidInputError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        x = float(value)
    elif isinstance(value, str):
        match = _PATTERN.match(value)
        if not match:
            raise RobidInputError(f"{where}: cannot read {value!r} as a number with an optional unit")
        unit = match.group(2)
        base = unit.split("/")[0] if unit else ""
        if base and base not in _UNITS:
            raise RobidInputError(f"{where}: unknown unit {unit!r} in {value!r} (known: deg, rad, mm, m)")
        if base and kind is not None and _KIND[base] != kind:
            raise RobidInputError(f"{where}: {value!r} is not a{'n' if kind == 'angle' else ''} {kind}")
        x = float(match.group(1)) * (_UNITS[base] if base else 1.0)
    else:
        raise RobidInputError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(x):
        raise RobidInputError(f"{where}: must be finite, got {value!r}")
    return x
