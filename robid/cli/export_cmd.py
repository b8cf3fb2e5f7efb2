"""``robid export TRAJ.json --format {csv,krl,rapid,urscript} --out FILE``: controller program or sampled CSV."""

from __future__ import annotations

import argparse

FORMATS = ("csv", "krl", "rapid", "urscript")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="controller program (KRL, RAPID, URScript) or sampled CSV",
        description="Write the excitation as a controller program or a CSV file (t, q*, qd*, qdd*). Every "
        "program is parsed back, re-sampled at the controller's interpolation rate and checked against the "
        "trajectory's limits before it is written (see docs/excitation.md).",
    )
    p.add_argument("trajectory", metavar="TRAJ.json")
    p.add_argument("--format", required=True, choices=FORMATS)
    p.add_argument("--out", required=True, metavar="FILE", help="output file (KRL: FILE.src and FILE.dat)")
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="HZ",
        help="point / servo rate (default: csv 250, urscript 500, krl and rapid the sparsest that passes)",
    )
    p.add_argument("--periods", type=int, default=1, metavar="N", help="excited periods (default 1)")
    p.add_argument(
        "--joint-signs", default=None, metavar="S1,S2,...", help="controller = sign * robid + offset, per joint (+1/-1)"
    )
    p.add_argument(
        "--joint-offsets",
        default=None,
        metavar="O1,O2,...",
        help="per-joint offsets in controller units (deg for krl/rapid, rad for urscript)",
    )
    p.set_defaults(func=run)


def _numbers(text: str | None, option: str, dof: int):
    from robid.errors import RobidInputError

    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise RobidInputError(f"{option}: expected {dof} comma-separated numbers, got {text!r}") from None
    if len(values) != dof:
        raise RobidInputError(f"{option}: expected {dof} values, got {len(values)}")
    return values


def run(args: argparse.Namespace) -> int:
    from robid.errors import RobidInputError
    from robid.excitation.programs import ProgramOptions, export_program
    from robid.excitation.trajectory_file import load_trajectory

    tf = load_trajectory(args.trajectory)
    dof = tf.trajectory.dof
    signs = _numbers(args.joint_signs, "--joint-signs", dof)
    if signs is not None and any(abs(s) != 1.0 for s in signs):
        raise RobidInputError(f"--joint-signs: every sign must be 1 or -1, got {args.joint_signs!r}")
    offsets = _numbers(args.joint_offsets, "--joint-offsets", dof)
    options = ProgramOptions(periods=args.periods, rate=args.rate, signs=signs, offsets=offsets)
    result = export_program(tf, args.format, args.out, options)
    for path in result.paths:
        print(f"wrote {path}")
    print(f"rate {result.rate:g} Hz; parse-back check: {result.check.summary()}")
    return 0
