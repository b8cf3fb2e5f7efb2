"""The signal stage: canonical measurement in, :class:`ProcessedSignals` out.

Steps: optional time window -> uniform grid (resampling.py) -> path choice -> periodic (periodic.py),
single rest-to-rest period (periodic.py) or non-periodic (filtering.py) processing -> noise estimates
(noise.py) -> data selection (selection.py). Every decision is written into ``ProcessedSignals.method``.

Path choice (``mode="auto"``): periodic when a period is given or detected with at least two whole periods in
the record; otherwise a single rest-to-rest period when the record starts and ends at rest; otherwise the
non-periodic path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robid.errors import RobidInputError
from robid.signals import filtering, noise, periodic, selection
from robid.signals.records import Measurement, NoiseEstimate, ProcessedSignals
from robid.signals.resampling import to_uniform_grid

MODES = ("auto", "periodic", "rest-to-rest", "nonperiodic")
MIN_SAMPLES = 32
_AUTO_CUTOFF = (
    "twice the highest frequency at which a position spectrum stands 30 dB above its own noise floor "
    "(give --cutoff or --harmonics to choose)"
)


@dataclass(frozen=True)
class ProcessingOptions:
    """Options of the signal stage (all optional). Times in s, frequencies in Hz, speeds in rad/s (m/s).

    ``period``/``period_source``: the excitation period and where it came from ("user" or "trajectory");
    ``harmonics``: exactly the harmonics (1-based multiples of 1/T) to keep; ``cutoff_hz``: keep all
    harmonics up to it (periodic) or the low-pass cut-off (non-periodic); neither: chosen from the data
    (``snr_threshold``), always including ``excited_harmonics`` (those of the designed trajectory).
    ``rate``: resample to this rate. ``start``/``end``: time window of the record to use.
    ``n_periods``: how many periods to use (default: all that fit in the periodic part of the record).
    ``derivatives``: highest derivative of q to compute (2..4). ``decimate``: integer factor (non-periodic).
    ``min_speed``: mark (sample, joint) rows with |qd| below it as unused.
    ``torque_band`` (periodic path): which harmonics of the averaged torque are kept -- ``"all"`` (default:
    period averaging only; rows stay independent, so least-squares standard deviations stay honest, and the
    mismatch of the Coulomb model near velocity reversals stays local, where ``min_speed`` removes it),
    ``"signal"`` (the position band plus every harmonic where the torque stands ``snr_threshold`` above its
    period-scatter noise) or ``"positions"`` (exactly the position band). The regressor gets the same filter.
    ``drop_standstill``: mark standstill segments (every joint slower than ``standstill_speed`` for
    ``standstill_duration``) unused.
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
    decimate: int = 1
    reject_periods: bool = True
    min_speed: float | None = None
    torque_band: str = "all"
    drop_standstill: bool = False
    standstill_speed: float = selection.STANDSTILL_SPEED
    standstill_duration: float = 0.5


@dataclass
class _Result:
    t: np.ndarray
    derivs: list[np.ndarray]
    tau: np.ndarray
    theta: list[np.ndarray] | None  # motor positions and their first two derivatives
    noise: NoiseEstimate
    apply_filter: object
    mode: str
    rate: float
    lines: list[str] = field(default_factory=list)
    period: float | None = None
    period_source: str | None = None
    n_periods: int = 0
    harmonics: tuple[int, ...] | None = None
    cutoff: float | None = None
    segment: tuple[float, float] | None = None
    trimmed: tuple[int, int] = (0, 0)
    rejected: tuple[int, ...] = ()


