"""Files a mapping file points to, resolved relative to its folder (docs/mapping-file.md): the published design
a record executes (``design:``) and the drive-gain file whose scale multiplies the currents' gains
(``currents: gain_scale:``, robid.io.gains_file)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from robid.errors import RobidInputError, RobidOptionError


def design_file(value: Any, where: str) -> str | None:
    """``design:``: the published design (.mat, robid.io.design_file) the record executes once, relative to the
    mapping file's folder; refused unless it exists."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.lower().endswith(".mat"):
        raise RobidOptionError(None,
            f"{where}: design: expected a published design file (.mat) run once between rests, got {value!r} "
            "(a robid TRAJ.json goes with {trajectory})"
        )
    path = Path(value) if Path(value).is_absolute() else Path(where).parent / value
    if not path.is_file():
        raise RobidInputError(f"{where}: design: {path} does not exist")
    return str(path)


def scale_current_gains(groups: dict, where: str) -> dict:
    """``groups`` (robid.io.mapping.Group by name) with the currents' gains multiplied by the scale of their
    ``gain_scale`` file (relative to the mapping file ``where``), its resolved path kept in ``gain_scale``."""
    from robid.io.gains_file import read_gains

    for name, group in groups.items():
        if group.gain_scale is None:
            continue
        if name != "currents" or group.gains is None:
            raise RobidInputError(f"{where}: {name}: gain_scale: scales the gains of currents; give gains too")
        if not isinstance(group.gain_scale, str):
            raise RobidInputError(f"{where}: currents: gain_scale: expected the path of a drive-gain file")
        path = Path(group.gain_scale)
        path = path if path.is_absolute() else Path(where).parent / path
        if not path.is_file():
            raise RobidInputError(f"{where}: currents: gain_scale: {path} does not exist")
        scale = read_gains(path).scale
        if len(scale) != len(group.gains):
            raise RobidInputError(f"{where}: currents: gain_scale: {path} has {len(scale)} scales for "
                                  f"{len(group.gains)} gains")
        gains = tuple(k * g for k, g in zip(group.gains, scale, strict=True))
        groups = {**groups, name: dataclasses.replace(group, gains=gains, gain_scale=str(path))}
    return groups
