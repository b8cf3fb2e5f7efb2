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

from robid.defaults import PERIODIC, REST_TO_REST
from robid.errors import RobidInputError
from robid.signals import bands, cutoff, noise, periodic
from robid.signals.path_result import MIN_SAMPLES, PathResult, format_ranges, format_values, kept_harmonics

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions


def process_single_period(
    t: np.ndarray,
    sig: dict,
    window: tuple[int, int],
    o: ProcessingOptions,
    source: str | None,
    where: str,
    spectra: cutoff.PositionSpectra | None = None,
) -> PathResult:
    """Process the samples ``window`` = (i0, i1) of the uniform grid ``t`` as one period T = (i1 - i0) h.

    ``source`` is where the period came from: "segment" (a rest-to-rest record) or that of a periodic record
    with a single whole period. ``spectra``: the spectral estimates of the whole record's positions when the
    caller has them (the automatic band's cut-offs are chosen on the whole record, as the plain recipe's).
    """
    i0, i1 = window
    h = float(t[1] - t[0])
    m = i1 - i0
    if m < MIN_SAMPLES:
        raise RobidInputError(f"{where}: the motion segment has only {m} samples; at least {MIN_SAMPLES} are needed")
    period = m * h
    orders = max(2, o.derivatives)
    bins = m // 2 + 1
    # a rest-to-rest window starts and ends at rest: its end values are the means of the rests' first and last
    # samples, not two single noisy samples (whose difference, as a step with exact derivatives, is not filtered)
    rest = max(1, min(int(round(REST_MEAN_S / h)), m // 20)) if source == "segment" else 1
    rq, step_q = _periodised(sig["q"], window, period, orders, rest)
    rtau, step_tau = _periodised(sig["tau"], window, period, orders)
    mask, mask_tau, how, predicted = _band(t, sig["q"], o, spectra, period, bins)
    dq = periodic.spectral_derivatives(rq, mask, period, orders)
    derivs = [dq[k] + step_q[k] for k in range(orders + 1)]
    tau_f = periodic.spectral_derivatives(rtau, mask_tau, period, 0)[0] + step_tau[0]
    theta_f = _motor_derivatives(sig["theta"], window, period, orders, mask) if sig.get("theta") is not None else None
    est = _noise(rq, dq[0], rtau, tau_f - step_tau[0], (mask, mask_tau), period)
    kept = kept_harmonics(np.any(np.reshape(mask, (bins, -1)) >= 0.5, axis=1))
    lines = _method_lines(t, window, period, kept, how, est)
    return PathResult(
        t=t[i0:i1],
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=periodic.window_filter(mask_tau, m, period, "the window"),
        mode=REST_TO_REST if source == "segment" else PERIODIC,
        rate=1.0 / h,
        lines=lines,
        period=period,
        period_source=source,
        n_periods=1,
        harmonics=kept,
        segment=(float(t[i0]), float(t[i1])),
        predicted_qdd_error=predicted if predicted is not None else est.qdd_std_processed,
        onto_grid=lambda x: x[i0:i1],
    )



def _motor_derivatives(theta: np.ndarray, window: tuple[int, int], period: float, orders: int,
                       mask: np.ndarray) -> list[np.ndarray]:
    """The motor positions of the window and their first two derivatives through the positions' band, the jump
    between the window's ends added back."""
    rth, step_th = _periodised(theta, window, period, orders)
    dth = periodic.spectral_derivatives(rth, mask, period, 2)
    return [dth[k] + step_th[k] for k in range(3)]


def _method_lines(t: np.ndarray, window: tuple[int, int], period: float, kept, how: str, est) -> list[str]:
    """What the single-period path did: the window and its end jump, the harmonics kept, the noise."""
    i0, i1 = window
    m = i1 - i0
    return [
        f"single period: samples {i0}-{i1} ({t[i0]:g}-{t[i1]:g} s), T = {period:g} s, M = {m}; the jump between "
        "its ends is removed by a 9th-order smooth step (derivatives 1-4 zero at both ends) and added back "
        "analytically",
        f"DFT: kept DC and harmonics {format_ranges(kept)} ({how}; highest {max(kept, default=0) / period:.4g} Hz); "
        "positions differentiated by (j h omega)^n; torques through the same weights",
        "noise per joint from the out-of-band residual: tau std per sample " + format_values(est.tau_std),
    ]

def _band(
    t: np.ndarray, q: np.ndarray, o: ProcessingOptions, spectra, period: float, bins: int
) -> tuple[np.ndarray, np.ndarray, str, tuple[float, ...] | None]:
    """(position weights, torque weights, how, predicted rms qdd error per joint or None): the harmonics given or
    up to the cut-off given, else automatic (:func:`_automatic_weights`, on the whole record ``t``, ``q``)."""
    if o.harmonics is None and o.cutoff_hz is None:
        rate = (t.size - 1) / float(t[-1] - t[0])
        spectra = spectra if spectra is not None else cutoff.PositionSpectra.of(q, rate)
        return _automatic_weights(q, spectra, float(t[-1] - t[0]), period, bins, o)
    harmonics, how = bands.position_harmonics(o, period, bins, lambda: None)
    mask = periodic.harmonic_mask(bins, harmonics).astype(float)
    return mask, mask, how, None


def _noise(rq, rq_f, rtau, rtau_f, masks: tuple[np.ndarray, np.ndarray], period: float):
    """The noise record of one period from the out-of-band residuals of the periodised positions ``rq`` and
    torques ``rtau`` (filtered: ``rq_f``, ``rtau_f``) through the weights ``masks``; the share of white noise the
    weights remove is sum_h w_h (1 - W_h)^2 / M (Parseval). Torques kept whole: the robust white level."""
    m = rq.shape[0]
    bins = m // 2 + 1
    removed_q, removed_tau = (noise.harmonic_weights(m, bins) @ (1.0 - w) ** 2 / m for w in masks)
    var_q = noise.residual_variance(rq, rq_f, removed_q)
    if np.all(np.asarray(removed_tau) > 1e-3):
        var_tau = noise.residual_variance(rtau, rtau_f, removed_tau)
    else:  # nothing removed: the robust white-noise level (third differences, blind to friction steps)
        var_tau = noise.robust_white_std(rtau) ** 2
    return noise.spectral_estimate(
        var_q,
        var_tau,
        noise.white_spectrum(var_q, m, bins),
        noise.white_spectrum(var_tau, m, bins),
        masks,
        2.0 * np.pi / period,
        m,
        "out-of-band residual of one period (white-noise assumption, corrected for the share of noise the band "
        "removes)",
    )


def _automatic_weights(
    q: np.ndarray, spectra: cutoff.PositionSpectra, span: float, period: float, bins: int, o: ProcessingOptions
) -> tuple[np.ndarray, np.ndarray, str, tuple[float, ...]]:
    """The automatic band of one period (docs/signals.md section 6): per joint, the zero-phase response of the
    Butterworth of ``o.filter_order`` at the cut-off of least predicted acceleration error of that joint -- the
    non-periodic path's rule (:func:`robid.signals.cutoff.choose_cutoff`) on the whole record's positions ``q``
    (of ``span`` seconds; their ``spectra``) -- as weights over the harmonics h / T (bins, C); the torques'
    weights (bins,) at the cut-off of the joints together (the non-periodic path's filter, shared by the
    regressor); both raised to 1 at the excited harmonics of a trajectory. With the how and the predicted rms
    qdd error per joint (spectral differentiation: the exact j omega). The whole record, not the window: the
    multitaper's resolution is +-6 / span, and on the window of a short move (5 s) it smeared the motion over
    +-1.2 Hz; the cut-offs came out at 0.7 of the hindsight-best and the predicted errors 6 times too small."""
    rate = spectra.rate
    choice = cutoff.choose_cutoff(q, rate, o.filter_order, span, spectra=spectra)
    f = np.arange(bins) / period
    weights = np.column_stack([cutoff.zero_phase_response(f, c, rate, o.filter_order) for c in choice.own_cutoffs])
    common = cutoff.zero_phase_response(f, choice.cutoff, rate, o.filter_order)
    how = (
        f"per joint the zero-phase Butterworth response of order {o.filter_order} at the cut-off of least predicted "
        f"acceleration error (the non-periodic path's rule): {format_values(choice.own_cutoffs)} Hz; torques at "
        f"{choice.cutoff:.4g} Hz, that of the joints together"
    )
    if o.excited_harmonics:
        inside = [x for x in o.excited_harmonics if x < bins - 1]
        weights[inside], common[inside] = 1.0, 1.0
        how += f", raised to 1 at the excited harmonics {format_ranges(tuple(inside))}"
    weights[-1], common[-1] = 0.0, 0.0  # the Nyquist bin's derivative is ambiguous; the response is ~0 there
    predicted = tuple(
        float(spectra.error(c, o.filter_order, "exact")[j]) for j, c in enumerate(choice.own_cutoffs)
    )
    return weights, common, how, predicted


#: the end values of a rest-to-rest window are the means over this long at its two ends (s; at most 1/20 of it)
REST_MEAN_S = 0.1


def _periodised(
    x: np.ndarray, window: tuple[int, int], period: float, orders: int, rest: int = 1
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The window of ``x`` minus the smooth step between its ends, and the step with its derivatives; the end
    values are the means of ``rest`` samples at each end (1: the samples x[i0] and x[i1])."""
    i0, i1 = window
    start = x[i0 : i0 + rest].mean(axis=0)
    end = x[max(i1 - rest + 1, i0) : i1 + 1].mean(axis=0)
    steps = periodic.endpoint_step(start, end, i1 - i0, period, orders)
    return x[i0:i1] - steps[0], steps
