"""``robid identify ROBOT MEAS.csv [MEAS2.csv ...] --out RESULT.json [--method ...]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robid.cli.process_cmd import add_processing_arguments, processing_options, screening_policy
from robid.defaults import CLOSED_LOOP_METHODS, FEEDFORWARD_KINDS, METHODS
from robid.errors import RobidInputError
from robid.requests import IDENTIFICATION_DEFAULTS, Where, estimator_request


def register(sub) -> None:
    p = sub.add_parser(
        "identify",
        help="estimate the base parameters with uncertainty and classes",
        description="Process the measurements, stack them into one least-squares problem, estimate the base "
        "parameters with their uncertainty, classify every parameter and write RESULT.json "
        "(docs/identification.md).",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("measurements", metavar="MEAS", nargs="+",
                   help="measurement files, combined into one fit: canonical CSV (t [s], "
                   "q1.. [rad, m for prismatic joints], tau1.. [N m, N]) or any layout --mapping describes")
    p.add_argument("--out", required=True, metavar="RESULT.json",
                   help="identification result to write (JSON, SI units; docs/identification.md)")
    p.add_argument("--method", choices=METHODS, default=IDENTIFICATION_DEFAULTS["method"],
                   help="estimator (default auto: eiv in the elastic layout, wls elsewhere; the choice is printed); "
                   "wls: two-step per-joint weights; idim-iv (instrumental variables) and "
                   "didim (closed-loop output error) simulate the robot's closed loop with the estimate: they need "
                   "--trajectory (the excitation the robot ran, its time 0 at the log's) and the robot file's "
                   "controller gains (docs/estimation.md, 'Closed-loop estimators'); eiv: least squares corrected for "
                   "the noise of the processed signals in the regressor (the accelerations; in the elastic layout "
                   "also the spring and damping columns), its covariance counting rows correlated within the "
                   "period (periodic runs)")
    p.add_argument("--feedforward", choices=FEEDFORWARD_KINDS, default=IDENTIFICATION_DEFAULTS["feedforward"],
                   help="idim-iv, didim: the controller's feed-forward, computed from the robot file's nominal "
                   "model on the reference: rigid (bodies, rotors, compensator; no friction), full (with the nominal "
                   "friction) or none (default rigid, as robid's virtual robot)")
    p.add_argument("--validate", nargs="+", default=[], metavar="MEAS",
                   help="validation measurement files (predicted, not used to fit)")
    p.add_argument("--compare-methods", metavar="M1,M2,...",
                   help="also estimate with these methods (e.g. wls,didim) and score each per joint on the --validate "
                   "runs (the lowest mean NRMSE is marked; RESULT.json keeps --method's values)")
    p.add_argument("--friction-models", metavar="M1,M2,...|auto|none",
                   default=IDENTIFICATION_DEFAULTS["friction_models"],
                   help="compare friction models per joint after the fit, e.g. linear,stribeck,sigmoid (chosen by "
                   "the --validate runs' error, else BIC); with the wls estimator a nonlinear model chosen on a "
                   "joint becomes the identified model (base values refitted with it; predict, the report and "
                   "export-model use it). Default auto: linear,stribeck,sigmoid on the rigid layout when the "
                   "problem is small enough (the choice is printed); none: linear friction only "
                   "(docs/estimation.md 'Nonlinear friction')")
    p.add_argument("--mapping", metavar="MAP.yaml",
                   help="mapping file: layout and units of measurements that are not canonical")
    p.add_argument("--terms",
                   help="model terms, comma-separated: rigid, rotor, viscous, coulomb, offset, compensator, "
                   "stiffness, damping, link_viscous (default: all that apply; with stiffness and damping when the "
                   "robot file declares springs and the measurements hold motor positions; the choice is printed)")
    p.add_argument("--regularization", type=float, default=1e-6,
                   metavar="W",
                   help="consistent method: weight of the pull towards the nominal values, dimensionless "
                   "(default 1e-6)")
    p.add_argument("--static-deflection", action="store_true",
                   help="the files' positions are motor-side (motor encoders only): correct them to the link by the "
                   "static deflection q = theta - K^-1 G(q) of the robot file's elastic joints (docs/elastic.md)")
    p.add_argument("--motor-encoders-only", action="store_true",
                   help="the files' positions are the motor encoders' (no link encoders) and the terms include "
                   "stiffness: reconstruct the link states from the link equations and identify the stiffness "
                   "through them (periodic runs; docs/elastic.md section 3b)")
    add_processing_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import robid
    from robid import progress
    from robid.identification import IdentificationOptions, identify
    from robid.io.result_file import write_result

    out_dir = Path(args.out).parent
    if not out_dir.is_dir():  # say so before minutes of processing, not after
        raise RobidInputError(f"{args.out}: --out: the folder {out_dir} does not exist")
    progress.show_steps()
    terms = tuple(t.strip() for t in args.terms.split(",")) if args.terms else None
    robot = robid.load_robot(args.robot, terms=terms)
    common = processing_options(args)
    chosen = estimator_request({"method": args.method, "friction_models": args.friction_models,
                                "compare_methods": args.compare_methods, "feedforward": args.feedforward},
                               Where.command_line())
    options = IdentificationOptions(
        method=chosen.method,
        processing=common,
        mapping=args.mapping,
        policy=screening_policy(args),
        regularization=args.regularization,
        file_processing=validation_processing(common, args.validate),
        static_deflection=args.static_deflection,
        motor_encoders_only=args.motor_encoders_only,
        closed_loop=closed_loop_options(args, chosen),
        friction_models=chosen.friction_models,
        compare_methods=chosen.compare_methods,
    )
    record = identify(robot, args.measurements, options, validation_files=args.validate)
    write_result(args.out, record)
    print_summary(record, args.out)
    return 0


def closed_loop_options(args: argparse.Namespace, chosen):
    """The closed-loop estimators' settings (robid.identification.closed_loop_estimation), or None; ``chosen``
    the estimator request (robid.requests.EstimatorRequest)."""
    closed = set(CLOSED_LOOP_METHODS)
    if chosen.method not in closed and not closed & set(chosen.compare_methods):
        return None
    from robid.identification.closed_loop_estimation import ClosedLoopOptions

    if not args.trajectory and chosen.method not in closed:
        return None  # the comparison lists the closed-loop methods as not computed, with the reason
    if not args.trajectory:
        raise RobidInputError("--method idim-iv, didim: give --trajectory TRAJ.json, the excitation the robot ran "
                              "(the closed loop is simulated along it)")
    return ClosedLoopOptions(trajectory=args.trajectory, feedforward=chosen.feedforward)


def validation_processing(common, files: list[str]) -> dict:
    """Per validation file, the options without the timing the command line gave (``--trajectory``,
    ``--period``, ``--harmonics``, ``--start``/``--end``, ...): they describe the identification runs; a
    validation run is another motion, whose period and band are found in its own data (or its mapping's
    design). Empty when no timing was given."""
    from robid.identification.stored_options import FILE_TIMING, without_file_timing

    if not files or all(getattr(common, k) is None for k in FILE_TIMING if k != "period_source"):
        return {}
    sys.stderr.write(
        "validation runs: processed without the period, band and time window given for the identification runs "
        "(found in their own data)\n"
    )
    own = without_file_timing(common)
    return {str(f): own for f in files}


def nrmse_line(fit) -> str:
    """'A1 0.53, A2 0.61, ...': NRMSE [%] per joint of a robid.record.TorqueFit."""
    return ", ".join(f"{m.joint} {m.nrmse_percent:.2f}" for m in fit.per_joint if m.nrmse_percent is not None)


def print_summary(record, out) -> None:
    """What ``robid identify`` prints: parameter classes, NRMSE per joint, correlated pairs, compensator lines, the
    chosen friction models and the estimator comparison when run, the physical-consistency verdict and the notes
    (robid.record.IdentificationRecord)."""
    w = sys.stdout.write
    for line in record.choices:
        w(f"chose {line}\n")
    classes: dict[str, int] = {}
    for p in record.base_parameters:
        classes[p.identifiability] = classes.get(p.identifiability, 0) + 1
    w(f"{out}: {len(record.base_parameters)} base parameters by {record.method} ("
      + ", ".join(f"{n} {c}" for c, n in sorted(classes.items())) + ")\n")
    for run in record.runs:
        w(f"processing {run.role} {run.file}: {run.line()}\n")
    w(f"identification NRMSE per joint [%]: {nrmse_line(record.metrics)}\n")
    for run in record.validation_data:
        w(f"validation {run.file} NRMSE [%]: {nrmse_line(run.fit)}\n")
    for pair in record.correlated_pairs[:10]:
        w(f"strongly correlated: {pair.first} ~ {pair.second} (corr {pair.correlation:+.3f})\n")
    for entry in record.compensator.entries if record.compensator else ():
        w(f"compensator: {entry.summary}\n")
    fm = record.friction_models
    if fm is not None:
        used = "the identified model" if fm.adopted else ("reported only" if fm.nonlinear_joints else "all linear")
        w(f"friction models (chosen by {fm.criterion}; {used}): "
          + ", ".join(f"{j} {m}" for j, m in zip(fm.joints, fm.chosen, strict=True)) + "\n")
    comparison = record.estimator_comparison
    if comparison is not None:
        scores = ", ".join(f"{s.method} {s.mean_nrmse_percent:.3g} %" if s.mean_nrmse_percent is not None
                           else f"{s.method} not computed" for s in comparison.scores)
        chosen = f"; lowest: {comparison.chosen}" if comparison.chosen else " (identification runs; none chosen)"
        w(f"estimators, mean NRMSE on the {comparison.criterion} runs: {scores}{chosen}\n")
    ph = record.physical_consistency
    if ph is not None and ph.consistent is False:
        moved = ", ".join(m.name for m in ph.moved[:5])
        w("physical consistency: the unconstrained estimate has no physically consistent standard set"
          + (f" (moved: {moved})" if moved else "") + "\n")
    for note in record.notes:
        w(f"note: {note}\n")
