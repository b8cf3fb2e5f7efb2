"""``robid payload calibrate-gains ROBOT --loaded MEAS --unloaded MEAS --mass KG [--com X,Y,Z] --out GAINS.yaml``:
drive-gain scales per joint from a run with a known payload (robid.payload.gains, docs/payload.md)."""

from __future__ import annotations

import argparse
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from robid.errors import RobidInputError

METHOD = ("output-error Gauss-Newton on g_j (tau_loaded - tau_unloaded)_j = Y_j pi_p(m known, COM {com}, point-mass "
          "inertia) + friction change; per-joint WLS (Gautier & Briot 2014)")


def register_calibrate_gains(sub, robot_help: str) -> None:
    """``robid payload calibrate-gains`` under the payload command's ``sub`` parsers (``robot_help``: its ROBOT
    argument's help, the payload command's)."""
    from robid.cli.process_cmd import add_processing_arguments

    c = sub.add_parser(
        "calibrate-gains",
        help="drive-gain scale per joint from a loaded and an unloaded run of a known payload",
        description="Process a run carrying a payload of known mass (and COM, if known) and the unloaded run of the "
        "same trajectory, and estimate per joint the scale g_j by which the measured torque (e.g. K i of the "
        "mapping's current gains) must be multiplied: g_j (tau_loaded - tau_unloaded)_j = payload torque + friction "
        "change (Gautier & Briot 2014). Joints whose payload torque is too small get no correction. Writes "
        "GAINS.yaml for robid payload identify --gains, with the corrected mapping gains when the mapping has "
        "current gains.",
    )
    c.add_argument("robot", metavar="ROBOT", help=robot_help)
    c.add_argument("--loaded", required=True, metavar="MEAS", help="measurement of the run with the known payload")
    c.add_argument("--unloaded", required=True, metavar="MEAS", help="the same trajectory without the payload")
    c.add_argument("--mass", required=True, type=float, metavar="KG", help="the payload's known mass, kg")
    c.add_argument("--com", metavar="X,Y,Z",
                   help="the payload's known centre of mass in the flange frame, m (default: estimated)")
    c.add_argument("--mapping", metavar="MAP.yaml", help="layout of measurements that are not canonical")
    c.add_argument("--unloaded-mapping", metavar="MAP.yaml", help="layout of the unloaded run (default --mapping)")
    c.add_argument("--out", required=True, metavar="GAINS.yaml", help="gains file to write (atomically)")
    add_processing_arguments(c)
    c.set_defaults(func=run_calibrate_gains)


def parse_com(text: str | None) -> tuple[float, float, float] | None:
    """'0.03,0.16,0.04' -> three finite numbers (m)."""
    if text is None:
        return None
    try:
        values = tuple(float(t) for t in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise RobidInputError(f"--com: expected three numbers x,y,z in m, got {text!r}")
    return values


def _modified(path) -> str:
    stamp = Path(path).stat().st_mtime
    return datetime.fromtimestamp(stamp, tz=UTC).isoformat(timespec="seconds")


def _mapping_gains(mapping, dof: int):
    """The current gains of the mapping file (one per joint), or None."""
    if mapping is None:
        return None
    from robid.io.mapping import read_mapping

    group = read_mapping(mapping).groups.get("currents")
    gains = None if group is None else group.gains
    return tuple(gains) if gains is not None and len(gains) == dof else None


def run_calibrate_gains(args: argparse.Namespace) -> int:
    import robid
    from robid.cli.process_cmd import processing_options, screening_policy
    from robid.io.files import content_hash
    from robid.io.gains_file import gains_document, write_gains
    from robid.payload.identify import calibrate_drive_gains

    com = parse_com(args.com)
    if not (math.isfinite(args.mass) and args.mass > 0):
        raise RobidInputError(f"--mass: expected a payload mass > 0 kg, got {args.mass:g}")
    out = Path(args.out)
    if str(out.parent) and not out.parent.is_dir():
        raise RobidInputError(f"{args.out}: --out: the folder {out.parent} does not exist")
    robot = robid.load_robot(args.robot, terms=("rigid",))
    cal = calibrate_drive_gains(robot, args.loaded, args.unloaded, args.mass, com=com, mapping=args.mapping,
                                unloaded_mapping=args.unloaded_mapping, options=processing_options(args),
                                policy=screening_policy(args))
    provenance = {
        "method": METHOD.format(com="given" if com else "estimated"),
        "loaded": str(args.loaded), "unloaded": str(args.unloaded),
        "data_modified": {"loaded": _modified(args.loaded), "unloaded": _modified(args.unloaded)},
        "sha256": {"loaded": content_hash(args.loaded), "unloaded": content_hash(args.unloaded)},
        "mapping": None if args.mapping is None else str(args.mapping),
        "mass": float(args.mass), "com": None if com is None else list(com),
        "com_estimated": None if com else [round(x, 6) for x in cal.com],
        "rows_used": cal.rows_used, "converged": cal.converged,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "robid": robid.__version__,
    }
    document = gains_document(cal, str(args.robot), provenance, _mapping_gains(args.mapping, robot.dof))
    write_gains(out, document)
    print(f"wrote {args.out}")
    for j, name in enumerate(cal.joint_names):
        if cal.calibrated[j]:
            print(f"{name}: scale {cal.scale[j]:.4f} +- {cal.std[j]:.2g} (statistical); payload torque rms "
                  f"{cal.payload_rms[j]:.3g} N m, residual {cal.sigma[j]:.3g} N m")
    where = "given" if com else "estimated"
    print(f"payload: m = {args.mass:g} kg (given), COM = ({', '.join(f'{1000 * x:.1f}' for x in cal.com)}) mm "
          f"({where})")
    for note in cal.notes:
        sys.stderr.write(f"note: {note}\n")
    return 0 if cal.converged else 1
