"""Fleet file reader (YAML, ``robid_fleet: 1``, docs/fleet.md); every error names the file and the field.

```yaml
robid_fleet: 1
name: plant-a
robots:
  - serial: SN-1001
    robot: tx200_3axis                  # the robot type: robot file or built-in name
    installation: hall 2, cell 4
    identifications:
      - {date: 2025-03-01, campaign: sn1001/2025-03.yaml}           # a campaign file
      - date: 2025-09-01
        campaign: {measurements: {...}, identification: {...}}       # an inline campaign (robot: the robot's)
```

The fleet's own fields are checked at once (:class:`RobidInputError`). A campaign that cannot be read (its file
is missing, a measurement file it names is missing, a wrong key) does not stop the fleet: that identification
carries the campaign reader's message as its error and the others run (docs/fleet.md).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robid.campaign.campaign_file import CampaignSpec, campaign_from_dict, read_campaign
from robid.errors import RobidInputError
from robid.io.files import read_yaml
from robid.io.keys import check_field_types, check_keys
from robid.schemas import fleet as schema

TOP_KEYS = schema.FLEET.keys()
ROBOT_KEYS = schema.ROBOT.keys()
IDENTIFICATION_KEYS = schema.IDENTIFICATION.keys()
#: the name of an inline campaign that gives none
DEFAULT_CAMPAIGN_NAME = "identification"


@dataclass(frozen=True)
class FleetJob:
    """One identification of one robot: its campaign (None when it could not be read: ``error`` says why)."""

    robot_type: str
    serial: str
    installation: str
    date: str
    campaign_name: str
    campaign: CampaignSpec | None
    error: str | None = None


@dataclass(frozen=True)
class FleetSpec:
    name: str
    source: Path
    jobs: tuple[FleetJob, ...]

    @property
    def serials(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(j.serial for j in self.jobs))


def read_fleet(path: str | Path) -> FleetSpec:
    path = Path(path)
    return fleet_from_dict(read_yaml(path), path)


def fleet_from_dict(data: Any, path: Path) -> FleetSpec:
    """The fleet of a fleet file's mapping; relative file names are taken relative to ``path``'s folder."""
    w = str(path)
    if not isinstance(data, dict):
        raise RobidInputError(f"{w}: expected a mapping with robid_fleet: 1 and robots: [...]")
    check_keys(data, TOP_KEYS, w)
    check_field_types(data, schema.FLEET, w)
    if data.get("robid_fleet") != 1:
        raise RobidInputError(f"{w}: robid_fleet: schema version must be 1, got {data.get('robid_fleet')!r}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise RobidInputError(f"{w}: name: expected a text, got {name!r}")
    robots = data.get("robots")
    if not isinstance(robots, list) or not robots:
        raise RobidInputError(f"{w}: robots: expected a list of robots ({{serial, robot, identifications}})")
    jobs: list[FleetJob] = []
    seen: set[str] = set()
    for k, item in enumerate(robots):
        jobs += _robot(item, f"{w}: robots[{k}]", path, seen)
    return FleetSpec(name, path, tuple(jobs))


def _robot(item: Any, w: str, path: Path, seen: set[str]) -> list[FleetJob]:
    if not isinstance(item, dict):
        raise RobidInputError(f"{w}: expected a mapping with serial, robot, identifications")
    check_keys(item, ROBOT_KEYS, w)
    serial = item.get("serial")
    if isinstance(serial, int) and not isinstance(serial, bool):
        serial = str(serial)
    if not _folder_safe(serial):
        raise RobidInputError(f"{w}.serial: expected a serial number ({schema.SERIAL_CHARS}), got {serial!r}")
    if serial in seen:
        raise RobidInputError(f"{w}.serial: {serial!r} is listed twice (each robot once, its dates below it)")
    seen.add(serial)
    robot = item.get("robot")
    if not isinstance(robot, str) or not robot:
        raise RobidInputError(f"{w}.robot: expected a robot file or built-in name")
    if robot.endswith((".yaml", ".yml", ".urdf")):
        robot = str((path.parent / robot).resolve())
        if not Path(robot).exists():
            raise RobidInputError(f"{w}.robot: {robot} does not exist")
    else:
        from robid.model.loader import builtin_robot_names

        if robot not in builtin_robot_names():
            raise RobidInputError(f"{w}.robot: {robot!r} is neither a robot file (.yaml, .urdf) nor a built-in "
                                  f"robot ({', '.join(sorted(builtin_robot_names()))})")
    installation = item.get("installation", "")
    if not isinstance(installation, str):
        raise RobidInputError(f"{w}.installation: expected a text, got {installation!r}")
    idents = item.get("identifications")
    if not isinstance(idents, list) or not idents:
        raise RobidInputError(f"{w}.identifications: expected a list of {{date, campaign}}")
    jobs, dates = [], set()
    for j, ident in enumerate(idents):
        iw = f"{w}.identifications[{j}]"
        if not isinstance(ident, dict):
            raise RobidInputError(f"{iw}: expected a mapping with date and campaign")
        check_keys(ident, IDENTIFICATION_KEYS, iw)
        date = _date(ident.get("date"), f"{iw}.date")
        if date in dates:
            raise RobidInputError(f"{iw}.date: {date} is listed twice for {serial}")
        dates.add(date)
        if "campaign" not in ident:
            raise RobidInputError(f"{iw}.campaign: expected a campaign file or an inline campaign")
        jobs.append(_job(ident["campaign"], iw, path, robot, serial, installation, date))
    return jobs


def _job(campaign: Any, w: str, path: Path, robot: str, serial: str, installation: str, date: str) -> FleetJob:
    """The identification's campaign, read by the campaign reader; what it refuses is this job's error."""
    if isinstance(campaign, str):
        source = (path.parent / campaign).resolve()
        name = source.stem
        try:
            spec = read_campaign(source)
        except RobidInputError as exc:
            return FleetJob(robot, serial, installation, date, name, None, f"{w}.campaign: {exc}")
    elif isinstance(campaign, dict):
        data = {"robid_campaign": 1, "name": DEFAULT_CAMPAIGN_NAME, "robot": robot, **campaign}
        name = str(data["name"])
        try:
            spec = campaign_from_dict(data, path.parent / f"{path.name}: {w.split(': ', 1)[-1]}.campaign")
        except RobidInputError as exc:
            return FleetJob(robot, serial, installation, date, name, None, str(exc))
    else:
        raise RobidInputError(f"{w}.campaign: expected a campaign file or an inline campaign (a mapping), "
                              f"got {campaign!r}")
    return FleetJob(robot, serial, installation, date, spec.name, spec)


def _date(value: Any, w: str) -> str:
    """An ISO date: YAML reads an unquoted 2025-03-01 as a date, a quoted one as text."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise RobidInputError(f"{w}: expected an ISO date YYYY-MM-DD, got {value!r}")


def _folder_safe(text: Any) -> bool:
    return isinstance(text, str) and bool(text) and text not in (".", "..") and all(
        c.isalnum() or c in "-_." for c in text)
