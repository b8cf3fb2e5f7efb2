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
from robid.signals.path_result import MIN_SAMPLES, PathResult, format_ranges, format_values, kept_harmonics

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
    harmonics, how = bands.position_harmonics(
        o,
        period,
        bins,
        lambda: bands.estimated_band(t[i0:i1], sig["q"][i0:i1], 1.0 / h, period, bins, o.excited_harmonics),
    )
    mask = periodic.harmonic_mask(bins, harmonics)
    dq = periodic.spectral_derivatives(rq, mask, period, orders)
    derivs = [dq[k] + step_q[k] for k in range(orders + 1)]
    tau_f = periodic.spectral_derivatives(rtau, mask, period, 0)[0] + step_tau[0]
    theta_f = None
    if sig.get("theta") is not None:
        rth, step_th = _periodised(sig["theta"], window, period, orders)
        dth = periodic.spectral_derivatives(rth, mask, period, 2)
        theta_f = [dth[k] + step_th[k] for k in range(3)]
    n_kept = int(np.count_nonzero(mask))
    removed = (m - (2 * n_kept - 1)) / m
    var_q = noise.residual_variance(rq, dq[0], removed)
    var_tau = noise.residual_variance(rtau, tau_f - step_tau[0], removed)
    est = noise.spectral_estimate(
        var_q,
        var_tau,
        noise.white_spectrum(var_q, m, bins),
        noise.white_spectrum(var_tau, m, bins),
        (mask, mask),
        2.0 * np.pi / period,
        m,
        "out-of-band residual of one period (white-noise assumption, corrected for the kept degrees of freedom)",
    )
    kept = kept_harmonics(mask)
    lines = [
        f"single period: samples {i0}-{i1} ({t[i0]:g}-{t[i1]:g} s), T = {period:g} s, M = {m}; the jump between "
        "its ends is removed by a 9th-order smooth step (derivatives 1-4 zero at both ends) and added back "
        "analytically",
        f"DFT: kept DC and harmonics {format_ranges(kept)} ({how}; highest {max(kept) / period:.4g} Hz); positions "
        "differentiated by (j h omega)^n; torques kept at the same harmonics",
        "noise per joint from the out-of-band residual: tau std per sample " + format_values(est.tau_std),
    ]
    return PathResult(
        t=t[i0:i1],
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=periodic.window_filter(mask, m, period, "the window"),
        mode="rest-to-rest" if source == "segment" else "periodic",
        rate=1.0 / h,
        lines=lines,
        period=period,
        period_source=source,
        n_periods=1,
        harmonics=kept,
        segment=(float(t[i0]), float(t[i1])),
    )


def _periodised(
    x: np.ndarray, window: tuple[int, int], period: float, orders: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The window of ``x`` minus the smooth step between its ends, and the step with its derivatives."""
    i0, i1 = window
    steps = periodic.endpoint_step(x[i0], x[i1], i1 - i0, period, orders)
    return x[i0:i1] - steps[0], steps
