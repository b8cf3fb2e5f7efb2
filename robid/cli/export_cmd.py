"""``robid export TRAJ.json --format {csv,krl,rapid,urscript} --out FILE [--motor-side [--robot ROBOT]]``: controller
program or sampled CSV, of the link trajectory or of an elastic robot's motor-side reference."""

from __future__ import annotations

import argparse
import sys

FORMATS = ("csv", "krl", "rapid", "urscript")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="controller program (KRL, RAPID, URScript) or sampled CSV",
        description="Write the excitation as a controller program or a CSV file (t, q*, qd*, qdd*). Every "
        "program is parsed back, re-sampled at the controller's interpolation rate and checked against the "
        "trajectory's limits before it is written (see docs/excitation.md). With --motor-side, the program "
        "commands an elastic robot's motor-side reference theta instead of the link trajectory q "
        "(docs/elastic.md, 'Motor-side references').",
    )
    p.add_argument("trajectory", metavar="TRAJ.json", help="excitation trajectory file written by robid design")
    p.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="csv: sampled t [s], q [rad, m for prismatic joints], qd, qdd; krl (KUKA, deg), rapid (ABB, deg), "
        "urscript (Universal Robots, rad)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="output file (KRL: FILE.src and FILE.dat)")
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="HZ",
        help="point / servo rate in Hz (default: csv 250, urscript 500, krl and rapid the sparsest that passes)",
    )
    p.add_argument("--periods", type=int, default=1, metavar="N",
                   help="number of excitation periods written (default 1)")
    _add_controller_arguments(p)
    p.set_defaults(func=run)


def _add_controller_arguments(p) -> None:
    """The options that fit the program to a controller and a cell: joint signs and offsets, speed scale, first
    run, motor side, robot."""
    p.add_argument(
        "--joint-signs", default=None, metavar="S1,S2,...",
help="per-joint sign, +1 or -1: controller = sign * robid + offset"
    )
    p.add_argument(
        "--joint-offsets",
        default=None,
        metavar="O1,O2,...",
        help="per-joint offsets in controller units (deg for krl/rapid, rad for urscript)",
    )
    p.add_argument(
        "--speed-scale", type=float, default=1.0, metavar="S",
        help="run the design at S (0 < S <= 1) of its speed on the same path: period T/S, velocities x S, "
        "accelerations x S^2; the program states its speeds and the parse-back checks them (default 1)")
    p.add_argument(
        "--first-run", action="store_true",
        help="the program of a first run on a new cell: --speed-scale 0.1 (the whole path at a tenth of the speed)")
    p.add_argument(
        "--motor-side",
        action="store_true",
        help="command the motor-side positions theta (joint units: what a controller closing its loops on the "
        "motor encoders tracks) that make the links of an elastic robot follow the design: theta = q + K^-1 "
        "tau_link (+ spring damping); stated in the program's header, checked against the limits as written "
        "(urscript: rest-to-rest designs only)",
    )
    p.add_argument(
        "--robot",
        default=None,
        metavar="ROBOT",
        help="robot file (.yaml, .urdf) or built-in name (default: the robot TRAJ.json was designed for), for "
        "--motor-side and for checking the program against the design's Cartesian and collision limits",
    )


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
    commanded = _motor_side(args, tf) if args.motor_side else None
    workspace = _workspace_model(args, tf)
    if commanded is None and workspace is None and args.robot is not None:
        raise RobidInputError("--robot: only used with --motor-side or a design with Cartesian or collision limits")
    scale = 0.1 if args.first_run else args.speed_scale
    if args.first_run and args.speed_scale != 1.0:
        raise RobidInputError("--first-run is --speed-scale 0.1: give one of them")
    options = ProgramOptions(periods=args.periods, rate=args.rate, signs=signs, offsets=offsets, commanded=commanded,
                             speed_scale=scale, workspace_model=workspace)
    try:
        result = export_program(tf, args.format, args.out, options)
    finally:
        for warning in [] if commanded is None else commanded.warnings:
            sys.stderr.write(f"robid: warning: motor-side: {warning}\n")
    for path in result.paths:
        print(f"wrote {path}")
    side = "" if commanded is None else f"motor-side positions of {commanded.robot_label}; "
    print(f"{side}rate {result.rate:g} Hz; parse-back check: {result.check.summary()}")
    from robid.excitation.programs.speed import slowed, speed_lines

    for line in speed_lines(slowed(tf, scale), periods=args.periods)[1:]:
        print(line)
    return 0


def _workspace_model(args: argparse.Namespace, tf):
    """The robot model the program's Cartesian and collision limits are checked with (docs/excitation.md,
    "Collisions"): ``--robot`` or the design's robot; None when the design has no such limits."""
    import robid
    from robid.errors import RobidInputError

    if not tf.cartesian and not (tf.design or {}).get("collision"):
        return None
    robot = args.robot or tf.design.get("robot")
    if not robot:
        raise RobidInputError(f"{args.trajectory} has Cartesian or collision limits but names no robot "
                              "(design.robot): give --robot ROBOT to check the program against them")
    try:
        return robid.load_robot(str(robot)).model
    except RobidInputError as exc:
        origin = "" if args.robot else f" (the robot {args.trajectory} was designed for; give --robot ROBOT)"
        raise RobidInputError(f"the program's Cartesian and collision limits: {exc}{origin}") from None


def _motor_side(args: argparse.Namespace, tf):
    """The motor-side reference of ``--robot`` (default: the robot the design names) for the trajectory."""
    from robid.elastic.program_reference import MotorSidePath
    from robid.errors import RobidInputError

    robot = args.robot or tf.design.get("robot")
    if not robot:
        raise RobidInputError(f"--motor-side: {args.trajectory} names no robot (design.robot): give --robot ROBOT")
    try:
        return MotorSidePath(robot, tf.trajectory, str(robot))
    except RobidInputError as exc:
        origin = "" if args.robot else f" (the robot {args.trajectory} was designed for; give --robot ROBOT)"
        raise RobidInputError(f"--motor-side: {exc}{origin}") from None
