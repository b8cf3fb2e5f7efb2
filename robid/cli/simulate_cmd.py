"""``robid simulate ROBOT TRAJ.json --out MEAS.csv``: the virtual robot (docs/simulation.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from robid.defaults import DEFAULT_FEEDFORWARD, FEEDFORWARD_KINDS


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="virtual robot: a measurement file as the real robot would give it",
        description="Simulate ROBOT following the excitation trajectory TRAJ.json in closed loop (forward dynamics "
        "with rigid or elastic joints, friction, rotor inertia, gravity compensator, PD + feed-forward controller) "
        "and write what its controller would record: the canonical measurement CSV (t, q1.., tau1.. [, theta1..]).",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("trajectory", metavar="TRAJ.json", help="excitation trajectory file written by robid design")
    p.add_argument("--out", required=True, metavar="MEAS.csv",
                   help="measurement file to write: t [s], q1.. [rad, m for prismatic joints], "
                   "tau1.. [N m, N] (or i1.. [A]) [, theta1.. [rad]]")
    p.add_argument(
        "--noise",
        default="realistic",
        metavar="LEVEL",
        help="noise preset: none, low, realistic (default), high -- see docs/simulation.md",
    )
    p.add_argument("--q-noise", type=float, metavar="RAD",
                   help="position noise standard deviation in rad (m for prismatic joints; overrides LEVEL)")
    p.add_argument(
        "--tau-noise", type=float, metavar="NM", help="torque noise standard deviation, N m (overrides LEVEL)"
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the sensor noise, an integer (default 0)")
    p.add_argument("--rate", type=float, default=250.0, metavar="HZ", help="sampling rate in Hz (default 250)")
    p.add_argument("--periods", type=float, metavar="N", help="periods of the trajectory to run (default 2)")
    p.add_argument("--duration", type=float, metavar="S", help="recorded length in s (default: periods x period)")
    p.add_argument("--jitter", type=float, default=0.0, metavar="S",
                   help="sampling-time jitter standard deviation in s (default 0)")
    p.add_argument("--delay", type=float, default=0.0, metavar="S", help="measurement delay in s (default 0)")
    p.add_argument(
        "--encoder-counts",
        type=int,
        default=16384,
        metavar="N",
        help="motor encoder counts per revolution (default 16384; 0: no quantisation)",
    )
    p.add_argument("--currents", action="store_true",
                   help="write motor currents i1.. [A] instead of torques tau1.. [N m]")
    p.add_argument(
        "--feedforward",
        choices=FEEDFORWARD_KINDS,
        default=DEFAULT_FEEDFORWARD,
        help="controller feed-forward: rigid bodies + rotor + compensator (default), full (+ friction), none",
    )
    p.add_argument("--truth", metavar="TRUTH.json",
                   help="also write the parameters the virtual robot used (SI: kg, kg m, kg m^2, N m s/rad, N m, ...)")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary (JSON) instead of text")
    p.set_defaults(func=run)


def _check(args) -> None:
    from robid.errors import RobidInputError

    def positive(name, value, allow_zero=False):
        if value is None:
            return
        ok = (value >= 0 if allow_zero else value > 0) and math.isfinite(value)
        if not ok:
            raise RobidInputError(f"{name}: must be {'>= 0' if allow_zero else 'positive'}, got {value!r}")

    positive("--rate", args.rate)
    positive("--periods", args.periods)
    positive("--duration", args.duration)
    positive("--q-noise", args.q_noise, True)
    positive("--tau-noise", args.tau_noise, True)
    positive("--jitter", args.jitter, True)
    positive("--delay", args.delay, True)
    positive("--encoder-counts", args.encoder_counts, True)
    for option, value in (("--out", args.out), ("--truth", args.truth)):
        if value is not None and not Path(value).resolve().parent.is_dir():
            raise RobidInputError(f"{option}: {value}: folder {Path(value).parent} does not exist")


def run(args) -> int:
    from robid import progress
    from robid.io.files import write_json
    from robid.simulation import ControllerSettings, simulate

    _check(args)
    if not args.json:
        progress.show_steps()
    sensors = _sensor_settings(args)
    with progress.stage(f"simulating {args.robot} along {args.trajectory}"):
        result = simulate(
            args.robot,
            args.trajectory,
            periods=args.periods,
            duration=args.duration,
            sensors=sensors,
            controller=ControllerSettings(feedforward=args.feedforward),
            seed=args.seed,
        )
    path = result.write_csv(args.out)
    if args.truth:
        write_json(args.truth, result.truth_document())
    st = result.stats
    summary = {
        "out": str(path),
        "robot": result.robot,
        "samples": int(result.t.shape[0]),
        "rate_hz": sensors.rate,
        "duration_s": result.settings.duration,
        "periods": result.settings.periods,
        "columns": result.measured.columns(),
        "tau_noise_std": result.measured.tau_noise_std.tolist(),
        "q_noise_std": sensors.q_noise,
        "tracking_error_max": result.tracking_error.tolist(),
        "integrator": {"method": st.method, "rtol": st.rtol, "nfev": st.nfev, "wall_time_s": round(st.wall_time_s, 3)},
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    err = ", ".join(f"{1e3 * e:.3g}" for e in result.tracking_error)
    noise = ", ".join(f"{s:.3g}" for s in result.measured.tau_noise_std)
    print(
        f"simulated {result.robot}: {result.settings.duration:g} s ({result.settings.periods:g} periods of "
        f"{result.settings.trajectory_period:g} s), {summary['samples']} samples at {sensors.rate:g} Hz"
    )
    print(f"integrator: {st.method} rtol {st.rtol:g}, {st.nfev} evaluations, {st.wall_time_s:.1f} s")
    print(f"max tracking error per joint (mrad or mm): {err}")
    print(f"noise: q {sensors.q_noise:g} rad, tau std per joint (N m) {noise}")
    print(f"wrote {path} (columns {', '.join(summary['columns'][:1] + ['q*'] + _groups(summary['columns']))})")
    if args.truth:
        print(f"wrote {args.truth} (true parameters)")
    return 0


def _sensor_settings(args):
    """The virtual sensors of the options: the --noise level's defaults, overridden by --q-noise and --tau-noise."""
    from robid.simulation import SensorSettings

    base = SensorSettings.with_noise_level(args.noise)
    q_noise = base.q_noise if args.q_noise is None else args.q_noise
    tau_noise, relative = (0.0, base.tau_noise_relative) if args.tau_noise is None else (args.tau_noise, 0.0)
    return SensorSettings(
        rate=args.rate,
        encoder_counts=args.encoder_counts or None,
        q_noise=q_noise,
        tau_noise=tau_noise,
        tau_noise_relative=relative,
        jitter=args.jitter,
        delay=args.delay,
        torque_signal="current" if args.currents else "torque",
    )


def _groups(columns: list[str]) -> list[str]:
    out = []
    for prefix in ("tau", "i", "theta"):
        if f"{prefix}1" in columns:
            out.append(f"{prefix}*")
    return out
