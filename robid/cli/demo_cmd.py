"""``robid demo [--out DIR]``: the built-in campaign on the built-in virtual industrial robot, end to end."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="the built-in campaign on the virtual heavy industrial robot",
        description="Design, KRL program, virtual-robot measurements with realistic noise, identification, "
        "validation on a second trajectory and HTML report for the built-in robot kr_heavy (docs/campaign.md).",
    )
    p.add_argument("--out", default="robid-demo", metavar="DIR",
                   help="artefact folder: trajectories/, measurements/ and reports/ "
                   "go below it (default ./robid-demo)")
    p.add_argument("--force", action="store_true", help="recompute every step, even those whose inputs did not change")
    p.set_defaults(func=run)


def demo_campaign_path() -> Path:
    return Path(str(resources.files("robid.campaign") / "demo.yaml"))


def run(args: argparse.Namespace) -> int:
    from robid.campaign import read_campaign
    from robid.cli.campaign_cmd import execute

    return execute(read_campaign(demo_campaign_path()), args.out, args.force)
