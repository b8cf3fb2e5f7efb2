"""One limit checked on a parsed-back controller program (robid.excitation.programs.parse_back): joint
limits, the speed a program states (speed.py) and the Cartesian workspace (workspace.py) each give such items."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramLimit:
    quantity: str
    joint: str
    value: float | tuple[float, float]
    limit: float | tuple[float, float]
    ok: bool
