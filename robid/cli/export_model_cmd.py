"""``robid export-model RESULT.json --format urdf|yaml|json|python|c|mjcf --out FILE [--robot ROBOT]``: the identified
model as a URDF, a robot file, a JSON document, MJCF or standalone feed-forward source (docs/export.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robid.errors import RobidInputError

FORMATS = ("urdf", "yaml", "json", "python", "c", "mjcf")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export-model",
        help="identified model as URDF, robot file, JSON or feed-forward source (Python, C)",
        description="Write the identified model somewhere other tools can use it. The physically consistent "
        "standard set that reproduces the identified base parameters and is nearest to the robot file's nominal "
        "values goes into a URDF (a copy of the robot's own URDF, or one generated from its DH parameters; "
        "inertial blocks, friction in <dynamics>, rotor inertia in <transmission>), a copy of the robot file, or "
        "a JSON document; --format python|c writes the inverse dynamics with the identified values folded in and "
        "the base regressor as standalone source for a controller's feed-forward. The header says what was "
        "identified, from which result and how well (docs/export.md).",
    )
    p.add_argument("result", metavar="RESULT.json", help="identification result written by robid identify")
    p.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="urdf: URDF (SI units, rad); yaml: robot file (docs/robot-file.md); json: standard set and joint blocks;"
        " python: numpy module; c: C99 source",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="file to write (written atomically)")
    p.add_argument(
        "--robot",
        "--base",
        dest="robot",
        default=None,
        metavar="ROBOT",
        help="robot file (.yaml, .urdf) or built-in name the result was identified with, whose copy is written "
        "(default: RESULT.json's robot_source if it exists, else its robot name)",
    )
    p.add_argument(
        "--prefix",
        default="robid",
        metavar="NAME",
        help="--format c: prefix of the C symbols (default robid: robid_inverse_dynamics, robid_base_regressor)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robid.export import export_model
    from robid.io.files import write_atomic
    from robid.io.result_file import read_result
    from robid.report._data import resolve_robot

    out = Path(args.out)
    result_path = Path(args.result)
    if out.exists() and result_path.exists() and out.resolve() == result_path.resolve():
        raise RobidInputError(f"{out}: --out would overwrite RESULT.json; choose another file")
    record = read_result(result_path)
    robot = resolve_robot(args.robot, record, result_path)
    exported = export_model(record, robot, args.format, source=args.result, prefix=args.prefix)
    write_atomic(out, exported.text)
    s = exported.standard
    w = sys.stdout.write
    w(f"wrote {out} ({args.format}, {len(exported.text.encode())} bytes): robot {record.robot}, "
      f"{len(s.names)} standard parameters\n")
    if s.identified_consistent:
        w(f"the identified base values have a physically consistent standard set; reproduced to {s.base_mismatch:.1e}"
          " (relative)\n")
    else:
        maha = f" (Mahalanobis distance {s.mahalanobis:.3g})" if s.mahalanobis is not None else ""
        w(f"the identified base values have no physically consistent standard set: exported the nearest one{maha}; "
          f"{len(s.moved)} base parameter(s) moved by more than their standard deviation (see the file's header)\n")
    return 0