def process(measurement: Measurement, options: ProcessingOptions | None = None) -> ProcessedSignals:
    """Resample, cut, average, filter and differentiate a measurement; estimate its noise."""
    opts = options or ProcessingOptions()
    where = measurement.source
    _check_options(opts, where)
    lines = [f"source: {where} ({measurement.n_samples} samples, {measurement.dof} joints)"]
    if measurement.dropped.count:
        lines.append(f"dropped while reading: {measurement.dropped.summary()}")

    t = measurement.t
    _check_measurement(measurement)
    signals = {"q": measurement.q, "tau": measurement.tau, "theta": measurement.theta}
    if opts.start is not None or opts.end is not None:
        lo = opts.start if opts.start is not None else t[0]
        hi = opts.end if opts.end is not None else t[-1]
        inside = (t >= lo) & (t <= hi)
        if np.count_nonzero(inside) < MIN_SAMPLES:
            raise RobidInputError(
                f"{where}: the window {lo:g}-{hi:g} s holds {np.count_nonzero(inside)} samples "
                f"(the record spans {t[0]:g}-{t[-1]:g} s); at least {MIN_SAMPLES} are needed"
            )
        t = t[inside]
        signals = {k: (v[inside] if v is not None else None) for k, v in signals.items()}
        lines.append(f"time window {lo:g}-{hi:g} s ({t.size} samples)")
    grid = to_uniform_grid(t, signals, opts.rate)
    lines.append(grid.description)
    t, sig = grid.t, grid.signals
    if t.size < MIN_SAMPLES:
        raise RobidInputError(f"{where}: only {t.size} samples after resampling; at least {MIN_SAMPLES} are needed")

    result = _choose_and_run(t, sig, opts, where, lines)
    if opts.decimate > 1 and result.mode != "nonperiodic":
        lines.append(f"decimate {opts.decimate} ignored: decimation belongs to the non-periodic path")
    keep, standstill = _select(result, opts, lines)
    orders = max(2, opts.derivatives)
    d = result.derivs
    return ProcessedSignals(
        t=result.t,
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
        method="\n".join(lines + result.lines),
        apply_filter=result.apply_filter,
        period=result.period,
        period_source=result.period_source,
        n_periods=result.n_periods,
        harmonics=result.harmonics,
        cutoff_hz=result.cutoff,
        segment=result.segment,
        trimmed=result.trimmed,
        rejected_periods=result.rejected,
        standstill=standstill,
        notes=measurement.notes,
    )


def _check_measurement(m: Measurement) -> None:
    """Measurements built in code (not read from a file) get the same basic checks as files."""
    where = m.source
    if m.q.ndim != 2 or m.tau.shape != m.q.shape or m.t.shape != (m.q.shape[0],):
        raise RobidInputError(
            f"{where}: t (N,), q and tau (N, dof) shapes disagree: {m.t.shape}, {m.q.shape}, {m.tau.shape}"
        )
    for name in ("t", "q", "tau", "theta"):
        value = getattr(m, name)
        if value is not None and not np.all(np.isfinite(value)):
            raise RobidInputError(f"{where}: {name} holds NaN or inf")
    if np.any(np.diff(m.t) <= 0):
        k = int(np.flatnonzero(np.diff(m.t) <= 0)[0])
        raise RobidInputError(f"{where}: sample {k + 2}: time {m.t[k + 1]:g} s does not follow {m.t[k]:g} s")


def _check_options(o: ProcessingOptions, where: str) -> None:
    if o.mode not in MODES:
        raise RobidInputError(f"mode: unknown {o.mode!r} (expected one of {', '.join(MODES)})")
    if o.torque_band not in ("all", "signal", "positions"):
        raise RobidInputError(f"torque-band: expected all, signal or positions, got {o.torque_band!r}")
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
    if o.decimate < 1:
        raise RobidInputError(f"decimate: a positive integer, got {o.decimate!r}")
    if o.n_periods is not None and o.n_periods < 1:
        raise RobidInputError(f"periods: a positive integer, got {o.n_periods!r}")
    if o.filter_order < 1 or o.filter_order > 12:
        raise RobidInputError(f"filter order: 1..12, got {o.filter_order!r}")
    if o.start is not None and o.end is not None and o.end <= o.start:
        raise RobidInputError(f"time window: end {o.end:g} s is not after start {o.start:g} s")


