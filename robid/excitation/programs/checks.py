"""One item of a controller program's limit check (robid.excitation.programs.parse_back): a quantity of a joint
(or a Cartesian point) against its limit, at the controller's interpolation rate."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramLimit:
    quantity: str
    joint: str
    value: float | tuple[float, float]
    limit: float | tuple[float, float]
    ok: bool
