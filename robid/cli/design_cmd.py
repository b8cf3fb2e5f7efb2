"""``robid design ROBOT SPEC.yaml --out TRAJ.json``: optimised excitation trajectory (docs/excitation.md)."""

from __future__ import annotations

import argparse

from robid.defaults import PERIODIC


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "design",
        help="optimised excitation trajectory",
        description="Design a Fourier excitation trajectory that minimises the condition numbers (default: "
        "column-scaled and raw together; or maximises log det) of the base regressor under joint, Cartesian and "
        "torque limits, verified in continuous time, with every joint's RMS velocity at least a fraction of its "
        "reachable speed. SPEC fields: harmonics, period, center, rest_to_rest, criterion, min_rms_velocity, "
        "limits, margin, seed, starts, grid_points, cartesian (see docs/excitation.md).",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("spec", metavar="SPEC.yaml",
                   help="design specification (YAML): harmonics, period [s], limits [rad, rad/s, "
                   "rad/s^2, N m; m for prismatic joints], criterion, seed, starts (docs/excitation.md)")
    p.add_argument("--out", required=True, metavar="TRAJ.json",
                   help="trajectory file to write (JSON: Fourier coefficients, limits, design record)")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the random optimiser starts, an integer >= 0 (default: the SPEC's)")
    p.add_argument("--starts", type=int, default=None, metavar="N",
                   help="number of optimiser starts, >= 1 (default: the SPEC's)")
    p.add_argument("--workers", type=int, metavar="N", default=None,
                   help="run the optimiser starts in parallel on a local Dask cluster of N worker processes "
                   "(one BLAS thread each); 0 or absent: serially in this process. Same trajectory either way")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the optimiser starts on the workers of a running Dask scheduler, tcp://host:port; "
                   "they need robid and the same derivation cache (ROBID_CACHE_DIR, docs/fleet.md)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr (as robid -q)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import robid
    from robid import progress
    from robid.excitation.design import design_from_spec
    from robid.excitation.spec import read_design_spec
    from robid.excitation.trajectory_file import save_trajectory

    spec = _spec_with_options(read_design_spec(args.spec), args)
    robot = robid.load_robot(args.robot)
    progress.show_steps()  # --quiet: robid -q
    if args.scheduler or args.workers:
        from robid.excitation.optimiser import portable_robot, start_map
        from robid.fleet.dask_engine import dask_client

        with dask_client(args.scheduler, args.workers) as client, start_map(_dask_map(client)):
            result, tf = design_from_spec(portable_robot(robot), spec, robot_label=str(args.robot))
    else:
        result, tf = design_from_spec(robot, spec, robot_label=str(args.robot))
    save_trajectory(args.out, tf)
    print(f"wrote {args.out}")
    _print_summary(result, tf, spec, robot)
    return 0 if result.check.ok else 1


def _spec_with_options(spec, args: argparse.Namespace):
    """The design spec with --seed and --starts applied, the options checked (--workers, --scheduler)."""
    import dataclasses

    from robid.errors import RobidInputError

    if args.seed is not None:
        if args.seed < 0:
            raise RobidInputError(f"--seed: expected an integer >= 0, got {args.seed}")
        spec = dataclasses.replace(spec, seed=args.seed)
    if args.starts is not None:
        if args.starts < 1:
            raise RobidInputError(f"--starts: expected an integer >= 1, got {args.starts}")
        spec = dataclasses.replace(spec, starts=args.starts)
    if args.workers is not None and args.workers < 0:
        raise RobidInputError(f"--workers: expected a count >= 0, got {args.workers}")
    if args.workers is not None and args.scheduler:
        raise RobidInputError("--workers and --scheduler: give one (the workers of a scheduler are started with "
                              "`dask worker`, docs/fleet.md)")
    return spec


def _print_summary(result, tf, spec, robot) -> None:
    """The design's lines: period and form, criteria, limits, collision gaps, RMS velocities, notes, starts."""
    c = result.criteria
    traj = result.trajectory
    print(
        f"period {traj.period:g} s, {traj.harmonics} harmonics, "
        + (f"rest-to-rest C{traj.continuity_order()}" if traj.rest_to_rest else PERIODIC)
    )
    print(
        f"cond {c.cond:.6g} (column-scaled), cond raw {c.cond_raw:.6g}, logdet {c.logdet:.6g}, "
        f"rank {c.rank}/{c.columns} on {c.grid_points} points"
    )
    print(f"limits: {result.check.summary()}")
    if spec.collision:
        from robid.excitation.collision import smallest_gaps

        gaps = smallest_gaps(result.check, spec.collision, robot.model)
        print("collision: smallest gap per pair (sampled, radii removed): "
              + ", ".join(f"{name} {gap:.3g} m" for name, gap in gaps.items()))
    floor = [float(v) for v in result.problem.floor_speeds()]
    print("RMS velocity per joint: " + ", ".join(f"{v:.3g}" for v in tf.design["rms_velocity"])
          + (f" (floor {', '.join(f'{v:.3g}' for v in floor)}: min_rms_velocity "
             f"{result.problem.min_rms_velocity:g} of the reachable speeds)" if any(v > 0 for v in floor) else ""))
    for note in tf.design.get("notes", []):
        print(f"note: {note}")
    print(f"{len(result.starts)} starts (seed {spec.seed}), best {result.best_start + 1}, {result.seconds:.1f} s")
    print("time per start [s]: " + ", ".join(f"{s.seconds:.1f}" for s in result.starts)
          + f" (CPU {sum(s.cpu_seconds for s in result.starts):.1f} s in all)")


def _dask_map(client):
    """``map_starts`` on Dask: all starts submitted at once, results yielded in start order (the design's bar
    counts them as they come)."""

    def map_starts(fn, items):
        futures = client.map(fn, list(items), pure=False)
        try:
            for future in futures:
                yield future.result()
        finally:
            client.cancel(futures)

    return map_starts
