"""Drift of identified parameters across a fleet (docs/fleet-drift.md).

Two checks on the base parameters of :class:`robid.fleet.results.FleetResult` records:

* **between identifications** of the same robot (consecutive dates): the change ``b - a`` of a parameter is
  flagged when ``|b - a| > z_between * sqrt(std_a^2 + std_b^2)`` (the two estimates are independent: different
  measurements) **and** ``|b - a| >= min_change_percent`` of ``|a|`` (a statistically certain change of 1 % is no
  maintenance finding);
* **population**: at each date and per robot type, a robot whose value lies more than ``z_population`` robust
  scales from the type's median, the scale being ``max(1.4826 MAD, scale_floor_percent of |median|, median std
  of the estimates)`` (healthy robots differ by a few percent; the floor keeps that from being called an
  outlier). Only with at least ``min_robots`` robots of the type at that date.

Only base parameters that are well-identified in every record compared are used. Maintenance-relevant ones
(viscous ``fv_*`` and Coulomb ``fc_*`` friction, compensator ``comp_*``, joint stiffness ``k_*``, each standing
for its own standard parameter, not grouped) are flagged by default; the others are analysed and tabulated but
only flagged with ``maintenance_only=False`` (then marked not maintenance relevant).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from robid.fleet.results import FleetResult

BETWEEN = "between identifications"
POPULATION = "population"
WELL = "well-identified"

#: family of a base parameter name (before ``_<joint>``) -> (what it is, cause when up, cause when down)
_MAINTENANCE = {
    "fv": ("viscous friction", "gearbox wear or lubricant ageing?", "lubricant change or warmer gearbox?"),
    "fc": ("Coulomb friction", "gearbox or bearing wear?", "run-in or lubricant change?"),
    "comp_p0": ("compensator pressure", "refilled or overfilled?", "gas leak?"),
    "comp_k": ("compensator spring stiffness", "spring replaced?", "spring fatigue or break?"),
    "comp_kl0": ("compensator spring preload (k l0)", "spring replaced or re-tensioned?", "spring fatigue or break?"),
    "k": ("joint stiffness", "gearbox replaced?", "gearbox wear or backlash?"),
}


@dataclass(frozen=True)
class DriftFlag:
    """One flagged parameter of one robot. ``kind``: ``"between identifications"`` (``value_from`` at
    ``date_from``, ``value_to`` at ``date_to``) or ``"population"`` (``value_from`` is the type's median at
    ``date_to``, ``date_from`` the same date). ``uncertainty``: the combined std (between) or the robust scale
    (population); ``score = change / uncertainty``."""

    robot_type: str
    serial: str
    parameter: str
    kind: str
    date_from: str
    date_to: str
    value_from: float
    value_to: float
    change: float
    change_percent: float
    uncertainty: float
    score: float
    maintenance_relevant: bool
    meaning: str

    @property
    def summary(self) -> str:
        when = f"{self.date_from} -> {self.date_to}" if self.kind == BETWEEN else f"at {self.date_to}, vs type median"
        return (
            f"{self.serial} ({self.robot_type}) {self.parameter}: {self.meaning}; {self.value_from:.5g} -> "
            f"{self.value_to:.5g} ({self.change_percent:+.1f} %, {abs(self.score):.1f} x {self.uncertainty:.3g}), "
            f"{self.kind} {when}"
        )


@dataclass(frozen=True)
class ParameterTable:
    """The base parameters of one robot type as the analysis saw them: ``parameters`` (maintenance-relevant
    first, then in record order), ``columns`` ((serial, date) of every identification that ran, by serial then
    date), and per parameter one tuple per column of ``values``, ``std`` and ``classes`` (None where the record
    has no value). ``maintenance``: per parameter, whether it is maintenance relevant."""

    robot_type: str
    parameters: tuple[str, ...]
    maintenance: tuple[bool, ...]
    columns: tuple[tuple[str, str], ...]
    values: tuple[tuple[float | None, ...], ...]
    std: tuple[tuple[float | None, ...], ...]
    classes: tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True)
class FleetDrift:
    """The drift analysis of a fleet: flags (maintenance-relevant first, then by score), notes (what was left
    out and why), one :class:`ParameterTable` per robot type, and the thresholds used."""

    flags: tuple[DriftFlag, ...]
    notes: tuple[str, ...]
    tables: tuple[ParameterTable, ...]
    z_between: float
    z_population: float
    min_change_percent: float
    scale_floor_percent: float
    min_robots: int

    def table(self, robot_type: str) -> ParameterTable:
        for t in self.tables:
            if t.robot_type == robot_type:
                return t
        raise KeyError(robot_type)

    @property
    def maintenance_flags(self) -> tuple[DriftFlag, ...]:
        return tuple(f for f in self.flags if f.maintenance_relevant)


def describe(parameter: str, joints: Sequence[str], grouped: bool = False) -> tuple[bool, str, str, str]:
    """(maintenance relevant, what it is, cause when up, cause when down) of a base parameter name."""
    joint = next((j for j in sorted(joints, key=len, reverse=True) if parameter.endswith("_" + j)), None)
    family = parameter[: -len(joint) - 1] if joint else parameter
    if family in _MAINTENANCE and not grouped:
        what, up, down = _MAINTENANCE[family]
        return True, f"{what} of {joint}" if joint else what, up, down
    return False, parameter + (" (grouped)" if grouped else ""), "", ""


def _meaning(parameter: str, joints: Sequence[str], grouped: bool, change_percent: float, kind: str) -> str:
    relevant, what, up, down = describe(parameter, joints, grouped)
    direction = "up" if change_percent > 0 else "down"
    text = f"{what} {direction} {abs(change_percent):.0f} %"
    if kind == POPULATION:
        text += " from the type's median"
    cause = up if change_percent > 0 else down
    return f"{text} ({cause})" if relevant and cause else text


def _finite(x) -> bool:
    return x is not None and math.isfinite(x)


def analyse_drift(
    results: Sequence[FleetResult],
    *,
    z_between: float = 5.0,
    z_population: float = 4.0,
    min_change_percent: float = 5.0,
    scale_floor_percent: float = 5.0,
    min_robots: int = 5,
    maintenance_only: bool = True,
) -> FleetDrift:
    """Drift flags of a fleet's identifications (module docstring; thresholds justified in docs/fleet-drift.md).

    Failed results (``record`` None or ``error`` set) are left out with a note; a robot's change is then taken
    between the identifications on either side of the failure."""
    notes: list[str] = []
    ok: list[FleetResult] = []
    for r in results:
        if r.ok:
            ok.append(r)
        else:
            notes.append(f"{r.serial} ({r.robot_type}) {r.date}: left out, {r.error or 'no record'}")
    flags: list[DriftFlag] = []
    tables: list[ParameterTable] = []
    for robot_type in sorted({r.robot_type for r in ok}):
        of_type = sorted((r for r in ok if r.robot_type == robot_type), key=lambda r: (r.serial, r.date, r.campaign))
        names = of_type[0].record.names
        same = [r for r in of_type if r.record.names == names]
        for r in of_type:
            if r.record.names != names:
                notes.append(f"{r.serial} ({robot_type}) {r.date}: other base parameters than the type's first "
                             "identification (another model or terms); left out")
        tables.append(_table(robot_type, same))
        between, between_notes = _between(robot_type, same, z_between, min_change_percent)
        population, population_notes = _population(robot_type, same, z_population, scale_floor_percent, min_robots)
        flags += between + population
        notes += [*between_notes, *population_notes]
    if maintenance_only:
        flags = [f for f in flags if f.maintenance_relevant]
    flags.sort(key=lambda f: (not f.maintenance_relevant, f.kind != BETWEEN, -abs(f.score)))
    return FleetDrift(tuple(flags), tuple(notes), tuple(tables), z_between, z_population, min_change_percent,
                      scale_floor_percent, min_robots)


def _table(robot_type: str, rows: list[FleetResult]) -> ParameterTable:
    record = rows[0].record
    relevant = [describe(p.name, record.joints, p.grouped)[0] for p in record.base_parameters]
    order = sorted(range(len(relevant)), key=lambda k: (not relevant[k], k))
    params = [[r.record.base_parameters[k] for r in rows] for k in order]
    return ParameterTable(
        robot_type=robot_type,
        parameters=tuple(record.names[k] for k in order),
        maintenance=tuple(relevant[k] for k in order),
        columns=tuple((r.serial, r.date) for r in rows),
        values=tuple(tuple(p.value if _finite(p.value) else None for p in row) for row in params),
        std=tuple(tuple(p.std if _finite(p.std) else None for p in row) for row in params),
        classes=tuple(tuple(p.identifiability for p in row) for row in params),
    )


def _between(robot_type: str, rows: list[FleetResult], z: float, min_percent: float):
    """(flags, notes) of one robot's successive identifications compared parameter by parameter."""
    out = []
    notes: list[str] = []
    by_serial: dict[str, list[FleetResult]] = {}
    for r in rows:
        by_serial.setdefault(r.serial, []).append(r)
    for serial, seq in by_serial.items():
        for a, b in zip(seq, seq[1:], strict=False):
            joints = a.record.joints
            for pa, pb in zip(a.record.base_parameters, b.record.base_parameters, strict=True):
                if pa.identifiability != WELL or pb.identifiability != WELL:
                    continue
                if "".join(pa.expression.split()) != "".join(pb.expression.split()):
                    notes.append(f"{serial} {pa.name}: expression differs between {a.date} and {b.date}; not compared")
                    continue
                if not (_finite(pa.std) and _finite(pb.std) and _finite(pa.value) and _finite(pb.value)):
                    continue
                change = pb.value - pa.value
                unc = math.hypot(pa.std, pb.std)
                percent = 100.0 * change / abs(pa.value) if pa.value != 0 else math.inf
                if unc <= 0 or abs(change) <= z * unc or abs(percent) < min_percent:
                    continue
                relevant = describe(pa.name, joints, pa.grouped)[0]
                out.append(DriftFlag(robot_type, serial, pa.name, BETWEEN, a.date, b.date, pa.value, pb.value, change,
                                     percent, unc, change / unc, relevant,
                                     _meaning(pa.name, joints, pa.grouped, percent, BETWEEN)))
    return out, notes


