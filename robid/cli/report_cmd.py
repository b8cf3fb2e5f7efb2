"""``robid report RESULT.json [--validate MEAS.csv ...] --out REPORT.html``: the self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from robid.cli.process_cmd import add_screening_arguments, screening_policy
from robid.errors import RobidInputError


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="self-contained HTML report of an identification result",
        description="Write one self-contained HTML file (inline figures and CSS, no scripts, no network) with "
        "verdicts, the robot model, the excitation, data quality, the parameter table, predicted versus measured "
        "torque with prediction bands, and friction/compensator curves (docs/report.md), all from what RESULT.json "
        "holds: no measurement is read again. Validation files given with --validate are processed with the options "
        "stored in RESULT.json and predicted with its values.",
    )
    p.add_argument("result", metavar="RESULT.json", help="identification result written by robid identify")
    p.add_argument("--out", required=True, metavar="REPORT.html", help="HTML file to write (self-contained)")
    p.add_argument(
        "--validate",
        nargs="+",
        metavar="MEAS",
        help="validation measurement files to show instead of those stored in RESULT.json",
    )
    p.add_argument(
        "--robot",
        metavar="ROBOT",
        help="robot file (docs/robot-file.md) or built-in name (default: RESULT.json's robot_source if it "
        "exists, else its robot name)",
    )
    p.add_argument("--trajectory", metavar="TRAJ.json", help="the excitation trajectory written by robid design")
    p.add_argument(
        "--truth",
        metavar="TRUTH.json",
        help="reference values for the parameter table, e.g. from robid simulate --truth",
    )
    p.add_argument("--mapping", metavar="MAP.yaml",
                   help="mapping file: layout and units of the --validate files (default: the stored one)")
    p.add_argument("--title", metavar="TEXT", help="page title (default: from RESULT.json)")
    p.add_argument(
        "--good-nrmse",
        type=float,
        default=5.0,
        metavar="PERCENT",
        help="validation NRMSE in %% below which a joint's fit is good (default 5)",
    )
    p.add_argument(
        "--acceptable-nrmse",
        type=float,
        default=10.0,
        metavar="PERCENT",
        help="NRMSE in %% below which a fit is acceptable (default 10)",
    )
    p.add_argument(
        "--good-coverage",
        type=float,
        default=90.0,
        metavar="PERCENT",
        help="share of a joint's samples, in %%, that must lie inside the 95 %% prediction band for a good fit "
        "(default 90)",
    )
    add_screening_arguments(p, "screening of the --validate files (row checks)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robid import progress
    from robid.report import VerdictThresholds, write_report_from_file

    progress.show_steps()
    out = Path(args.out)
    inputs = [args.result, *(args.validate or []), args.trajectory, args.truth]
    for f in filter(None, inputs):
        if Path(f).exists() and out.exists() and out.resolve() == Path(f).resolve():
            raise RobidInputError(f"{out}: --out would overwrite an input; choose another file")
    if not 0 <= args.good_coverage <= 100:
        raise RobidInputError(f"--good-coverage: a percentage 0..100, got {args.good_coverage:g}")
    if not 0 < args.good_nrmse <= args.acceptable_nrmse:
        raise RobidInputError(
            f"--good-nrmse/--acceptable-nrmse: expected 0 < good <= acceptable, got "
            f"{args.good_nrmse:g} and {args.acceptable_nrmse:g}"
        )
    # the screening options replace the stored screening only when the user gave one of them
    changed = (args.max_gap, args.max_drop) != (10.0, 5.0)
    custom_policy = args.drop_bad_rows or args.allow_constant or args.allow_saturated or changed
    t0 = time.perf_counter()
    path = write_report_from_file(
        out,
        args.result,
        robot=args.robot,
        validate=args.validate,
        trajectory=args.trajectory,
        truth=args.truth,
        title=args.title,
        mapping=args.mapping,
        policy=screening_policy(args) if custom_policy else None,
        thresholds=VerdictThresholds(
            nrmse_good_percent=args.good_nrmse,
            nrmse_acceptable_percent=args.acceptable_nrmse,
            band_coverage_good_percent=args.good_coverage,
        ),
    )
    size = path.stat().st_size
    sys.stdout.write(f"wrote {path} ({size / 1e6:.2f} MB) in {time.perf_counter() - t0:.1f} s\n")
    return 0
