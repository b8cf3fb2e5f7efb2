"""``robid process ROBOT MEAS --out PROCESSED.csv``: the signal stage alone (docs/signals.md)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from robid.defaults import PROCESSING_MODES, TORQUE_BANDS
from robid.errors import RobidInputError
from robid.requests import PROCESSING_DEFAULTS, SCREENING_DEFAULTS

HELP = "read, screen, resample, average, filter and differentiate a measurement"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "process",
        help=HELP,
        description=(
            "The signal stage alone: writes the columns t, q1.., qd1.., qdd1.., tau1.. as identification uses "
            "them (see docs/signals.md). MEAS is a canonical CSV, or any file or folder that --mapping describes."
        ),
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("measurement", metavar="MEAS",
                   help="measurement file: canonical CSV (t [s], q1.. [rad, m for prismatic joints], "
                   "tau1.. [N m, N]), or any file or folder --mapping describes")
    p.add_argument("--out", required=True, metavar="PROCESSED.csv",
                   help="processed signals to write (CSV): t [s], q [rad], qd [rad/s], "
                   "qdd [rad/s^2], tau [N m] (m, m/s, m/s^2, N for prismatic joints)")
    p.add_argument("--mapping", metavar="MAP.yaml",
                   help="mapping file: layout and units of a measurement that is not canonical")
    p.add_argument("--summary", metavar="SUMMARY.json",
                   help="also write what was done, the noise estimates and the dropped rows (JSON)")
    add_processing_arguments(p)
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(func=run)


def add_processing_arguments(p, stored: bool = False) -> None:
    """The signal-stage, data-selection and screening options: one set for ``process``, ``identify``, ``predict``
    and ``payload identify`` (docs/signals.md). ``stored``: every default is what RESULT.json stores (``predict``):
    an option left out is not set at all (:func:`processing_overrides`)."""
    d = (lambda value: argparse.SUPPRESS) if stored else (lambda value: value)
    pd = PROCESSING_DEFAULTS  # the defaults every front end shares (robid.requests)
    suffix = " (default: as stored in RESULT.json)" if stored else ""
    g = p.add_argument_group("processing" + suffix)
    g.add_argument(
        "--mode",
        choices=PROCESSING_MODES,
        default=d(pd["mode"]),
        help="auto (default): periodic if a period is given or found, else rest-to-rest, else non-periodic",
    )
    src = g.add_mutually_exclusive_group()
    src.add_argument("--period", type=float, metavar="T", default=d(None),
                     help="excitation period in s (default: detected)")
    src.add_argument(
        "--trajectory",
        metavar="TRAJ",
        default=d(None),
        help="the design the record executes: period and harmonics of a TRAJ.json; a published .mat design "
        "(Fourier + polynomial, run once) is also located in the record and cut there",
    )
    g.add_argument("--periods", type=int, metavar="K", default=d(None),
                   help="number of whole periods to use (default: all)")
    band = g.add_mutually_exclusive_group()
    band.add_argument("--harmonics", metavar="LIST", default=d(None),
                      help="harmonics of the period to keep, e.g. 1-10 or 1,2,3,5")
    band.add_argument("--cutoff", type=float, metavar="HZ", default=d(None),
                      help="band edge (periodic) or low-pass cut-off (non-periodic), Hz")
    g.add_argument(
        "--torque-band",
        choices=TORQUE_BANDS,
        default=d(pd["torque_band"]),
        help="periodic: torque harmonics kept (default all: period averaging only; docs/signals.md)",
    )
    g.add_argument("--snr", type=float, default=d(pd["snr_threshold"]), metavar="RATIO",
                   help=f"automatic harmonic choice: power / noise power ratio (default {pd['snr_threshold']:g})")
    g.add_argument("--rate", type=float, metavar="HZ", default=d(None),
                   help="resample to this rate in Hz (default: 1 / median time step)")
    g.add_argument("--start", type=float, metavar="S", default=d(None),
                   help="use the record from this time, s on the file's time axis")
    g.add_argument("--end", type=float, metavar="S", default=d(None),
                   help="use the record up to this time, s on the file's time axis")
    g.add_argument("--derivatives", type=int, choices=(2, 3, 4), default=d(pd["derivatives"]),
                   help=f"highest time derivative written (2: qdd; default {pd['derivatives']})")
    g.add_argument(
        "--filter-order", type=int, default=d(pd["filter_order"]), metavar="N",
        help=f"Butterworth filter order, non-periodic (default {pd['filter_order']})"
    )
    g.add_argument("--decimate", type=decimation, default=d(pd["decimate"]), metavar="R",
                   help="keep every R-th sample after the low-pass (non-periodic; 1 keeps every row), or 'auto' "
                   "(default): the largest R "
                   "that keeps the rate at or above 5 times the cut-off (parallel decimation: the least squares on "
                   "1/R of the rows, their correlation kept in the covariance; docs/signals.md section 7)")
    g.add_argument("--keep-all-periods", action="store_true", default=d(not pd["reject_periods"]),
                   help="periodic: do not leave out transient periods from the average")
    _add_selection_arguments(p.add_argument_group("data selection" + suffix), d)
    add_screening_arguments(p, "screening (row checks while reading)" + suffix, stored)


def _add_selection_arguments(s, d) -> None:
    """The data-selection options (``d``: the default as given, or suppressed for ``predict``; the defaults are
    the request layer's, robid.requests)."""
    pd = PROCESSING_DEFAULTS
    s.add_argument("--min-speed", type=float, metavar="V", default=d(pd["min_speed"]),
                   help="mark (sample, joint) rows with |qd| < V unused, in rad/s (m/s for prismatic joints): the "
                   "Coulomb term sign(qd) is ill-defined near velocity reversals and rest phases would be fitted with "
                   f"a friction sign the data do not show (default {pd['min_speed']:g} everywhere: process, "
                   "identify, payload, campaigns; 0 keeps every row)")
    s.add_argument("--drop-standstill", action="store_true", default=d(pd["drop_standstill"]),
                   help="mark standstill segments (see --standstill-speed) unused")
    s.add_argument("--standstill-speed", type=float, default=d(pd["standstill_speed"]), metavar="V",
                   help="speed below which every joint counts as standing still, rad/s or m/s (default "
                   f"{pd['standstill_speed']:g})")


def add_screening_arguments(p, title: str, stored: bool = False) -> None:
    """The options of the row checks while reading (robid.io.screening), shared by process, identify, predict,
    payload, report; ``stored``: left out means as RESULT.json stores them."""
    d = (lambda value: argparse.SUPPRESS) if stored else (lambda value: value)
    sd = SCREENING_DEFAULTS  # (robid.requests)
    v = p.add_argument_group(title)
    v.add_argument("--drop-bad-rows", action="store_true", default=d(sd["drop_bad_rows"]),
                   help="drop isolated bad rows (NaN, unreadable, repeated time) and record them")
    v.add_argument("--max-drop", type=float, default=d(100 * sd["max_drop_fraction"]), metavar="PERCENT",
                   help=f"at most this many %% of the rows dropped (default {100 * sd['max_drop_fraction']:g})")
    v.add_argument("--max-gap", type=float, default=d(sd["max_gap_factor"]), metavar="F",
                   help=f"largest time step allowed, in median time steps (default {sd['max_gap_factor']:g})")
    v.add_argument("--allow-constant", metavar="LIST", default=d(None),
                   help="channels that may be constant, e.g. q4,q5 or qd")
    v.add_argument("--allow-saturated", metavar="LIST", default=d(None),
                   help="torque/current channels that may sit at a limit")


def decimation(text: str) -> int | None:
    """The --decimate value: a positive integer, or ``auto`` (None: robid.signals.ProcessingOptions.decimate)."""
    if text.strip() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}")
    return value