def _population(robot_type: str, rows: list[FleetResult], z: float, floor_percent: float, min_robots: int):
    """(flags, notes) of each robot against the type's population on each date."""
    import numpy as np

    out = []
    notes: list[str] = []
    for date in sorted({r.date for r in rows}):
        latest: dict[str, FleetResult] = {}
        for r in rows:
            if r.date == date:
                latest[r.serial] = r  # the last campaign of the day stands for the robot
        if len(latest) < min_robots:
            notes.append(f"{robot_type} {date}: {len(latest)} robot(s), fewer than {min_robots}: no population check "
                         "(a median and spread of so few robots say little)")
            continue
        group = list(latest.values())
        joints = group[0].record.joints
        for k, name in enumerate(group[0].record.names):
            ps = [(r.serial, r.record.base_parameters[k]) for r in group]
            ps = [(s, p) for s, p in ps if p.identifiability == WELL and _finite(p.value) and _finite(p.std)]
            if len(ps) < min_robots:
                continue
            x = np.array([p.value for _, p in ps])
            median = float(np.median(x))
            mad = 1.4826 * float(np.median(np.abs(x - median)))
            scale = max(mad, floor_percent / 100.0 * abs(median), float(np.median([p.std for _, p in ps])))
            if scale <= 0:
                continue
            for (serial, p), value in zip(ps, x, strict=True):
                score = (value - median) / scale
                if abs(score) <= z:
                    continue
                change = float(value - median)
                percent = 100.0 * change / abs(median) if median != 0 else math.inf
                out.append(DriftFlag(robot_type, serial, name, POPULATION, date, date, median, float(value), change,
                                     percent, scale, float(score), describe(name, joints, p.grouped)[0],
                                     _meaning(name, joints, p.grouped, percent, POPULATION)))
    return out, notes
