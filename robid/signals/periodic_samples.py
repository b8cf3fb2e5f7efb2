"""Every sample of the K whole periods, not averaged (``ProcessingOptions(average_periods=False)``, mode
``"periodic-samples"``): spectral derivatives of the K-period block in the band chosen on the averaged period
(docs/signals.md section 6, "Every sample of the periods"). For predicting each measured sample.

The K periods (K M samples, cut as for averaging) form one record of period K T; its DFT
X_K[b] = (1/(K M)) sum_n x[n] exp(-2 pi j b n / (K M)), b = 0 .. K M/2, has bin b at the frequency b / (K T):
bin b = K h is harmonic h of the period, the bins between harmonics carry what differs from period to period
(noise, a slow drift, a transient). Kept: every bin within half a harmonic of a kept harmonic, i.e. whose
h(b) = floor(b/K + 1/2) is in the band H of the averaged path (DC included). Derivatives (Pintelon & Schoukens
ch. 2, as for one period): x^(n)(t_i) = sum_{b kept} X_K[b] (j 2 pi b / (K T))^n exp(2 pi j b i / (K M)).

Why the whole block and not each period on its own: a period transformed alone is made periodic over T, so
any difference between its two ends (one period not quite like the next) rings at every period boundary;
the block is continuous across its inner boundaries and only its own two ends meet.

Noise: with exactly periodic data, keeping only the bins b = K h would return the averaged period repeated K
times; keeping the K bins around each harmonic keeps each period's own deviations at the price of K times
the noise variance of the average. The scatter between periods cannot tell noise from such deviations, so the
noise is read from the block's quiet bins -- between harmonics (b not a multiple of K: a periodic signal has
nothing there) and outside the position band (what changes from period to period stays near the kept
harmonics): var(X_K[b]) by a running median over 33 quiet bins (chi-square median correction, ln 2),
interpolated across the band; var(x^(n)) = sum_{b kept} w_b (2 pi b / (K T))^(2n) var(X_K[b]) (Parseval,
w_b = 1 at DC, else 2), and per sample s^2 = sum_b w_b var(X_K[b]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robid.signals import noise, periodic
from robid.signals.path_result import PathResult, format_values

if TYPE_CHECKING:
    from robid.signals.periodic_path import PeriodBand
    from robid.signals.processing import ProcessingOptions


def block_mask(harmonic_mask: np.ndarray, n_periods: int, m: int) -> np.ndarray:
    """Mask over the bins 0 .. K M/2 of the K-period block: bin b kept when its harmonic h(b) = floor(b/K + 1/2)
    is kept in ``harmonic_mask`` (bins 0 .. M/2 of one period)."""
    b = np.arange(n_periods * m // 2 + 1)
    h = np.minimum(np.floor(b / n_periods + 0.5).astype(int), harmonic_mask.size - 1)
    return harmonic_mask[h]


def process_samples(
    cut: periodic.PeriodCut,
    band: PeriodBand,
    o: ProcessingOptions,
    segment: tuple[float, float],
    source: str | None,
    lines: list[str],
) -> PathResult:
    """Every sample of the K periods of ``cut`` (module docstring), in the ``band`` chosen on their average; the
    account goes into ``lines``."""
    k, m = next(iter(cut.periods.values())).shape[:2]
    period = cut.period
    block = {name: v.reshape(k * m, *v.shape[2:]) for name, v in cut.periods.items()}
    mask, mask_tau = block_mask(band.mask, k, m), block_mask(band.mask_tau, k, m)
    span = k * period
    derivs = periodic.spectral_derivatives(block["q"], mask, span, max(2, o.derivatives))
    tau_f = periodic.spectral_derivatives(block["tau"], mask_tau, span, 0)[0]
    theta_f = periodic.spectral_derivatives(block["theta"], mask, span, 2) if "theta" in block else None
    est = _noise(block, k, (mask, mask_tau), span)
    lines.append(
        f"every sample of the {k} periods ({k * m} samples, not averaged): DFT of the {k}-period block, kept the "
        f"bins within half a harmonic of the kept harmonics ({int(np.count_nonzero(mask))} of {mask.size}), "
        f"differentiated by (j 2 pi b / (K T))^n; torques: {int(np.count_nonzero(mask_tau))} bins"
    )
    lines.append(
        "noise per joint from the quiet bins of the block: tau std per sample "
        + format_values(est.tau_std)
        + ", after filtering (not averaged) "
        + format_values(est.tau_std_processed)
    )
    step = period / m
    return PathResult(
        t=cut.t[0] + np.arange(k * m) * step,
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=periodic.masked_filter(mask_tau, k * m, "the whole periods"),
        mode="periodic-samples",
        rate=1.0 / step,
        period=period,
        period_source=source,
        n_periods=k,
        harmonics=band.kept,
        segment=segment,
    )


def _noise(block: dict[str, np.ndarray], k: int, masks: tuple[np.ndarray, np.ndarray], span: float):
    """The noise record of the block (module docstring): coefficient variances of the block's bins from its
    quiet bins -- between harmonics (b not a multiple of K, where a periodic signal has nothing) and outside
    the position band (where what changes from period to period is small) -- by
    :func:`robid.signals.noise.quiet_floor`; per sample (Parseval) s^2 = sum_b w_b var(X_K[b])."""
    n = block["q"].shape[0]
    b = np.arange(n // 2 + 1)
    quiet = (b % k != 0) & ~masks[0]
    quiet[-1] = False
    floors = [noise.quiet_floor(np.abs(np.fft.rfft(block[name], axis=0) / n) ** 2, quiet) for name in ("q", "tau")]
    weights = noise.harmonic_weights(n, b.size)
    return noise.spectral_estimate(
        weights @ floors[0],
        weights @ floors[1],
        floors[0],
        floors[1],
        masks,
        2.0 * np.pi / span,
        n,
        f"bins of the {k}-period block between harmonics and outside the position band (running median, white "
        "within 33 such bins): what changes from period to period inside the band is signal here, not noise",
    )
