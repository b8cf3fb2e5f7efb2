"""The non-periodic path: zero-phase low-pass, central differences, edge trimming, decimation (docs/signals.md
section 7; the filter, the differentiator and their gains are in :mod:`robid.signals.filtering`).

Noise (section 8): from the filter residual, s^2 = mean (x - x_f)^2 / mean_f (1 - |H|^2)^2, and on the
processed signals s^2 mean_f |H|^4 |D(f)|^(2n) (white-noise assumption).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robid.errors import RobidInputError
from robid.signals import bands, filtering, noise
from robid.signals.path_result import MIN_SAMPLES, PathResult, format_values
from robid.signals.records import NoiseEstimate

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions


def process_nonperiodic(t: np.ndarray, sig: dict, o: ProcessingOptions, where: str) -> PathResult:
    """Filter and differentiate the record on the uniform grid ``t``; trim the edges and decimate."""
    h = float(t[1] - t[0])
    rate = 1.0 / h
    q, tau = sig["q"], sig["tau"]
    fc, how = bands.lowpass_cutoff(o.cutoff_hz, t, q, rate)
    r = o.decimate
    orders = max(2, o.derivatives)
    edge = _check_band(fc, rate, r, orders, t.size, where)
    sos = filtering.lowpass_sos(fc, rate, o.filter_order)
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
    est = _noise(q, qf, tau, tau_f, sos, rate, slice(edge, t.size - edge))
    pick = slice(edge, t.size - edge, r)
    lines = [
        f"non-periodic: Butterworth low-pass of order {o.filter_order} at {fc:.4g} Hz ({how}), run forwards and "
        "backwards (zero phase, |H|^2) on positions, torques and motor positions alike",
        f"derivatives: 5-point central differences of the filtered positions, applied {orders} times",
        f"edges: {edge} samples trimmed at each end ({edge * h:g} s) while the filter settles",
        "noise per joint from the filter residual: tau std per sample " + format_values(est.tau_std),
    ]
    if r > 1:
        lines.append(f"decimated by {r}: {rate / r:g} Hz")
    sos_out = filtering.lowpass_sos(fc, rate / r, o.filter_order)

    def apply_filter(x: np.ndarray) -> np.ndarray:
        return filtering.zero_phase(np.asarray(x, dtype=float), sos_out)

    return PathResult(
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


def _check_band(fc: float, rate: float, r: int, orders: int, n: int, where: str) -> int:
    """Refuse a cut-off at or above Nyquist, decimation that would alias, and too few samples left after
    trimming; returns the samples trimmed at each end."""
    if fc >= 0.5 * rate:
        raise RobidInputError(f"cutoff: {fc:g} Hz is not below the Nyquist frequency {0.5 * rate:g} Hz")
    if r > 1 and fc > 0.8 * rate / (2 * r):
        raise RobidInputError(
            f"decimate: by {r} the Nyquist frequency drops to {rate / (2 * r):g} Hz; the cut-off {fc:g} Hz must "
            f"stay below 80 % of it"
        )
    edge = filtering.edge_samples(fc, rate, orders)
    if n - 2 * edge < MIN_SAMPLES:
        raise RobidInputError(
            f"{where}: {n} samples are too few for the cut-off {fc:g} Hz: {edge} samples are trimmed at each "
            "end while the zero-phase filter settles"
        )
    return edge


def _noise(
    q: np.ndarray, qf: np.ndarray, tau: np.ndarray, tau_f: np.ndarray, sos: np.ndarray, rate: float, inner: slice
) -> NoiseEstimate:
    """Noise record from the filter residual on the settled samples ``inner``."""
    f, h2 = filtering.magnitude_squared(sos, rate)
    removed = float(np.mean((1.0 - h2) ** 2))
    var_q = noise.residual_variance(q[inner], qf[inner], removed)
    var_tau = noise.residual_variance(tau[inner], tau_f[inner], removed)
    gains = [float(np.mean(h2**2 * filtering.derivative_gain(f, rate) ** (2 * k))) for k in range(3)]
    return noise.filtered_estimate(
        var_q,
        var_tau,
        gains,
        "residual of the zero-phase low-pass (white-noise assumption, scaled by the filter's noise bandwidth)",
    )
