"""``robid campaign CAMPAIGN.yaml [CAMPAIGN.yaml ...] [--out DIR] [--force]``: run scripted identification
campaigns, one after the other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "campaign",
        help="run a scripted campaign: design, export, measure or simulate, identify, validate, report",
        description="Run the steps of CAMPAIGN.yaml (docs/campaign.md). Artefacts go to trajectories/NAME/, "
        "measurements/NAME/ and reports/NAME/ under --out (default: the current folder); steps whose inputs "
        "did not change are not recomputed.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN.yaml", nargs="+",
                   help="campaign files, run in the order given (all are read and checked first)")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="root folder of the artefacts: trajectories/, measurements/, reports/ (default .)")
    p.add_argument("--force", action="store_true", help="recompute every step, even those whose inputs did not change")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robid.campaign import read_campaign

    specs = [read_campaign(path) for path in args.campaign]  # every file checked before any step runs
    names = [s.name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        from robid.errors import RobidInputError

        raise RobidInputError(f"campaign name {twice[0]!r} is used by two files: their artefacts would collide")
    for spec in specs:
        execute(spec, args.out, args.force)
    return 0


def execute(spec, out, force: bool) -> int:
    from robid import progress
    from robid.campaign import run_campaign
    from robid.cli.identify_cmd import nrmse_line

    progress.show_steps()
    run = run_campaign(spec, out, force=force)  # its step lines go to the log (robid.progress)
    w = sys.stdout.write
    w(f"campaign {spec.name}: {len(run.recomputed)} of {len(run.steps)} steps recomputed\n")
    for line in run.record.choices:  # what identification chose where the campaign file left it open
        w(f"chose {line}\n")
    for r in run.record.runs:
        w(f"processing {r.role} {Path(r.file).name}: {r.line()}\n")
    w(f"identification NRMSE [%] (all identification runs): {nrmse_line(run.record.metrics)}\n")
    for v in run.record.validation_data:
        w(f"validation {Path(v.file).name} NRMSE [%]: {nrmse_line(v.fit)}\n")
    w(f"result: {run.result_path}\n")
    if run.report_path is not None:
        w(f"report: {run.report_path}\n")
    return 0