def parse_harmonics(text: str) -> tuple[int, ...]:
    out: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not m:
            raise RobidInputError(f"--harmonics: cannot read {item!r} (expected e.g. 1-10 or 1,2,3)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo < 1 or hi < lo:
            raise RobidInputError(f"--harmonics: {item!r} is not a range of positive integers")
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))


def run(args: argparse.Namespace) -> int:
    from robid.io.measurement_file import read_measurement
    from robid.io.processed_files import write_processed_csv, write_summary_json
    from robid.model.loader import read_robot
    from robid.signals import process
    from robid.signals.processing_summary import processing_summary

    meas = Path(args.measurement)
    out = Path(args.out)
    if out.exists() and meas.exists() and out.resolve() == meas.resolve():
        raise RobidInputError(f"{out}: --out would overwrite the measurement; choose another file")
    if args.summary and Path(args.summary).resolve() == out.resolve():
        raise RobidInputError(f"{args.summary}: --summary and --out name the same file")
    robot = read_robot(args.robot)
    measurement = read_measurement(meas, robot, mapping=args.mapping, policy=screening_policy(args))
    processed = process(measurement, processing_options(args))
    write_processed_csv(out, processed)
    summary = processing_summary(processed)
    if args.summary:
        write_summary_json(args.summary, summary)
    if not args.quiet:
        lines = [f"processing {meas}: {summary.line()}", f"{out}: {processed.n_samples} samples, {processed.mode}"]
        if processed.period is not None:
            lines[1] += f", T = {processed.period:.6g} s ({processed.period_source}), {processed.n_periods} period(s)"
        if processed.cutoff_hz is not None:
            lines[1] += f", cut-off {processed.cutoff_hz:.4g} Hz"
        lines.append("tau noise std per joint: " + ", ".join(f"{x:.3g}" for x in processed.noise.tau_std))
        # each joint's band and the guard's choice (docs/signals.md sections 6, 7, 7b)
        lines += [x for x in processed.method.splitlines() if x.startswith(("band of least", "DFT: kept", "guard:"))]
        if processed.dropped.count:
            lines.append(processed.dropped.summary())
        for note in measurement.notes:
            lines.append("note: " + note)
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def screening_policy(args: argparse.Namespace):
    """The ScreeningPolicy of the screening options (robid.requests: the defaults and the messages)."""
    from robid.io.mapping import parse_channel_list
    from robid.requests import Where, screening_request

    return screening_request({
        "drop_bad_rows": args.drop_bad_rows,
        "max_drop_fraction": args.max_drop / 100.0,
        "max_gap_factor": args.max_gap,
        "allow_constant": parse_channel_list(args.allow_constant, "--allow-constant"),
        "allow_saturated": parse_channel_list(args.allow_saturated, "--allow-saturated"),
    }, Where.command_line())


