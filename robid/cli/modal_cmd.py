"""``robid modal ROBOT --pose Q1,Q2,... [--motors controlled|locked] [--json]``: modes of an elastic robot."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "modal",
        help="elastic-joint modal analysis at a pose: frequencies, damping ratios, mode shapes",
        description="Linearise the elastic-joint robot at a pose (static equilibrium, gravity and compensators "
        "included) and solve its eigenproblem: natural frequencies (Hz), damping ratios and joint-space mode "
        "shapes, sorted by frequency. --motors controlled closes the motor-side PD loop of the robot file; "
        "locked holds every rotor still (robid/elastic/modal.py).",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("--pose", required=True, metavar="Q1,Q2,...",
                   help="joint positions, comma-separated; rad (m) or with a unit, e.g. 90deg; a list that starts "
                   "with a minus sign is given as --pose=-0.3,2.0")
    p.add_argument("--motors", choices=("controlled", "locked"), default="controlled",
                   help="motor-side PD loop of the robot file (default) or rotors held still")
    p.add_argument("--frf", metavar="FMIN,FMAX,N",
                   help="also the frequency response: N frequencies from FMIN to FMAX Hz; prints the peak "
                   "translational flange compliance (m/N) per base axis, or adds 'frf' to the JSON "
                   "(robid/elastic/frf.py)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _frequencies(text: str):
    """FMIN,FMAX,N -> N frequencies (Hz); a clear error otherwise."""
    import numpy as np

    from robid.errors import RobidInputError

    parts = [s.strip() for s in text.split(",")]
    try:
        fmin, fmax, n = float(parts[0]), float(parts[1]), int(parts[2])
    except (ValueError, IndexError):
        raise RobidInputError(f"--frf: expected FMIN,FMAX,N (e.g. 0,50,500), got {text!r}") from None
    if len(parts) != 3 or not (0 <= fmin < fmax < np.inf) or n < 2:
        raise RobidInputError(f"--frf: expected 0 <= FMIN < FMAX and N >= 2, got {text!r}")
    return np.linspace(fmin, fmax, n)


def run(args: argparse.Namespace) -> int:
    import robid
    from robid.elastic import modal_analysis
    from robid.model.units import parse_quantity

    robot = robid.load_robot(args.robot)
    items = [s for s in args.pose.split(",") if s.strip()]
    pose = [parse_quantity(s.strip(), f"--pose value {i + 1}") for i, s in enumerate(items)]
    result = modal_analysis(robot, pose, args.motors)
    frf = None
    if args.frf is not None:
        from robid.elastic.frf import frequency_response

        frf = frequency_response(robot, pose, _frequencies(args.frf), args.motors)
    if args.json:
        out = result.to_json()
        if frf is not None:
            out["frf"] = frf.to_json()
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    coords = result.model.coordinates
    w(f"{robot.model.name} at pose [{', '.join(f'{x:.6g}' for x in result.model.pose)}], motors {args.motors}: "
      f"{len(result.frequencies_hz)} modes" + ("" if result.stable else " -- UNSTABLE (an eigenvalue with Re > 0)")
      + "\n")
    w(f"{'mode':>4} {'f (Hz)':>10} {'zeta (%)':>9}  shape " + " ".join(f"{c:>10}" for c in coords) + "\n")
    for k, (f, z) in enumerate(zip(result.frequencies_hz, result.damping_ratios, strict=True)):
        shape = " ".join(f"{v:>10.4f}" for v in result.mode_shapes[k])
        w(f"{k + 1:>4} {f:>10.4f} {100 * z:>9.3f}        {shape}\n")
    if result.overdamped_poles:
        w("overdamped (real) poles [1/s]: " + ", ".join(f"{p:.4g}" for p in result.overdamped_poles) + "\n")
    if frf is not None:
        import numpy as np

        for axis, name in enumerate("xyz"):
            mag = np.abs(frf.flange[:, axis, axis])
            if not mag.any():  # the robot cannot move the flange along this axis (e.g. a planar arm)
                continue
            k = int(np.argmax(mag))
            w(f"flange compliance {name}{name}: peak {mag[k]:.4g} m/N at {frf.frequencies_hz[k]:.4g} Hz "
              f"(static {mag[0]:.4g} m/N at {frf.frequencies_hz[0]:.4g} Hz)\n")
    return 0