def _choose_and_run(t: np.ndarray, sig: dict, o: ProcessingOptions, where: str, lines: list[str]) -> _Result:
    q = sig["q"]
    span = float(t[-1] - t[0])
    if o.mode == "nonperiodic":
        return _nonperiodic(t, sig, o, where)
    if o.mode == "rest-to-rest":
        window = selection.rest_to_rest_window(t, q)
        if window is None:
            raise RobidInputError(
                f"{where}: the record does not start and end at rest (every joint slower than "
                f"{selection.STANDSTILL_SPEED:g} rad/s); use another mode"
            )
        return _single_period(t, sig, window, o, "segment", where)
    period, source = o.period, (o.period_source if o.period is not None else None)
    if period is None:
        found = periodic.detect_period(t, q)
        if found is not None:
            a, b = periodic.periodic_region(t, q, found.period)
            k = int(np.floor((b + (t[1] - t[0]) - a) / found.period + 1e-6))
            lines.append(
                f"period detected from the positions: T = {found.period:.9g} s (mismatch {found.mismatch:.2e}); "
                f"{k} whole period(s) in the periodic part {a:g}-{b:g} s"
            )
            if k >= 2 or o.mode == "periodic":
                period, source = found.period, "detected"
        elif o.mode == "periodic":
            raise RobidInputError(
                f"{where}: no period found in the positions (need at least two periods in the record); "
                "give it with --period or --trajectory"
            )
        else:
            lines.append("no period detected in the positions")
    if period is not None:
        if period > span + 1.5 * (t[1] - t[0]):
            raise RobidInputError(f"{where}: the record ({span:g} s) is shorter than one period ({period:g} s)")
        return _periodic(t, sig, period, source, o, where, lines)
    window = selection.rest_to_rest_window(t, q)
    if window is not None:
        lines.append("the record starts and ends at rest: processed as one rest-to-rest period")
        return _single_period(t, sig, window, o, "segment", where)
    lines.append("not periodic and not rest-to-rest: non-periodic path")
    return _nonperiodic(t, sig, o, where)


