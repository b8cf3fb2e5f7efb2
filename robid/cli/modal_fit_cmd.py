"""``robid modal-fit ROBOT DATA.csv|yaml [--unknowns ...] [--bound NAME=LO:HI] [--json]``: joint stiffness and
damping from measured modes (robid/elastic/modal_fit.py)."""

from __future__ import annotations

import argparse
import json
import sys

from robid.errors import RobidInputError


def register(sub) -> None:
    p = sub.add_parser(
        "modal-fit",
        help="joint stiffness and damping from measured natural frequencies and damping ratios",
        description="Fit the elastic joints' stiffness and damping to measured modes at several poses (Do 2021 "
        "chapter 3: determinant residual of the linearised closed loop, bounded least squares from many "
        "seeded starts) and report how well the data determine each unknown. DATA: CSV with one column per "
        "joint (the pose), frequency_hz, damping_ratio (fraction) and optionally mode; or YAML, a list of "
        "{pose, frequency_hz, damping_ratio, mode} (robid/elastic/modal_fit.py).",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("data", metavar="DATA",
                   help="measured modes, .csv or .yaml: pose [rad, m], frequency_hz [Hz], damping_ratio [-]")
    p.add_argument("--unknowns", metavar="LIST", default="stiffness,link_viscous,motor_viscous",
                   help="comma-separated kinds (stiffness, damping, link_viscous, motor_viscous: every elastic "
                   "joint) or JOINT.kind names; default Do's stiffness,link_viscous,motor_viscous")
    p.add_argument("--bound", action="append", default=[], metavar="NAME=LO:HI",
                   help="bounds of a kind or of one JOINT.kind (repeatable), SI: stiffness N m/rad, damping N m s/rad; "
                   "default stiffness 0:5000, dampings 0:100 (the thesis's example)")
    p.add_argument("--motors", choices=("controlled", "locked"), default="controlled",
                   help="motor-side PD loop of the robot file (default) or rotors held still during the test")
    p.add_argument("--starts", type=int, default=60, metavar="N", help="number of multi-start points (default 60)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the start points (default 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import robid
    from robid.elastic.modal_fit import fit_stiffness_damping
    from robid.io.modal_file import read_modal_measurements

    robot = robid.load_robot(args.robot)
    data = read_modal_measurements(args.data, robot.model)
    unknowns = [s.strip() for s in args.unknowns.split(",") if s.strip()]
    result = fit_stiffness_damping(robot, data, unknowns, motors=args.motors, bounds=_bounds(args.bound),
                                   starts=args.starts, seed=args.seed)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    s = result.sensitivity
    w(f"{robot.model.name}: {len(data)} measured modes, {len(result.unknowns)} unknowns, motors {result.motors}\n")
    w(f"F = {result.objective:.4g} (residual norm {result.residual_norm:.4g}); {result.converged_to_best} of "
      f"{result.starts} starts reached the best minimum (seed {result.seed})\n")
    w(f"{'unknown':<22} {'value':>11} {'bounds':>15} {'robot file':>11} {'rel. std':>9}  identifiability\n")
    for i, u in enumerate(result.unknowns):
        rel = f"{100 * s.relative_std[i]:.3g} %" if s.relative_std[i] < 1e6 else "inf"
        note = "determined" if s.determined[i] else "NOT determined"
        if result.at_bound[i]:
            note += " (at a bound)"
        w(f"{u.name:<22} {result.values[i]:>11.5g} {f'[{u.lower:g}, {u.upper:g}]':>15} "
          f"{result.robot_values[i]:>11.5g} {rel:>9}  {note}\n")
    w(f"relative std for independent errors of {100 * s.frequency_sigma:g} % in frequency and "
      f"{100 * s.damping_sigma:g} points in damping ratio; singular values "
      + ", ".join(f"{v:.3g}" for v in s.singular_values) + "\n")
    return 0


def _bounds(items: list[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for item in items:
        name, _, span = item.partition("=")
        lo, _, hi = span.partition(":")
        try:
            out[name.strip()] = (float(lo), float(hi))
        except ValueError:
            raise RobidInputError(f"--bound {item!r}: expected NAME=LO:HI, e.g. stiffness=0:5000") from None
    return out
