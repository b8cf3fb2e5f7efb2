"""``robid payload design ...`` and ``robid payload identify ...``: payload identification (docs/payload.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robid.errors import RobidInputError

#: robid.payload.estimate.MODELS and robid.payload.export.FORMATS, spelled here so that building the parser
#: loads no numerical code (tests/test_architecture.py)
MODELS = ("auto", "full", "mass-com")
FORMATS = ("krl", "rapid", "urscript", "json")

ROBOT_HELP = "robot file (.yaml, .urdf) or built-in robot name (robid robots); its last body frame is the flange frame"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "payload",
        help="design a payload excitation, identify a payload, export controller load data",
        description="Payload identification as controllers' load-data routines do it: a short wrist motion, the "
        "torque the load adds, its mass, centre of mass and inertia in the flange frame (docs/payload.md).",
    )
    sub = p.add_subparsers(dest="payload_command", metavar="STEP", parser_class=type(p),
                           help="design: the wrist excitation (TRAJ.json); identify: the payload from measured runs; "
                           "calibrate-gains: drive-gain scales from a known payload")
    _register_design(sub)
    _register_identify(sub)
    from robid.cli.payload_gains_cmd import register_calibrate_gains

    register_calibrate_gains(sub, ROBOT_HELP)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _register_design(sub) -> None:
    d = sub.add_parser(
        "design",
        help="short excitation of the wrist joints for the payload's parameters",
        description="Design a rest-to-rest Fourier motion of a few joints (default: the wrist, the last three), the "
        "others held at --pose, that maximises log det (or minimises the condition number) of the payload's ten "
        "regressor columns under the robot file's position, velocity and acceleration limits (shrunk by --margin), "
        "verified in continuous time. Writes a TRAJ.json for robid export / robid simulate.",
    )
    d.add_argument("robot", metavar="ROBOT", help=ROBOT_HELP)
    d.add_argument("--out", required=True, metavar="TRAJ.json", help="trajectory file to write (JSON)")
    d.add_argument("--joints", metavar="LIST",
                   help="moving joints, 1-based, e.g. 4,5,6 or 3-6 (default: the last three; add the joint before "
                   "a spherical wrist so that the mass gets a lever arm of its own)")
    d.add_argument("--pose", metavar="Q1,Q2,...",
                   help="the pose: every joint's position, rad (m for prismatic joints), or degrees with a 'deg' "
                   "suffix, e.g. 0,-90deg,90deg,0,0,0; the moving joints move around it (default: the middle of "
                   "each joint's range)")
    d.add_argument("--period", type=float, default=12.0, metavar="S", help="period of the motion, s (default 12)")
    d.add_argument("--harmonics", type=int, default=5, metavar="H", help="Fourier harmonics (default 5)")
    d.add_argument("--margin", type=float, default=0.1, metavar="F",
                   help="fraction by which every limit is shrunk, 0 <= F < 0.5 (default 0.1)")
    d.add_argument("--criterion", choices=("logdet", "cond"), default="logdet",
                   help="logdet (default): D-optimal, grows with the amplitude (signal over noise); cond: condition "
                   "number of the column-scaled columns, scale-free")
    d.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the optimiser starts (default 0)")
    d.add_argument("--starts", type=int, default=2, metavar="N", help="optimiser starts (default 2)")
    d.set_defaults(func=run_design)


def _register_identify(sub) -> None:
    from robid.cli.process_cmd import add_processing_arguments

    i = sub.add_parser(
        "identify",
        help="identify a payload from a loaded run and an unloaded run (or the identified model)",
        description="Process the loaded run (and the unloaded run of the same trajectory) with the signal stage, "
        "take the torque the load adds -- loaded minus unloaded, aligned in time, or loaded minus the identified "
        "model of --result -- and estimate the payload's ten inertial parameters (or mass and COM) in the "
        "flange frame by weighted least squares, with standard deviations, the parameters the motion "
        "determines and a physical-consistency check. Prints or writes the load data.",
    )
    i.add_argument("robot", metavar="ROBOT", help=ROBOT_HELP)
    i.add_argument("--loaded", required=True, metavar="MEAS", help="measurement of the run with the payload")
    ref = i.add_argument_group("reference without the payload (at least one; --unloaded preferred)")
    ref.add_argument("--unloaded", metavar="MEAS",
                     help="measurement of the same trajectory without the payload: friction and model error cancel")
    ref.add_argument("--result", metavar="RESULT.json",
                     help="identified model of this robot (robid identify); its base parameters predict the "
                     "unloaded torque")
    i.add_argument("--mapping", metavar="MAP.yaml", help="layout of measurements that are not canonical")
    i.add_argument("--unloaded-mapping", metavar="MAP.yaml", help="layout of the unloaded run (default --mapping)")
    i.add_argument("--model", choices=MODELS, default="auto",
                   help="full: ten parameters (m [kg], m c [kg m], inertia [kg m^2]); mass-com: mass and COM, the "
                   "inertia of a point mass; auto (default): full when the motion determines every parameter and "
                   "the estimate is physically consistent, else mass-com")
    i.add_argument("--format", choices=FORMATS, default="json",
                   help="krl: KUKA LOAD_DATA (kg, mm, deg, kg m^2); rapid: ABB loaddata (kg, mm, quaternion, "
                   "kg m^2); urscript: set_target_payload (kg, m, kg m^2); json: everything, SI (default)")
    i.add_argument("--tool", type=int, default=1, metavar="N", help="krl: index of LOAD_DATA (default 1)")
    i.add_argument("--out", metavar="FILE", help="write the load data here (atomically) instead of stdout")
    i.add_argument("--gains", metavar="GAINS.yaml",
                   help="drive-gain scales of robid payload calibrate-gains: each joint's payload torque is "
                   "multiplied by its scale")
    add_processing_arguments(i)
    i.set_defaults(func=run_identify)


def parse_joints(text: str | None, dof: int) -> tuple[int, ...] | None:
    """'4,5,6' or '3-6' -> 0-based joints."""
    if text is None:
        return None
    from robid.cli.process_cmd import parse_harmonics

    try:
        joints = parse_harmonics(text)
    except RobidInputError:
        raise RobidInputError(f"--joints: cannot read {text!r} (expected e.g. 4,5,6 or 3-6)") from None
    bad = [j for j in joints if j > dof]
    if bad:
        raise RobidInputError(f"--joints: joint {bad[0]} does not exist (the robot has {dof} joints)")
    return tuple(j - 1 for j in joints)


def parse_pose(text: str | None, dof: int) -> tuple[float, ...] | None:
    """'0,-90deg,...' -> one SI value per joint."""
    if text is None:
        return None
    from robid.model.units import parse_quantity

    items = [t.strip() for t in text.split(",")]
    if len(items) != dof:
        raise RobidInputError(f"--pose: expected {dof} values (one per joint), got {len(items)}")
    values = []
    for k, item in enumerate(items):
        try:
            values.append(float(item))
        except ValueError:
            values.append(parse_quantity(item, f"--pose[{k + 1}]"))
    return tuple(values)


def run_design(args: argparse.Namespace) -> int:
    import robid
    from robid.excitation.trajectory_file import save_trajectory
    from robid.payload.design import PayloadDesignSettings, default_joints, default_pose, design_payload_excitation

    if args.seed < 0:
        raise RobidInputError(f"--seed: expected an integer >= 0, got {args.seed}")
    if args.starts < 1:
        raise RobidInputError(f"--starts: expected an integer >= 1, got {args.starts}")
    if args.harmonics < 1:
        raise RobidInputError(f"--harmonics: expected an integer >= 1, got {args.harmonics}")
    robot = robid.load_robot(args.robot, terms=("rigid",))
    joints = parse_joints(args.joints, robot.dof) or default_joints(robot)
    pose = parse_pose(args.pose, robot.dof) or default_pose(robot)
    settings = PayloadDesignSettings(joints=joints, pose=pose, period=args.period, harmonics=args.harmonics,
                                     margin=args.margin, seed=args.seed, starts=args.starts,
                                     criterion=args.criterion)
    design = design_payload_excitation(robot, settings)
    save_trajectory(args.out, design.file)
    names = ", ".join(robot.joint_names[j] for j in joints)
    print(f"wrote {args.out}")
    print(f"moving {names}; period {args.period:g} s, {args.harmonics} harmonics, rest-to-rest")
    print(f"payload columns: cond {design.criteria.cond:.4g} (column-scaled), rank {design.criteria.rank}/10")
    print(f"limits: {design.check_summary}")
    if design.criteria.rank < 10:
        before = joints[0]  # 0-based index of the joint before the moving ones = its 1-based number
        hint = (f"; moving the joint before them too (--joints {before}-{joints[-1] + 1}) gives the mass a lever arm "
                "of its own (a spherical wrist sees it only with the COM along the flange axis)" if before >= 1 else "")
        sys.stderr.write(f"robid: warning: this motion determines only {design.criteria.rank} of the payload's 10 "
                         f"parameters{hint} (docs/payload.md)\n")
    if not design.check_ok:
        sys.stderr.write("robid: error: the design violates a limit (see above)\n")
        return 1
    return 0


def run_identify(args: argparse.Namespace) -> int:
    from robid.cli.process_cmd import processing_options, screening_policy
    from robid.io.files import write_atomic
    from robid.payload.export import render
    from robid.payload.identify import identify_payload

    if args.unloaded is None and args.result is None:
        raise RobidInputError("payload identify: give --unloaded MEAS or --result RESULT.json (the torque without "
                              "the payload)")
    if args.out and Path(args.out).parent and not Path(args.out).parent.is_dir():
        raise RobidInputError(f"{args.out}: --out: the folder {Path(args.out).parent} does not exist")
    if args.tool < 1:
        raise RobidInputError(f"--tool: expected an integer >= 1, got {args.tool}")
    est = identify_payload(args.robot, args.loaded, unloaded=args.unloaded, result=args.result,
                           mapping=args.mapping, unloaded_mapping=args.unloaded_mapping,
                           options=processing_options(args), policy=screening_policy(args), model=args.model,
                           gains=args.gains)
    import robid

    robot = robid.load_robot(args.robot, terms=("rigid",))
    frame = f"the flange frame (last body frame of {robot.name}, joint {robot.joint_names[-1]})"
    text = render(est, args.format, str(args.robot), frame, args.tool)
    summary = (f"payload ({est.model}, reference {est.reference}): {est.uncertainty_line()} in {frame}; "
               f"cond {est.condition_number:.3g}, {est.rows_used} rows\n")
    if args.out:
        write_atomic(args.out, text)
        sys.stdout.write(f"wrote {args.out}\n" + summary)
    else:
        sys.stdout.write(text)
        sys.stderr.write(summary)
    for note in est.notes:
        sys.stderr.write(f"note: {note}\n")
    return 0