#: ProcessingOptions field of each processing option given as an override (``predict``): (field, conversion)
_OVERRIDES = {
    "mode": ("mode", None), "period": ("period", None), "periods": ("n_periods", None),
    "harmonics": ("harmonics", parse_harmonics), "cutoff": ("cutoff_hz", None), "rate": ("rate", None),
    "start": ("start", None), "end": ("end", None), "derivatives": ("derivatives", None),
    "snr": ("snr_threshold", None), "filter_order": ("filter_order", None), "decimate": ("decimate", None),
    "keep_all_periods": ("reject_periods", lambda keep: not keep), "min_speed": ("min_speed", None),
    "torque_band": ("torque_band", None), "drop_standstill": ("drop_standstill", None),
    "standstill_speed": ("standstill_speed", None),
}
#: ScreeningPolicy field of each screening option given as an override
_SCREENING = {
    "drop_bad_rows": ("drop_bad_rows", None), "max_drop": ("max_drop_fraction", lambda p: p / 100.0),
    "max_gap": ("max_gap_factor", None),
}


def processing_overrides(args: argparse.Namespace) -> dict:
    """The ProcessingOptions fields of the processing options given on the command line of a command whose
    defaults are stored (``add_processing_arguments(p, stored=True)``): field -> value."""
    out = {}
    for name, (field, convert) in _OVERRIDES.items():
        if hasattr(args, name):
            value = getattr(args, name)
            out[field] = convert(value) if convert is not None and value is not None else value
    if getattr(args, "trajectory", None):
        from robid.io.design_file import design_processing

        out["period"], out["excited_harmonics"], out["design"] = design_processing(args.trajectory)
        out["period_source"] = "trajectory"
    elif "period" in out:
        out["period_source"] = "user"
    return out


def screening_overrides(args: argparse.Namespace, policy):
    """``policy`` (the stored ScreeningPolicy) with the screening options given on the command line."""
    import dataclasses

    from robid.io.mapping import parse_channel_list

    changes = {}
    for name, (field, convert) in _SCREENING.items():
        if hasattr(args, name):
            changes[field] = convert(getattr(args, name)) if convert else getattr(args, name)
    for name in ("allow_constant", "allow_saturated"):
        if getattr(args, name, None):
            changes[name] = tuple(getattr(policy, name)) + parse_channel_list(getattr(args, name),
                                                                              "--" + name.replace("_", "-"))
    return dataclasses.replace(policy, **changes) if changes else policy


def processing_options(args: argparse.Namespace):
    """The ProcessingOptions of the processing options (robid.requests: the defaults and the messages)."""
    from robid.io.design_file import design_processing
    from robid.requests import Where, processing_request

    fields = {"period": args.period, "period_source": "user"}
    if args.trajectory:
        fields["period"], fields["excited_harmonics"], fields["design"] = design_processing(args.trajectory)
        fields["period_source"] = "trajectory"
    fields.update(
        mode=args.mode,
        n_periods=args.periods,
        harmonics=parse_harmonics(args.harmonics) if args.harmonics else None,
        cutoff_hz=args.cutoff,
        rate=args.rate,
        start=args.start,
        end=args.end,
        derivatives=args.derivatives,
        snr_threshold=args.snr,
        filter_order=args.filter_order,
        decimate=args.decimate,
        reject_periods=not args.keep_all_periods,
        min_speed=args.min_speed,
        torque_band=args.torque_band,
        drop_standstill=args.drop_standstill,
        standstill_speed=args.standstill_speed,
    )
    return processing_request(fields, Where.command_line())
