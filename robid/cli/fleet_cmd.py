"""``robid fleet FLEET.yaml [--scheduler ADDRESS] [--workers N] [--out DIR] [--force]`` and ``robid fleet --demo``:
many robots and their dated campaigns, as Dask tasks (docs/fleet.md)."""

from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "fleet",
        help="identify a fleet of robots: every robot's dated campaigns as Dask tasks, then drift flags",
        description="Run every campaign of FLEET.yaml (docs/fleet.md) under --out/<serial>/<date>/ on a local Dask "
        "cluster (or the scheduler at --scheduler), then flag the parameters that drifted between dates and write "
        "the fleet report and results table. Campaigns whose inputs did not change are not recomputed.",
    )
    p.add_argument("fleet", metavar="FLEET.yaml", nargs="?", help="the fleet file (not with --demo)")
    p.add_argument("--demo", action="store_true",
                   help="the virtual demo fleet: six robots of two types, two dates, two injected faults")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of a running Dask scheduler, tcp://host:port (default: a local cluster that "
                   "stops with the command); its workers need robid and the same paths (shared file system)")
    p.add_argument("--workers", type=int, metavar="N", default=None,
                   help="worker processes of the local cluster, one thread each (count; default: the cores); "
                   "0: no Dask, one campaign after the other in this process")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="root folder: <serial>/<date>/ per campaign, fleet-report.html, fleet-results.csv "
                   "(default: . , with --demo robid-fleet-demo)")
    p.add_argument("--force", action="store_true", help="recompute every step, even those whose inputs did not change")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from robid import progress
    from robid.errors import RobidInputError
    from robid.fleet.spec import read_fleet

    if args.demo == (args.fleet is not None):
        raise RobidInputError("fleet: give a fleet file FLEET.yaml or --demo (one of them)")
    if args.workers is not None and args.workers < 0:
        raise RobidInputError(f"--workers: expected a count >= 0, got {args.workers}")
    if args.workers is not None and args.scheduler:
        raise RobidInputError("--workers: the workers of --scheduler are started with `dask worker` (docs/fleet.md)")
    out = Path(args.out or ("robid-fleet-demo" if args.demo else "."))
    if args.demo:
        from robid.fleet.demo import write_demo_fleet
        from robid.io.files import ensure_folder

        fleet_file = write_demo_fleet(ensure_folder(out, "--out folder"))
    else:
        fleet_file = Path(args.fleet)
    spec = read_fleet(fleet_file)
    progress.show_steps()
    fleet_run = _execute(spec, out, args)
    _print(fleet_run)
    return 0 if not fleet_run.failed else 1


def _execute(spec, out, args):
    from robid.fleet.runner import run_fleet

    if args.workers == 0 and not args.scheduler:
        return run_fleet(spec, out, None, force=args.force)
    from robid.fleet.dask_engine import dask_client

    with dask_client(args.scheduler, args.workers) as client:
        return run_fleet(spec, out, client, force=args.force)


def _print(run) -> None:
    w = sys.stdout.write
    n = len(run.results)
    w(f"fleet {run.spec.name}: {n - len(run.failed)} of {n} campaigns identified, "
      f"{sum(r.recomputed for r in run.results)} recomputed, {run.seconds:.1f} s\n")
    for r in run.results:
        state = f"FAILED: {r.error}" if not r.ok else (r.result_path or "")
        w(f"  {r.robot_type:<16} {r.serial:<10} {r.date}  {state}\n")
    for note in run.notes:
        w(f"note: {note}\n")
    if run.drift is not None:
        flags = list(getattr(run.drift, "flags", ()))
        w(f"drift flags: {len(flags)}\n")
        for flag in flags:
            w(f"  {flag.summary}\n")
    if run.table_path is not None:
        w(f"table: {run.table_path}\n")
    if run.report_path is not None:
        w(f"report: {run.report_path}\n")
