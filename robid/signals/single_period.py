"""The single-period path: one rest-to-rest motion (or the only whole period of a periodic record) processed
as one period (docs/signals.md section 6, "A single rest-to-rest period").

The window [i0, i1) of M samples does not close on itself: the jump x(i1) - x(i0) times the smooth step
s(t/T) of :func:`robid.signals.periodic.endpoint_step` (derivatives 1-4 zero at both ends) is subtracted,
the remainder is kept at the band's harmonics and differentiated by (j h omega)^n, and the step's exact
derivatives are added back. Torques and motor positions go through the same operator. Noise: the
out-of-band residual, s^2 = sum (x - x_f)^2 / (M - D) with D = 2|H| + 1 kept real degrees of freedom
(white-noise assumption, docs/signals.md section 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robid.errors import RobidInputError
from robid.signals import bands, noise, periodic
from robid.signals.cutoff import choose_cutoff
from robid.signals.path_result import MIN_SAMPLES, PathResult, format_ranges, format_values
from robid.signals.spectral_band import ORDER, SpectralBand

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions


def process_single_period(
    t: np.ndarray, sig: dict, window: tuple[int, int], o: ProcessingOptions, source: str | None, where: str
) -> PathResult:
    """Process the samples ``window`` = (i0, i1) of the uniform grid ``t`` as one period T = (i1 - i0) h.

    ``source`` is where the period came from: "segment" (a rest-to-rest record) or that of a periodic record
    with a single whole period.
    """
    i0, i1 = window
    h = float(t[1] - t[0])
    m = i1 - i0
    if m < MIN_SAMPLES:
        raise RobidInputError(f"{where}: the motion segment has only {m} samples; at least {MIN_SAMPLES} are needed")
    period = m * h
    orders = max(2, o.derivatives)
    bins = m // 2 + 1
    rq, step_q = _periodised(sig["q"], window, period, orders)
    rtau, step_tau = _periodised(sig["tau"], window, period, orders)
    band = _band(t[i0:i1], rq, 1.0 / h, period, bins, o)
    weights = band.weights()[:, 0]
    dq = periodic.spectral_derivatives(rq, weights, period, orders)
    derivs = [dq[k] + step_q[k] for k in range(orders + 1)]
    tau_f = periodic.spectral_derivatives(rtau, weights, period, 0)[0] + step_tau[0]
    theta_f = None
    if sig.get("theta") is not None:
        rth, step_th = _periodised(sig["theta"], window, period, orders)
        dth = periodic.spectral_derivatives(rth, weights, period, 2)
        theta_f = [dth[k] + step_th[k] for k in range(3)]
    var_q, q_how = _position_noise(band, rq, dq[0], weights, m)
    var_tau = noise.robust_white_std(rtau) ** 2
    est = noise.spectral_estimate(
        var_q,
        var_tau,
        noise.white_spectrum(var_q, m, bins),
        noise.white_spectrum(var_tau, m, bins),
        (weights, weights),
        2.0 * np.pi / period,
        m,
        f"positions: {q_how}; torques: median absolute third difference (robust to friction steps, white-noise "
        "assumption)",
    )
    lines = [
        f"single period: samples {i0}-{i1} ({t[i0]:g}-{t[i1]:g} s), T = {period:g} s, M = {m}; the jump between "
        "its ends is removed by a 9th-order smooth step (derivatives 1-4 zero at both ends) and added back "
        "analytically",
        f"DFT: {band.describe(period)}; positions differentiated by (j h omega)^n; torques weighted alike",
        "noise per joint: tau std per sample " + format_values(est.tau_std),
    ]
    return PathResult(
        t=t[i0:i1],
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=periodic.window_filter(weights, m, period, "the window"),
        mode="rest-to-rest" if source == "segment" else "periodic",
        rate=1.0 / h,
        lines=lines,
        period=period,
        period_source=source,
        n_periods=1,
        harmonics=band.kept(),
        cutoff=band.cutoffs[0] / period if band.cutoffs[0] is not None else None,
        segment=(float(t[i0]), float(t[i1])),
    )


def _periodised(
    x: np.ndarray, window: tuple[int, int], period: float, orders: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The window of ``x`` minus the smooth step between its ends, and the step with its derivatives."""
    i0, i1 = window
    steps = periodic.endpoint_step(x[i0], x[i1], i1 - i0, period, orders)
    return x[i0:i1] - steps[0], steps


def _band(t: np.ndarray, rq: np.ndarray, rate: float, period: float, bins: int, o: ProcessingOptions) -> SpectralBand:
    """The band of one period: the harmonics given or up to a given cut-off (hard), else the smooth response at
    the cut-off of least predicted acceleration error (:func:`robid.signals.cutoff.choose_cutoff` with the
    exact derivative, on the positions with the jump between the ends removed), with W = 1 on the design's
    excited harmonics."""
    if o.harmonics is not None or o.cutoff_hz is not None:
        harmonics, how = bands.position_harmonics(o, period, bins, lambda: (np.array([1]), ""))
        return SpectralBand.hard(periodic.harmonic_mask(bins, harmonics), how)
    choice = choose_cutoff(rq, rate, ORDER, period, spectral=True)
    how = f"zero-phase Butterworth response of order {ORDER} at {choice.cutoff:.4g} Hz: {choice.describe()}"
    band = SpectralBand(np.zeros(bins, dtype=bool), how, (choice.cutoff * period,), ORDER)
    excited = [x for x in (o.excited_harmonics or ()) if 1 <= x < bins - 1]
    if excited:
        band = band.with_extra(
            periodic.harmonic_mask(bins, np.asarray(excited)),
            f"{how}; weight 1 on the excited harmonics {format_ranges(tuple(excited))}",
        )
    return band


def _position_noise(
    band: SpectralBand, rq: np.ndarray, filtered: np.ndarray, weights: np.ndarray, m: int
) -> tuple[np.ndarray, str]:
    """White position noise variance (C,) and how it was found: for a hard band, the out-of-band residual
    corrected for the kept degrees of freedom; for a smooth band, robust to the motion's own content (the
    median absolute third difference)."""
    if band.smooth:
        return noise.robust_white_std(rq) ** 2, "median absolute third difference (white-noise assumption)"
    removed = float(np.sum(noise.harmonic_weights(m, weights.size) * (1.0 - weights) ** 2)) / m
    return (
        noise.residual_variance(rq, filtered, removed),
        "out-of-band residual of one period (white-noise assumption, corrected for the kept degrees of freedom)",
    )
