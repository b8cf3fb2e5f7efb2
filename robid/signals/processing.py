"""The signal stage: canonical measurement in, :class:`ProcessedSignals` out.

Steps: optional time window -> uniform grid (resampling.py) -> path choice -> periodic (periodic_path.py),
single rest-to-rest period (single_period.py) or non-periodic (nonperiodic_path.py) processing, each with its
band (bands.py) and noise estimates (noise.py) -> data selection (selection.py). Every decision is written
into ``ProcessedSignals.method``.

Path choice (``mode="auto"``): periodic when a period is given or detected with at least two whole periods in
the record; otherwise a single rest-to-rest period when the record starts and ends at rest; otherwise the
non-periodic path (docs/signals.md section 5).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from robid.defaults import NONPERIODIC, PERIODIC, PROCESSING_MODES, REPEATING_MODES, TORQUE_BANDS
from robid.errors import RobidInputError, RobidOptionError
from robid.signals import periodic, selection, whole_periods
from robid.signals.cutoff import PositionSpectra
from robid.signals.design_alignment import DesignSamples
from robid.signals.design_path import process_design_period
from robid.signals.guard import PlainRecipe, guarded
from robid.signals.measured_velocity import MeasuredVelocity, measured_velocity
from robid.signals.noise import logged_step
from robid.signals.nonperiodic_path import process_nonperiodic
from robid.signals.path_result import MIN_SAMPLES, PathResult
from robid.signals.periodic_path import process_periodic
from robid.signals.records import Measurement, ProcessedSignals
from robid.signals.resampling import to_uniform_grid
from robid.signals.single_period import process_single_period

MODES = PROCESSING_MODES  # robid.defaults: one definition


@dataclass(frozen=True)
class ProcessingOptions:
    """Options of the signal stage (all optional). Times in s, frequencies in Hz, speeds in rad/s (m/s).

    ``period``/``period_source``: the excitation period and where it came from ("user" or "trajectory");
    ``harmonics``: exactly the harmonics (1-based multiples of 1/T) to keep; ``cutoff_hz``: keep all
    harmonics up to it (periodic) or the low-pass cut-off (non-periodic); neither: chosen from the data
    (``snr_threshold``), always including ``excited_harmonics`` (those of the designed trajectory).
    ``rate``: resample to this rate. ``start``/``end``: time window of the record to use.
    ``n_periods``: how many periods to use (default: all that fit in the periodic part of the record).
    ``derivatives``: highest derivative of q to compute (2..4). ``decimate``: integer factor (1: every row), or None
    (the default, ``auto`` in files and on the command line): chosen from the cut-off (non-periodic: the largest
    factor keeping the rate at or above 5 times the cut-off, robid.signals.nonperiodic_path.decimation_factor).
    ``min_speed``: mark (sample, joint) rows with |qd| below it (rad/s, m/s for prismatic joints) as unused;
    None or 0 keeps every row. The library takes it as given; the commands (``robid process``, ``identify``,
    ``payload``) and campaigns default to :data:`robid.defaults.DEFAULT_MIN_SPEED`.
    ``torque_band`` (periodic path): which harmonics of the averaged torque are kept -- ``"all"`` (default:
    period averaging only; rows stay independent, so least-squares standard deviations stay honest, and the
    mismatch of the Coulomb model near velocity reversals stays local, where ``min_speed`` removes it),
    ``"signal"`` (the position band plus every harmonic where the torque stands ``snr_threshold`` above its
    period-scatter noise) or ``"positions"`` (exactly the position band). The regressor gets the same filter.
    ``drop_standstill``: mark standstill segments (every joint slower than ``standstill_speed`` for
    ``standstill_duration``) unused.
    ``design``: the known rest-to-rest design the record executes once (design_path.py): with mode ``auto``
    or ``rest-to-rest`` its executed period is found and cut, and processed at its harmonics.
    ``average_periods`` (periodic path): True (default) -- one averaged period; False -- every sample of the K
    whole periods, not averaged, differentiated in the band chosen on the average (mode ``"periodic-samples"``,
    :mod:`robid.signals.periodic_samples`; e.g. to predict every measured sample).
    ``position_step``: the step of the logged positions per joint (default: the file's own,
    :func:`robid.signals.noise.logged_step`); the periodic paths count its rounding error as noise.
    """

    mode: str = "auto"
    period: float | None = None
    period_source: str = "user"
    harmonics: tuple[int, ...] | None = None
    excited_harmonics: tuple[int, ...] | None = None
    cutoff_hz: float | None = None
    rate: float | None = None
    start: float | None = None
    end: float | None = None
    n_periods: int | None = None
    derivatives: int = 2
    snr_threshold: float = 20.0
    filter_order: int = 4
    decimate: int | None = None
    reject_periods: bool = True
    min_speed: float | None = None
    torque_band: str = "all"
    drop_standstill: bool = False
    standstill_speed: float = selection.STANDSTILL_SPEED
    standstill_duration: float = 0.5
    design: DesignSamples | None = None
    average_periods: bool = True
    position_step: tuple[float, ...] | None = None


def process(measurement: Measurement, options: ProcessingOptions | None = None) -> ProcessedSignals:
    """Resample, cut, average, filter and differentiate a measurement; estimate its noise and select the rows
    identification uses (docs/signals.md sections 4-9)."""
    opts = _with_measurement_design(options or ProcessingOptions(), measurement)
    if opts.position_step is None:
        opts = replace(opts, position_step=tuple(float(x) for x in logged_step(measurement.q)))
    where = measurement.source
    _check_options(opts, where)
    lines = [f"source: {where} ({measurement.n_samples} samples, {measurement.dof} joints)"]
    if measurement.dropped.count:
        lines.append(f"dropped while reading: {measurement.dropped.summary()}")

    _check_measurement(measurement)
    t, sig, qd_file, origin, grid_lines = _on_uniform_grid(measurement, opts)
    spectra = PositionSpectra.of(sig["q"], (t.size - 1) / float(t[-1] - t[0]))
    chosen, path_lines = _choose_and_run(t, sig, opts, where, spectra)
    lines += [*grid_lines, *path_lines]
    result, guard = _guarded(chosen, t, sig, spectra, opts)
    measured = measured_velocity(t, qd_file, result, logged_step(measurement.qd)) if qd_file is not None else None
    if opts.decimate != 1 and result.mode != NONPERIODIC:
        lines.append(f"decimate {opts.decimate} ignored: decimation belongs to the non-periodic path")
    keep, standstill, selection_lines = _mark_unused(result, opts)
    lines += selection_lines
    orders = max(2, opts.derivatives)
    d = result.derivs
    return ProcessedSignals(
        t=result.t + origin,
        q=d[0],
        qd=d[1],
        qdd=d[2],
        qddd=d[3] if orders >= 3 else None,
        qdddd=d[4] if orders >= 4 else None,
        tau=result.tau,
        theta=result.theta[0] if result.theta is not None else None,
        thetad=result.theta[1] if result.theta is not None else None,
        thetadd=result.theta[2] if result.theta is not None else None,
        mode=result.mode,
        sample_rate=result.rate,
        noise=result.noise,
        keep=keep,
        dropped=measurement.dropped,
        method="\n".join(lines + result.lines + ([measured.line] if measured is not None else [])),
        apply_filter=result.apply_filter,
        period=result.period,
        period_source=result.period_source,
        n_periods=result.n_periods,
        harmonics=result.harmonics,
        cutoff_hz=result.cutoff,
        segment=(result.segment[0] + origin, result.segment[1] + origin) if result.segment else None,
        trimmed=result.trimmed,
        rejected_periods=result.rejected,
        standstill=tuple((a + origin, b + origin) for a, b in standstill),
        notes=measurement.notes,
        row_noise=result.row_noise,
        decimation=result.decimation,
        parallel_filter=_with_sign_velocity(result.parallel_filter, measured),
        qd_measured=measured.on_grid if measured is not None else None,
        qd_measured_std=measured.std if measured is not None else None,
        guard=guard,
    )



def _on_uniform_grid(measurement: Measurement, opts: ProcessingOptions):
    """(t, signals, the file's measured velocity or None, t0, lines) of the measurement's time window on a uniform
    grid. Processing must not depend on where the clock started (controller logs count from 1970): it works on
    t - t0 and hands back times as given."""
    where = measurement.source
    t, signals, lines = _time_window(measurement, opts)
    origin = float(t[0])
    if origin != 0.0:
        lines.append(f"times in this account are from the first sample, t0 = {origin:.15g} s")
    grid = to_uniform_grid(t - origin, signals, opts.rate, resolution=float(np.spacing(np.max(np.abs(t)))))
    lines.append(grid.description)
    t, sig = grid.t, dict(grid.signals)
    qd_file = sig.pop("qd_measured", None)  # not processed: only the sign of the Coulomb term takes it
    if t.size < MIN_SAMPLES:
        raise RobidInputError(f"{where}: only {t.size} samples after resampling; at least {MIN_SAMPLES} are needed")
    return t, sig, qd_file, origin, lines


def _guarded(result: PathResult, t: np.ndarray, sig: dict, spectra: PositionSpectra, opts: ProcessingOptions):
    """(the path's result with the guard's line, the guard): the path checked against the plain recipe
    (robid.signals.guard)."""
    repeats = result.mode in REPEATING_MODES and result.n_periods >= 2
    plain = PlainRecipe.of(t, sig["q"], None if repeats else spectra, lines=repeats)
    result, guard = guarded(result, plain, max(2, opts.derivatives), opts.harmonics is None and opts.cutoff_hz is None)
    return replace(result, lines=[*result.lines, guard.line()]), guard

def _with_sign_velocity(parallel, measured: MeasuredVelocity | None):
    """The path's parallel filter, handing ``evaluate`` the velocity for the Coulomb sign as a fourth argument:
    the measured one on the whole record when the file has it, else the processed velocity. ``block``: evaluate
    and filter that many recorded samples at a time and return ``(columns, rows)`` compactly (the path's
    streamed filter, robid.signals.nonperiodic_path.streamed_parallel_filter)."""
    if parallel is None:
        return None

    def run(evaluate, block: int | None = None):
        if measured is None:
            return parallel(lambda q, qd, qdd, window: evaluate(q, qd, qdd, qd), block)
        return parallel(lambda q, qd, qdd, window: evaluate(q, qd, qdd, measured.whole[window]), block)

    return run


def _with_measurement_design(o: ProcessingOptions, m: Measurement) -> ProcessingOptions:
    """The options with the design the measurement names (its mapping), unless they give a design or a period."""
    if m.design is None or o.design is not None or o.period is not None:
        return o
    d = m.design
    return replace(o, design=d, period=d.period, period_source="design", excited_harmonics=d.harmonics)


def _time_window(m: Measurement, o: ProcessingOptions) -> tuple[np.ndarray, dict, list[str]]:
    """The samples of the time window ``o.start``-``o.end`` (all without one): t, the signals q, tau, theta, and
    the line that says the window."""
    t = m.t
    signals = {"q": m.q, "tau": m.tau, "theta": m.theta, "qd_measured": m.qd}
    if o.start is None and o.end is None:
        return t, signals, []
    lo = o.start if o.start is not None else t[0]
    hi = o.end if o.end is not None else t[-1]
    inside = (t >= lo) & (t <= hi)
    if np.count_nonzero(inside) < MIN_SAMPLES:
        raise RobidInputError(
            f"{m.source}: the window {lo:g}-{hi:g} s holds {np.count_nonzero(inside)} samples "
            f"(the record spans {t[0]:g}-{t[-1]:g} s); at least {MIN_SAMPLES} are needed"
        )
    t = t[inside]
    signals = {k: (v[inside] if v is not None else None) for k, v in signals.items()}
    return t, signals, [f"time window {lo:g}-{hi:g} s ({t.size} samples)"]


def _check_measurement(m: Measurement) -> None:
    """Measurements built in code (not read from a file) get the same basic checks as files."""
    where = m.source
    if m.q.ndim != 2 or m.tau.shape != m.q.shape or m.t.shape != (m.q.shape[0],):
        raise RobidInputError(
            f"{where}: t (N,), q and tau (N, dof) shapes disagree: {m.t.shape}, {m.q.shape}, {m.tau.shape}"
        )
    for name in ("t", "q", "tau", "theta", "qd"):
        value = getattr(m, name)
        if value is not None and not np.all(np.isfinite(value)):
            raise RobidInputError(f"{where}: {name} holds NaN or inf")
    if np.any(np.diff(m.t) <= 0):
        k = int(np.flatnonzero(np.diff(m.t) <= 0)[0])
        raise RobidInputError(f"{where}: sample {k + 2}: time {m.t[k + 1]:g} s does not follow {m.t[k]:g} s")


def _check_options(o: ProcessingOptions, where: str) -> None:
    if o.mode not in MODES:
        raise RobidInputError(f"mode: unknown {o.mode!r} (expected one of {', '.join(MODES)})")
    if o.torque_band not in TORQUE_BANDS:
        raise RobidInputError(f"torque-band: expected one of {', '.join(TORQUE_BANDS)}, got {o.torque_band!r}")
    for name in ("period", "cutoff_hz", "rate", "snr_threshold", "standstill_speed", "standstill_duration"):
        value = getattr(o, name)
        if value is not None and not (np.isfinite(value) and value > 0):
            raise RobidInputError(f"{name.replace('_hz', '')}: must be a positive number, got {value!r}")
    if o.min_speed is not None and not (np.isfinite(o.min_speed) and o.min_speed >= 0):
        raise RobidInputError(f"min-speed: must be a non-negative number, got {o.min_speed!r}")
    if o.harmonics is not None and (not o.harmonics or any(h < 1 for h in o.harmonics)):
        raise RobidInputError("harmonics: expected positive integers (multiples of the base frequency 1/T)")
    if o.harmonics is not None and o.cutoff_hz is not None:
        raise RobidInputError("give harmonics or a cut-off, not both")
    if o.derivatives not in (2, 3, 4):
        raise RobidInputError(f"derivatives: 2, 3 or 4, got {o.derivatives!r}")
    if o.decimate is not None and not (isinstance(o.decimate, (int, np.integer)) and o.decimate >= 1):
        raise RobidInputError(
            f"decimate: a positive integer, or auto (None) for the automatic factor, got {o.decimate!r}"
        )
    if o.n_periods is not None and o.n_periods < 1:
        raise RobidInputError(f"periods: a positive integer, got {o.n_periods!r}")
    if o.filter_order < 1 or o.filter_order > 12:
        raise RobidInputError(f"filter order: 1..12, got {o.filter_order!r}")
    if o.start is not None and o.end is not None and o.end <= o.start:
        raise RobidInputError(f"time window: end {o.end:g} s is not after start {o.start:g} s")


def _choose_and_run(
    t: np.ndarray, sig: dict, o: ProcessingOptions, where: str, spectra: PositionSpectra
) -> tuple[PathResult, list[str]]:
    """Run the path ``o.mode`` asks for, or choose it (``auto``): the executed period of a known design, else
    periodic with a given or detected period, else rest-to-rest when the record starts and ends at rest, else
    non-periodic; (its result, the account of the choice and of what the path did before its own lines)."""
    q = sig["q"]
    span = float(t[-1] - t[0])
    if o.mode == "nonperiodic":
        return process_nonperiodic(t, sig, o, where, spectra), []
    if o.design is not None and o.mode in ("auto", "rest-to-rest"):
        return process_design_period(t, sig, o, where)
    if o.mode == "rest-to-rest":
        window = selection.rest_to_rest_window(t, q)
        if window is None:
            raise RobidInputError(
                f"{where}: the record does not start and end at rest (every joint slower than "
                f"{selection.STANDSTILL_SPEED:g} rad/s); use another mode"
            )
        return process_single_period(t, sig, window, o, "segment", where, spectra), []
    period, source, lines = o.period, (o.period_source if o.period is not None else None), []
    if period is None:
        period, source, lines = _detected_period(t, q, o, where)
    if period is not None:
        if period > span + 1.5 * (t[1] - t[0]):
            raise RobidInputError(f"{where}: the record ({span:g} s) is shorter than one period ({period:g} s)")
        result, periodic_lines = process_periodic(t, sig, period, source, o, where)
        return result, [*lines, *periodic_lines]
    window = selection.rest_to_rest_window(t, q)
    if window is not None:
        lines.append("the record starts and ends at rest: processed as one rest-to-rest period")
        return process_single_period(t, sig, window, o, "segment", where, spectra), lines
    lines.append("not periodic and not rest-to-rest: non-periodic path")
    return process_nonperiodic(t, sig, o, where, spectra), lines


def _detected_period(
    t: np.ndarray, q: np.ndarray, o: ProcessingOptions, where: str
) -> tuple[float | None, str | None, list[str]]:
    """(the period found in the positions when at least two whole periods fit in their periodic part (or
    whenever ``o.mode`` is periodic), else None; its source; a line saying what was found)."""
    found = periodic.detect_period(t, q)
    if found is None:
        if o.mode == PERIODIC:
            raise RobidOptionError(None,
                f"{where}: no period found in the positions (need at least two periods in the record); "
                "give it with {period} or {trajectory}"
            )
        return None, None, ["no period detected in the positions"]
    place = whole_periods.place_periods(t, q, found.period)
    k = place.fit if place is not None else 0
    part = f" in the periodic part {t[place.part[0]]:g}-{t[place.part[1]]:g} s" if place is not None else ""
    lines = [f"period detected from the positions: T = {found.period:.9g} s (mismatch {found.mismatch:.2e}); "
             f"{k} whole period(s){part}"]
    if k >= 2 or o.mode == PERIODIC:
        return found.period, "detected", lines
    return None, None, lines


def _mark_unused(
    result: PathResult, o: ProcessingOptions
) -> tuple[np.ndarray, tuple[tuple[float, float], ...], list[str]]:
    """Data selection (docs/signals.md section 9): the (N, dof) ``keep`` mask -- standstill segments when
    ``o.drop_standstill``, near-zero velocity below ``o.min_speed`` --, the standstill segments found, and the
    lines that say so."""
    t, qd = result.t, result.derivs[1]
    lines: list[str] = []
    keep = np.ones(qd.shape, dtype=bool)
    still = selection.standstill_segments(t, qd, o.standstill_speed, o.standstill_duration)
    if still:
        total = sum(b - a for a, b in still)
        lines.append(
            f"standstill (every joint slower than {o.standstill_speed:g} rad/s for at least "
            f"{o.standstill_duration:g} s): {len(still)} segment(s), {total:.3g} s"
            + ("; marked unused" if o.drop_standstill else "; kept")
        )
        if o.drop_standstill:
            keep[selection.samples_in(t, still)] = False
    if o.min_speed is not None and o.min_speed > 0:
        fast = selection.near_zero_velocity(qd, o.min_speed)
        dropped = np.count_nonzero(keep & ~fast, axis=0)
        keep &= fast
        lines.append(
            f"near-zero velocity (|qd| < {o.min_speed:g}) marked unused per joint: "
            + ", ".join(f"{int(n)}" for n in dropped)
            + f" of {t.size} samples"
        )
    return keep, still, lines