# ------------------------------------------------------------------------------------------ periodic path
def _periodic(
    t: np.ndarray, sig: dict, period: float, source: str | None, o: ProcessingOptions, where: str, lines: list[str]
) -> _Result:
    q = sig["q"]
    h = float(t[1] - t[0])
    if o.start is not None:
        a, b = float(t[0]), float(t[-1]) + h
    else:
        a, b = periodic.periodic_region(t, q, period)
        b = min(b + h, float(t[-1]) + h)
    fit = int(np.floor((b - a) / period + 1e-6))
    k = o.n_periods if o.n_periods is not None else fit
    if k > fit:
        raise RobidInputError(f"{where}: {k} periods of {period:g} s requested, only {fit} fit in {a:g}-{b:g} s")
    if k < 1:
        raise RobidInputError(f"{where}: not one whole period of {period:g} s in the periodic part {a:g}-{b:g} s")
    m = int(round(period / h))
    if k == 1:
        i0 = int(round((a - t[0]) / h))
        i1 = min(i0 + m, t.size - 1)
        lines.append(f"one period of {period:g} s from {t[i0]:g} s: single-period processing")
        return _single_period(t, sig, (i0, i1), o, source, where, period=period)
    present = {name: v for name, v in sig.items() if v is not None}
    try:
        cut = periodic.cut_periods(t, present, a, period, k)
    except ValueError:
        # the periodic part ends within the last sample: start one step earlier is not allowed; use k - 1
        k -= 1
        cut = periodic.cut_periods(t, present, a, period, k)
    keep = np.arange(k)
    if o.reject_periods and k >= 3:
        keep = np.intersect1d(
            periodic.reject_outlier_periods(cut.periods["q"]), periodic.reject_outlier_periods(cut.periods["tau"])
        )
        if keep.size < 2:
            keep = np.arange(k)
    rejected = tuple(int(i) + 1 for i in range(k) if i not in keep)
    pq, ptau = cut.periods["q"][keep], cut.periods["tau"][keep]
    kk = keep.size
    lines.append(
        f"periodic: T = {period:.9g} s ({source}), {k} whole periods from {a:g} s, M = {cut.samples_per_period} "
        f"samples per period" + (" (resampled by cubic spline onto T/M steps)" if cut.resampled else "")
    )
    if rejected:
        lines.append(
            f"periods {', '.join(map(str, rejected))} left out of the average: their deviation from the median "
            "period is more than 10 times the typical one (transient)"
        )
    lines.append(f"averaged {kk} periods")
    mean_q, mean_tau = pq.mean(axis=0), ptau.mean(axis=0)
    var_q, harm_q = noise.period_scatter(pq)
    var_tau, harm_tau = noise.period_scatter(ptau)
    mm = cut.samples_per_period
    bins = mm // 2 + 1
    omega = 2.0 * np.pi / period
    if o.harmonics is not None:
        harmonics = np.asarray(sorted(set(o.harmonics)))
        if harmonics.max() >= bins - 1:
            raise RobidInputError(
                f"harmonics: {harmonics.max()} is at or above the Nyquist harmonic {bins - 1} of M = {mm} samples"
            )
        how = "given"
    elif o.cutoff_hz is not None:
        harmonics = np.arange(1, min(int(np.floor(o.cutoff_hz * period + 1e-9)), bins - 2) + 1)
        how = f"all up to the cut-off {o.cutoff_hz:g} Hz"
    else:
        # the band follows the positions: torques carry broadband harmonics of Coulomb friction (sign(qd)) that
        # would let noise into the differentiated positions; the regressor is filtered to the same band
        power = np.abs(np.fft.rfft(mean_q, axis=0) / mm) ** 2
        floor = noise.pooled_noise_floor(harm_q, kk)
        floor = np.maximum(floor, 1e-24 * power.max(axis=0))  # below double precision: not a signal
        harmonics = periodic.select_harmonics_snr(power, np.maximum(floor, 1e-300), o.snr_threshold)
        # never differentiate near the Nyquist frequency: a tone there (aliasing, a sampling artefact) multiplied
        # by (h omega)^2 would swamp the accelerations; the automatic band stops at half the Nyquist frequency
        harmonics = harmonics[harmonics <= mm // 4]
        how = (
            f"where the averaged positions stand {o.snr_threshold:g} times above the period-scatter "
            "noise (running median over 17 harmonics), up to half the Nyquist frequency"
        )
        if o.excited_harmonics:
            excited = np.asarray([x for x in o.excited_harmonics if x < bins - 1], dtype=int)
            harmonics = np.union1d(harmonics, excited)
            how += f", plus the excited harmonics {_ranges(tuple(int(x) for x in excited))}"
        if harmonics.size == 0:
            harmonics = np.array([1])
    mask = periodic.harmonic_mask(bins, harmonics)
    # Torque band: the rigid-body dynamics are nonlinear in the states, so a trajectory with H harmonics drives
    # torques at many more (and Coulomb friction is broadband). Cutting the torque to the position band would
    # throw that signal away and leave only 2H + 1 independent equations per joint. The torque keeps, besides
    # the position band, every harmonic where it stands above its own period-scatter noise (or, with a
    # cut-off, every harmonic below it); the regressor is filtered to the same band (apply_filter).
    if o.torque_band == "all":
        mask_tau = np.ones_like(mask)
        band_how = "all harmonics (period averaging only)"
    elif o.torque_band == "positions":
        mask_tau = mask.copy()
        band_how = "the position band"
    else:
        power_tau = np.abs(np.fft.rfft(mean_tau, axis=0) / mm) ** 2
        floor_tau = np.maximum(noise.pooled_noise_floor(harm_tau, kk), 1e-24 * power_tau.max(axis=0))
        extra = periodic.select_harmonics_snr(power_tau, np.maximum(floor_tau, 1e-300), o.snr_threshold)
        mask_tau = mask | periodic.harmonic_mask(bins, extra)
        band_how = (
            f"the position band plus every harmonic where the averaged torque stands {o.snr_threshold:g} times "
            "above its period-scatter noise"
        )
    orders = max(2, o.derivatives)
    derivs = periodic.spectral_derivatives(mean_q, mask, period, orders)
    tau_f = periodic.spectral_derivatives(mean_tau, mask_tau, period, 0)[0]
    theta_f = None
    if "theta" in cut.periods:
        theta_f = periodic.spectral_derivatives(cut.periods["theta"][keep].mean(axis=0), mask, period, 2)
    kept = tuple(int(x) for x in np.flatnonzero(mask[1:]) + 1)
    lines.append(
        f"DFT of the averaged period: kept DC and {len(kept)} harmonics ({how}): {_ranges(kept)} "
        f"(highest {max(kept) / period:.4g} Hz); positions differentiated by (j h omega)^n, omega = 2 pi / T"
    )
    kept_tau = tuple(int(x) for x in np.flatnonzero(mask_tau[1:]) + 1)
    lines.append(
        f"torques: kept DC and {len(kept_tau)} harmonics ({band_how})"
        + ("" if o.torque_band == "all" else f": {_ranges(kept_tau)}; the regressor is filtered to the same band")
    )
    est = NoiseEstimate(
        q_std=_t(np.sqrt(var_q)),
        tau_std=_t(np.sqrt(var_tau)),
        q_std_processed=_t(np.sqrt(noise.processed_variance(harm_q, mask, omega, 0, mm))),
        qd_std_processed=_t(np.sqrt(noise.processed_variance(harm_q, mask, omega, 1, mm))),
        qdd_std_processed=_t(np.sqrt(noise.processed_variance(harm_q, mask, omega, 2, mm))),
        tau_std_processed=_t(np.sqrt(noise.processed_variance(harm_tau, mask_tau, omega, 0, mm))),
        method=f"scatter between {kk} periods (unbiased variance per sample and per harmonic)",
        per_harmonic_q=harm_q,
        per_harmonic_tau=harm_tau,
    )
    lines.append(
        "noise per joint from the scatter between periods: tau std per sample "
        + _fmt(est.tau_std)
        + ", after averaging and filtering "
        + _fmt(est.tau_std_processed)
    )

    def apply_filter(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[0] != mm:
            raise ValueError(f"apply_filter expects {mm} samples (one period), got {x.shape[0]}")
        spectrum = np.fft.rfft(x, axis=0)
        shape = (bins,) + (1,) * (x.ndim - 1)
        return np.fft.irfft(spectrum * mask_tau.reshape(shape), n=mm, axis=0)

    return _Result(
        t=cut.t,
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=apply_filter,
        mode="periodic",
        rate=mm / period,
        period=period,
        period_source=source,
        n_periods=kk,
        harmonics=kept,
        segment=(a, a + k * period),
        rejected=rejected,
    )


def _single_period(
    t: np.ndarray,
    sig: dict,
    window: tuple[int, int],
    o: ProcessingOptions,
    source: str | None,
    where: str,
    period: float | None = None,
) -> _Result:
    i0, i1 = window
    h = float(t[1] - t[0])
    m = i1 - i0
    if m < MIN_SAMPLES:
        raise RobidInputError(f"{where}: the motion segment has only {m} samples; at least {MIN_SAMPLES} are needed")
    period = m * h
    orders = max(2, o.derivatives)
    bins = m // 2 + 1
    omega = 2.0 * np.pi / period

    def periodised(x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        steps = periodic.endpoint_step(x[i0], x[i1], m, period, orders)
        return x[i0:i1] - steps[0], steps

    rq, step_q = periodised(sig["q"])
    rtau, step_tau = periodised(sig["tau"])
    if o.harmonics is not None:
        harmonics = np.asarray(sorted(set(o.harmonics)))
        if harmonics.max() >= bins - 1:
            raise RobidInputError(f"harmonics: {harmonics.max()} is at or above the Nyquist harmonic {bins - 1}")
        how = "given"
    elif o.cutoff_hz is not None:
        harmonics = np.arange(1, min(int(np.floor(o.cutoff_hz * period + 1e-9)), bins - 2) + 1)
        how = f"all up to the cut-off {o.cutoff_hz:g} Hz"
    else:
        fc = filtering.estimate_cutoff(t[i0:i1], sig["q"][i0:i1], 1.0 / h)
        top = int(np.floor(fc * period + 1e-9))
        how = f"band up to {fc:.4g} Hz: {_AUTO_CUTOFF}"
        if o.excited_harmonics and max(o.excited_harmonics) > top:
            top = max(o.excited_harmonics)
            how += f"; widened to the highest excited harmonic {top}"
        harmonics = np.arange(1, min(top, bins - 2) + 1)
    mask = periodic.harmonic_mask(bins, harmonics)
    dq = periodic.spectral_derivatives(rq, mask, period, orders)
    derivs = [dq[k] + step_q[k] for k in range(orders + 1)]
    tau_f = periodic.spectral_derivatives(rtau, mask, period, 0)[0] + step_tau[0]
    theta_f = None
    if sig.get("theta") is not None:
        rth, step_th = periodised(sig["theta"])
        dth = periodic.spectral_derivatives(rth, mask, period, 2)
        theta_f = [dth[k] + step_th[k] for k in range(3)]
    n_kept = int(np.count_nonzero(mask))
    removed = (m - (2 * n_kept - 1)) / m
    var_q = noise.residual_variance(rq, dq[0], removed)
    var_tau = noise.residual_variance(rtau, tau_f - step_tau[0], removed)
    white_q = np.broadcast_to(var_q / m, (bins, var_q.size))
    white_tau = np.broadcast_to(var_tau / m, (bins, var_tau.size))
    est = NoiseEstimate(
        q_std=_t(np.sqrt(var_q)),
        tau_std=_t(np.sqrt(var_tau)),
        q_std_processed=_t(np.sqrt(noise.processed_variance(white_q, mask, omega, 0, m))),
        qd_std_processed=_t(np.sqrt(noise.processed_variance(white_q, mask, omega, 1, m))),
        qdd_std_processed=_t(np.sqrt(noise.processed_variance(white_q, mask, omega, 2, m))),
        tau_std_processed=_t(np.sqrt(noise.processed_variance(white_tau, mask, omega, 0, m))),
        method="out-of-band residual of one period (white-noise assumption, corrected for the kept degrees of freedom)",
    )
    kept = tuple(int(x) for x in np.flatnonzero(mask[1:]) + 1)
    lines = [
        f"single period: samples {i0}-{i1} ({t[i0]:g}-{t[i1]:g} s), T = {period:g} s, M = {m}; the jump between "
        "its ends is removed by a 9th-order smooth step (derivatives 1-4 zero at both ends) and added back "
        "analytically",
        f"DFT: kept DC and harmonics {_ranges(kept)} ({how}; highest {max(kept) / period:.4g} Hz); positions "
        "differentiated by (j h omega)^n; torques kept at the same harmonics",
        "noise per joint from the out-of-band residual: tau std per sample " + _fmt(est.tau_std),
    ]

    def apply_filter(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[0] != m:
            raise ValueError(f"apply_filter expects {m} samples, got {x.shape[0]}")
        end = x[-1] + (x[-1] - x[-2])  # value one step after the window, extrapolated
        flat = x.reshape(m, -1)
        step = periodic.endpoint_step(flat[0], end.reshape(-1), m, period, 0)[0]
        r = flat - step
        spectrum = np.fft.rfft(r, axis=0)
        out = np.fft.irfft(spectrum * mask[:, None], n=m, axis=0) + step
        return out.reshape(x.shape)

    return _Result(
        t=t[i0:i1],
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=apply_filter,
        mode="rest-to-rest" if source == "segment" else "periodic",
        rate=1.0 / h,
        lines=lines,
        period=period,
        period_source=source,
        n_periods=1,
        harmonics=kept,
        segment=(float(t[i0]), float(t[i1])),
    )


# -------------------------------------------------------------------------------------- non-periodic path
def _nonperiodic(t: np.ndarray, sig: dict, o: ProcessingOptions, where: str) -> _Result:
    h = float(t[1] - t[0])
    rate = 1.0 / h
    q, tau = sig["q"], sig["tau"]
    if o.cutoff_hz is not None:
        fc, how = o.cutoff_hz, "given"
    else:
        fc = filtering.estimate_cutoff(t, q, rate)
        how = f"from the data: {_AUTO_CUTOFF}"
    if fc >= 0.5 * rate:
        raise RobidInputError(f"cutoff: {fc:g} Hz is not below the Nyquist frequency {0.5 * rate:g} Hz")
    r = o.decimate
    if r > 1 and fc > 0.8 * rate / (2 * r):
        raise RobidInputError(
            f"decimate: by {r} the Nyquist frequency drops to {rate / (2 * r):g} Hz; the cut-off {fc:g} Hz must "
            f"stay below 80 % of it"
        )
    orders = max(2, o.derivatives)
    sos = filtering.lowpass_sos(fc, rate, o.filter_order)
    edge = filtering.edge_samples(fc, rate, orders)
    if t.size - 2 * edge < MIN_SAMPLES:
        raise RobidInputError(
            f"{where}: {t.size} samples are too few for the cut-off {fc:g} Hz: {edge} samples are trimmed at each "
            "end while the zero-phase filter settles"
        )
    qf = filtering.zero_phase(q, sos)
    derivs = [qf]
    for _ in range(orders):
        derivs.append(filtering.derivative(derivs[-1], h))
    tau_f = filtering.zero_phase(tau, sos)
    theta_f = None
    if sig.get("theta") is not None:
        theta_f = [filtering.zero_phase(sig["theta"], sos)]
        for _ in range(2):
            theta_f.append(filtering.derivative(theta_f[-1], h))
    inner = slice(edge, t.size - edge)
    f, h2 = filtering.magnitude_squared(sos, rate)
    removed = float(np.mean((1.0 - h2) ** 2))
    var_q = noise.residual_variance(q[inner], qf[inner], removed)
    var_tau = noise.residual_variance(tau[inner], tau_f[inner], removed)
    gains = [float(np.mean(h2**2 * filtering.derivative_gain(f, rate) ** (2 * k))) for k in range(3)]
    est = NoiseEstimate(
        q_std=_t(np.sqrt(var_q)),
        tau_std=_t(np.sqrt(var_tau)),
        q_std_processed=_t(np.sqrt(var_q * gains[0])),
        qd_std_processed=_t(np.sqrt(var_q * gains[1])),
        qdd_std_processed=_t(np.sqrt(var_q * gains[2])),
        tau_std_processed=_t(np.sqrt(var_tau * gains[0])),
        method="residual of the zero-phase low-pass (white-noise assumption, scaled by the filter's noise bandwidth)",
    )
    pick = slice(edge, t.size - edge, r)
    lines = [
        f"non-periodic: Butterworth low-pass of order {o.filter_order} at {fc:.4g} Hz ({how}), run forwards and "
        "backwards (zero phase, |H|^2) on positions, torques and motor positions alike",
        f"derivatives: 5-point central differences of the filtered positions, applied {orders} times",
        f"edges: {edge} samples trimmed at each end ({edge * h:g} s) while the filter settles",
        "noise per joint from the filter residual: tau std per sample " + _fmt(est.tau_std),
    ]
    if r > 1:
        lines.append(f"decimated by {r}: {rate / r:g} Hz")
    sos_out = filtering.lowpass_sos(fc, rate / r, o.filter_order)

    def apply_filter(x: np.ndarray) -> np.ndarray:
        return filtering.zero_phase(np.asarray(x, dtype=float), sos_out)

    return _Result(
        t=t[pick],
        derivs=[d[pick] for d in derivs],
        tau=tau_f[pick],
        theta=[x[pick] for x in theta_f] if theta_f is not None else None,
        noise=est,
        apply_filter=apply_filter,
        mode="nonperiodic",
        rate=rate / r,
        lines=lines,
        cutoff=fc,
        segment=(float(t[edge]), float(t[t.size - edge - 1])),
        trimmed=(edge, edge),
    )


# -------------------------------------------------------------------------------------------- selection
def _select(result: _Result, o: ProcessingOptions, lines: list[str]):
    t, qd = result.t, result.derivs[1]
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
    return keep, still


def _t(x: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(x).ravel())


def _fmt(values: tuple[float, ...]) -> str:
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


def _ranges(h: tuple[int, ...]) -> str:
    if not h:
        return "none"
    out, start, prev = [], h[0], h[0]
    for x in h[1:]:
        if x == prev + 1:
            prev = x
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = x
    out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)
