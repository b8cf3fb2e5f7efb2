"""``robid demo [--out DIR]``: the built-in campaign on the built-in virtual industrial robot, end to end."""

from __future__ import annotations

import argparse
import math
import sys
from importlib import resources
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="the built-in campaign on the virtual heavy industrial robot",
        description="Design, KRL program, virtual-robot measurements with realistic noise, identification "
        "(with the stiffness and damping of the elastic axes 1-3), validation on a second trajectory and HTML "
        "report for the built-in robot kr_heavy (docs/campaign.md).",
    )
    p.add_argument("--out", default="robid-demo", metavar="DIR",
                   help="artefact folder: trajectories/, measurements/ and reports/ "
                   "go below it (default ./robid-demo)")
    p.add_argument("--force", action="store_true", help="recompute every step, even those whose inputs did not change")
    p.set_defaults(func=run)


def demo_campaign_path() -> Path:
    return Path(str(resources.files("robid.campaign") / "demo.yaml"))


#: units of the elastic parameters the demo prints
SPRING_UNITS = {"k": "N m/rad", "d": "N m s/rad"}


def run(args: argparse.Namespace) -> int:
    from robid.campaign import read_campaign
    from robid.cli.campaign_cmd import execute
    from robid.io.result_file import read_result

    spec = read_campaign(demo_campaign_path())
    status = execute(spec, args.out, args.force)
    result = Path(args.out) / "reports" / spec.name / "result.json"
    if status == 0 and result.exists():
        sys.stdout.write(spring_lines(read_result(result)))
    return status


def spring_lines(record) -> str:
    """The stiffness and damping of the elastic axes with their std, beside the virtual robot's truth: one line
    each (empty for a record without them)."""
    truth = dict(zip(record.names, record.references().get("truth", [None] * len(record.names)), strict=True))
    lines = []
    for p in record.base_parameters:
        prefix, _, joint = p.name.partition("_")
        if prefix not in SPRING_UNITS or not joint:
            continue
        true = truth.get(p.name)
        known = true is not None and math.isfinite(true) and p.std > 0
        beside = f"   truth {true:.4g} ({(p.value - true) / p.std:+.1f} std)" if known else ""
        lines.append(f"  {p.name:6s} {p.value:.5g} +- {p.std:.2g} {SPRING_UNITS[prefix]}{beside}\n")
    return ("elastic axes (identified, virtual robot's truth):\n" + "".join(lines)) if lines else ""
