"""``robid predict ROBOT RESULT.json MEAS.csv --out PRED.csv``: predicted torques at the file's own times."""

from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="predicted joint torques for a measurement",
        description="Predict the joint torques of a measurement with an identified parameter set: columns t, "
        "tau1.. at the measurement's own time stamps (NaN in the filter's trimmed edges).",
    )
    p.add_argument("robot", metavar="ROBOT")
    p.add_argument("result", metavar="RESULT.json")
    p.add_argument("measurement", metavar="MEAS")
    p.add_argument("--out", required=True, metavar="PRED.csv")
    p.add_argument("--mapping", metavar="MAP.yaml")
    p.add_argument("--cutoff", type=float, metavar="HZ", help="low-pass cut-off for the derivatives")
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
    pred = predict_file(robot, record, args.measurement, mapping=args.mapping, cutoff_hz=args.cutoff)
    columns = ["t"] + [f"tau{j + 1}" for j in range(robot.dof)]
    write_csv(args.out, columns, np.column_stack([pred.t, pred.tau]), digits=17)
    sys.stdout.write(f"{args.out}: {len(pred.t)} samples; {pred.note}\n")
    return 0
