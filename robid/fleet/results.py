"""What a fleet run produces, per robot and identification date: the shared interface between the fleet runner
(:mod:`robid.fleet.runner`) and the fleet report and drift analysis (:mod:`robid.fleet.drift`,
:mod:`robid.fleet.report`, :mod:`robid.fleet.table`); docs/fleet.md."""

from __future__ import annotations

from dataclasses import dataclass

from robid.record import IdentificationRecord


@dataclass(frozen=True)
class FleetResult:
    """One identification of one robot of the fleet.

    ``robot_type``: the robot file or built-in name that all robots of the type share (their regressor and base
    parameters are the same); ``serial``: the robot's serial number; ``installation``: where it stands (free
    text); ``date``: ISO date (YYYY-MM-DD) of the identification; ``campaign``: the campaign's name in the fleet
    file; ``record``: the identification record, None when a step failed; ``result_path``: its RESULT.json;
    ``error``: the failed step and its reason (None when it ran); ``recomputed``: whether this run computed it
    (False when every step was up to date)."""

    robot_type: str
    serial: str
    date: str
    campaign: str
    record: IdentificationRecord | None
    result_path: str | None = None
    installation: str = ""
    error: str | None = None
    recomputed: bool = True

    @property
    def ok(self) -> bool:
        return self.record is not None and self.error is None
