"""``robid predict ROBOT RESULT.json MEAS.csv --out PRED.csv``: predicted torques at the file's own times."""

from __future__ import annotations

import argparse
import sys

from robid.cli.process_cmd import add_processing_arguments, processing_overrides, screening_overrides


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predicted joint torques for a measurement, with NRMSE and RRE per joint",
        description="Predict the joint torques of a measurement with an identified parameter set, at the "
        "measurement's own time stamps. The file is processed with the options stored in RESULT.json (the file's "
        "own when identification used it, else the common ones without their period and band) unless given here. "
        "PRED.csv columns: t, tau_pred1.., tau_meas1.., residual1.., mark1.. (0 compared, 1 slower than the "
        "identification's --min-speed, 2 not predicted: filter edges or cut off). Prints NRMSE (against the "
        "processed torque) and RRE (against the measured torque) per joint over the samples marked 0 "
        "(docs/identification.md).",
    )
    p.add_argument("robot", metavar="ROBOT", help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in name "
                   "the result was identified with")
    p.add_argument("result", metavar="RESULT.json", help="identification result written by robid identify")
    p.add_argument("measurement", metavar="MEAS",
                   help="measurement file: canonical CSV (t [s], q1.. [rad, m for prismatic joints], tau1.. "
                   "[N m, N]) or any layout --mapping describes")
    p.add_argument("--out", required=True, metavar="PRED.csv",
                   help="CSV to write: t [s], tau_pred1.., tau_meas1.., residual1.. [N m, N for prismatic "
                   "joints], mark1.. (0 compared, 1 slow, 2 not predicted)")
    p.add_argument("--mapping", metavar="MAP.yaml",
                   help="mapping file: the layout and units of the measurement (default: the one stored in "
                   "RESULT.json)")
    # the processing options of identify, process and payload identify; left out, each is what RESULT.json stores
    add_processing_arguments(p, stored=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    import robid
    from robid.identification.predict import check_result_matches, predict_file
    from robid.io.files import write_csv
    from robid.io.result_file import read_result

    record = read_result(args.result)
    robot = robid.load_robot(args.robot, terms=record.terms or None)
    check_result_matches(robot, record, args.result)
    from robid.identification.stored_options import screening_policy

    policy = screening_overrides(args, screening_policy(record.processing))
    pred = predict_file(robot, record, args.measurement, mapping=args.mapping, overrides=processing_overrides(args),
                        policy=policy)
    n = robot.dof
    columns = ["t"] + [f"{prefix}{j + 1}" for prefix in ("tau_pred", "tau_meas", "residual", "mark") for j in range(n)]
    table = np.column_stack([pred.t, pred.tau_pred, pred.tau_meas, pred.residual, pred.mark])
    write_csv(args.out, columns, table, digits=17)
    w = sys.stdout.write
    counts = pred.counts()
    w(f"{args.out}: {pred.t.size} samples; (sample, joint) rows: {counts['compared']} compared, {counts['slow']} "
      f"slower than the data selection's minimum speed, {counts['not predicted']} not predicted (filter edges, "
      "cut off)\n")
    w(f"processing {args.measurement}: {pred.processing}\n")
    rows = [(name, f"{m.nrmse_percent:.3f}", f"{pred.rre_percent[j]:.3f}")
            for j, (name, m) in enumerate(zip(robot.joint_names, pred.processed.per_joint, strict=True))]
    w(aligned_table(("joint", "NRMSE [%] (processed)", "RRE [%] (measured)"), rows))
    return 0


def aligned_table(header, rows) -> str:
    """Columns padded to their widest cell (header included): the first left-aligned, numbers right-aligned."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells) -> str:
        first, *rest = (str(c) for c in cells)
        return "  ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))])

    return "".join(line(r).rstrip() + "\n" for r in (header, *rows))
