"""Controller programs and sampled files for an excitation trajectory, each verified by parsing it back.

:func:`export_program` renders a format, parses the rendered text back (:mod:`.parse_back`), re-samples the
motion the controller will execute and checks it against the trajectory file's hard limits. Without an
explicit rate it tries the format's rates from the sparsest up and keeps the first that passes; with an
explicit rate it refuses to write a program that fails. With ``options.speed_scale`` below 1 the design runs
slower on the same path (robid.excitation.programs.speed; 0.1 for a first run), and the check also requires every
joint's executed speed to stay within that fraction of the design's (its acceleration within the square).
With ``options.commanded`` (a path commanded instead
of the design, e.g. the motor-side reference of an elastic robot) the check runs on the commanded positions as
written and their deviation is measured from that path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from robid.errors import RobidInputError, RobidOptionError
from robid.excitation.programs import krl, rapid, urscript
from robid.excitation.programs.common import CommandedPath, CommandedSeries, ProgramOptions
from robid.excitation.programs.csv_program import DEFAULT_RATE as CSV_RATE
from robid.excitation.programs.csv_program import render_csv
from robid.excitation.programs.parse_back import PARSERS, SUFFIXES, ProgramCheck, check_motion, commanded_reference
from robid.excitation.programs.speed import FIRST_RUN_SCALE, scale_items, slowed
from robid.excitation.trajectory_file import TrajectoryFile
from robid.io.files import write_atomic

FORMATS = ("csv", "krl", "rapid", "urscript")

__all__ = [
    "FIRST_RUN_SCALE",
    "FORMATS",
    "CommandedPath",
    "CommandedSeries",
    "ExportResult",
    "ProgramOptions",
    "export_program",
    "render_program",
]


@dataclass(frozen=True)
class ExportResult:
    paths: tuple[Path, ...]
    rate: float
    check: ProgramCheck


def _rates(fmt: str, rate: float | None) -> tuple[float, ...]:
    if rate is not None:
        return (float(rate),)
    return {"csv": (CSV_RATE,), "krl": krl.RATES, "rapid": rapid.RATES, "urscript": (urscript.DEFAULT_RATE,)}[fmt]


def render_program(tf: TrajectoryFile, fmt: str, options: ProgramOptions, rate: float, stem: str) -> dict[str, str]:
    if fmt == "csv":
        return render_csv(tf, ProgramOptions(**{**options.__dict__, "rate": rate}))
    render = {"krl": krl.render_krl, "rapid": rapid.render_rapid, "urscript": urscript.render_urscript}[fmt]
    return render(tf, options, rate, stem)


def export_program(tf: TrajectoryFile, fmt: str, out: str | Path, options: ProgramOptions) -> ExportResult:
    """Write the program for ``fmt`` to ``out`` (KRL: ``out`` .src and the .dat beside it)."""
    if fmt not in FORMATS:
        raise RobidOptionError("format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if options.periods < 1:
        raise RobidOptionError("periods", f"expected an integer >= 1, got {options.periods}")
    if options.rate is not None and not options.rate > 0:
        raise RobidOptionError("rate", f"must be positive, got {options.rate}")
    out = Path(out)
    stem = out.stem if out.suffix else out.name
    design = tf
    try:
        tf = slowed(tf, options.speed_scale)
    except ValueError as exc:
        raise RobidOptionError("speed_scale", str(exc)) from None
    last: ProgramCheck | None = None
    reference = None if options.commanded is None else commanded_reference(options.commanded)
    for rate in _rates(fmt, options.rate):
        try:
            texts = render_program(tf, fmt, options, rate, stem)
        except ValueError as exc:
            raise RobidInputError(f"{out}: {exc}") from None
        motion = PARSERS[fmt](texts)
        check = check_motion(motion, tf.limits, tf, tf.trajectory.joint_names, reference,
                             options.workspace_model)
        if options.speed_scale != 1.0:  # the executed motion at most scale (scale^2) of the design's speeds
            extra = scale_items(motion, design, options.speed_scale, tf.trajectory.joint_names)
            check = dataclasses.replace(check, items=check.items + extra)
        last = check
        if check.ok:
            paths = []
            for suffix in SUFFIXES[fmt]:
                path = out if (suffix == SUFFIXES[fmt][0] and out.suffix) else out.with_suffix(suffix)
                if fmt == "krl" and suffix == ".dat":
                    path = out.with_suffix(".dat")
                write_atomic(path, texts[suffix])
                paths.append(path)
            return ExportResult(tuple(paths), rate, check)
    assert last is not None
    hint = "" if options.rate is None else " (try another --rate)"
    what = "" if options.commanded is None else f" ({options.commanded.label} positions)"
    raise RobidInputError(f"{out}: the {fmt} program{what} would violate limits{hint}: {last.summary()}")
