"""The virtual demo fleet (``robid fleet --demo``, docs/fleet.md "Demo"): six robots of two small built-in types,
each identified at two dates on the virtual robot.

* ``do_2r_elastic`` (planar 2R, identified rigid: terms rigid, rotor, viscous, coulomb): serials DO-101..DO-103;
  DO-102's viscous friction on J2 grows by 40 % at the second date (a worn gearbox).
* ``tx200_3axis`` (3 axes, spring compensator on J2): serials TX-201..TX-203; TX-202's compensator spring stiffness
  is 15 % lower at the second date (a tired spring, the leak of a gas-spring compensator).

Each robot is its own individual: its link masses and inertias, friction and compensator stiffness are the nominal
ones times a few per cent drawn from a generator seeded by its serial number, written as a robot file per robot
and date (``<out>/robots/<serial>-<date>.yaml``, the truth its virtual runs simulate). The fleet file itself is
written to ``<out>/fleet.yaml``, so ``robid fleet <out>/fleet.yaml`` runs the same fleet.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from pathlib import Path

#: the demo's dates
DATES = ("2025-03-03", "2025-09-01")


@dataclass(frozen=True)
class DemoRobot:
    serial: str
    robot: str  # built-in type
    installation: str
    terms: tuple[str, ...] | None
    #: (date index, joint index, what, factor): the fault injected from that date on
    fault: tuple[int, int, str, float] | None = None


ROBOTS = (
    DemoRobot("DO-101", "do_2r_elastic", "line 1, cell 1", ("rigid", "rotor", "viscous", "coulomb")),
    DemoRobot("DO-102", "do_2r_elastic", "line 1, cell 2", ("rigid", "rotor", "viscous", "coulomb"),
              fault=(1, 1, "viscous", 1.40)),
    DemoRobot("DO-103", "do_2r_elastic", "line 2, cell 1", ("rigid", "rotor", "viscous", "coulomb")),
    DemoRobot("TX-201", "tx200_3axis", "hall 3, press 1", None),
    DemoRobot("TX-202", "tx200_3axis", "hall 3, press 2", None, fault=(1, 1, "stiffness", 0.85)),
    DemoRobot("TX-203", "tx200_3axis", "hall 4, press 1", None),
)

#: small designs and short runs: the demo runs in minutes on two cores
DESIGN = {"harmonics": 4, "period": 6, "starts": 1, "grid_points": 120, "max_iterations": 30}
VALID_DESIGN = {"harmonics": 4, "period": 5, "starts": 1, "grid_points": 100, "max_iterations": 20}


def demo_campaign(robot_file: str, terms, seed: int, ident_periods: int = 3, rate: float = 200.0,
                  design: dict | None = None, valid_design: dict | None = None) -> dict:
    """An inline campaign: two designs, two noisy runs of the virtual robot (seeds ``seed``, ``seed + 1``),
    identification on one, validation on the other, no HTML report per campaign (the fleet report shows them)."""
    camp = {
        "name": "identification",
        "robot": robot_file,
        "trajectories": {"ident": {"spec": {**(design or DESIGN), "seed": 1}},
                         "valid": {"spec": {**(valid_design or VALID_DESIGN), "seed": 2}}},
        "measurements": {
            "ident": {"simulate": {"trajectory": "ident", "periods": ident_periods, "noise": "realistic",
                                   "seed": seed, "rate": rate}},
            "valid": {"simulate": {"trajectory": "valid", "periods": 2, "noise": "realistic", "seed": seed + 1,
                                   "rate": rate}},
        },
        "identification": {"measurements": ["ident"], "validation": ["valid"]},
        "report": False,
    }
    if terms:
        camp["terms"] = list(terms)
    return camp


def individual_robot(nominal: dict, serial: str, spread: float = 0.03) -> dict:
    """The robot file's mapping with this robot's own values: every link's mass and inertia tensor, every
    friction coefficient and compensator stiffness times ``1 + spread * u``, u ~ N(0, 1) clipped to [-2, 2], from a
    generator seeded by the serial number (the centre of mass is kept: the masses scale the first moments)."""
    import numpy as np

    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(serial.encode()).digest()[:8], "little"))
    data = copy.deepcopy(nominal)
    data["name"] = f"{data.get('name', 'robot')}-{serial}".lower()

    def factor() -> float:
        return float(1.0 + spread * np.clip(rng.standard_normal(), -2.0, 2.0))

    for joint in data["joints"]:
        link = joint.get("link")
        if link:
            link["mass"] = float(link["mass"]) * factor()
            f = factor()  # one factor per tensor: a physically consistent tensor stays consistent
            link["inertia"] = [float(v) * f for v in link["inertia"]]
        for key in ("viscous", "coulomb"):
            if joint.get("friction", {}).get(key):
                joint["friction"][key] = float(joint["friction"][key]) * factor()
        comp = joint.get("compensator")
        if comp and comp.get("type") == "spring":
            comp["stiffness"] = float(comp["stiffness"]) * factor()
    return data


def _with_fault(data: dict, joint: int, what: str, factor: float) -> dict:
    data = copy.deepcopy(data)
    j = data["joints"][joint]
    if what == "stiffness":
        j["compensator"]["stiffness"] = float(j["compensator"]["stiffness"]) * factor
    else:
        j["friction"][what] = float(j["friction"][what]) * factor
    return data


def write_demo_fleet(out: str | Path, robots=ROBOTS, dates=DATES, campaign_kwargs: dict | None = None) -> Path:
    """Write the demo's robot files and fleet file under ``out``; returns the fleet file."""
    import yaml

    from robid.io.files import read_yaml, write_atomic
    from robid.model.loader import builtin_robot_path

    out = Path(out)
    robot_dir = out / "robots"
    robot_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for n, r in enumerate(robots):
        own = individual_robot(read_yaml(builtin_robot_path(r.robot)), r.serial)
        idents = []
        for d, date in enumerate(dates):
            data = own
            if r.fault is not None and d >= r.fault[0]:
                data = _with_fault(own, r.fault[1], r.fault[2], r.fault[3])
            path = robot_dir / f"{r.serial}-{date}.yaml"
            write_atomic(path, yaml.safe_dump(data, sort_keys=False, width=120))
            seed = 1000 + 100 * n + 10 * d
            idents.append({"date": date, "campaign": demo_campaign(f"robots/{path.name}", r.terms, seed,
                                                                   **(campaign_kwargs or {}))})
        entries.append({"serial": r.serial, "robot": r.robot, "installation": r.installation,
                        "identifications": idents})
    fleet = {"robid_fleet": 1, "name": "demo", "description": "robid fleet --demo: six virtual robots, two dates",
             "robots": entries}
    path = out / "fleet.yaml"
    write_atomic(path, "# written by robid fleet --demo (robid/fleet/demo.py)\n"
               + yaml.safe_dump(fleet, sort_keys=False, default_flow_style=None, width=120))
    return path
