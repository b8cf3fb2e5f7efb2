"""Every sample of the K whole periods, not averaged (``ProcessingOptions(average_periods=False)``, mode
``"periodic-samples"``): spectral derivatives of the K-period block (docs/signals.md section 6, "Every sample
of the periods"). For predicting each measured sample.

The K periods (K M samples, cut as for averaging) form one record of period K T; its DFT
X_K[b] = (1/(K M)) sum_n x[n] exp(-2 pi j b n / (K M)), b = 0 .. K M/2, has bin b at the frequency b / (K T):
bin b = K h is harmonic h of the period, the bins between harmonics carry what differs from period to period
(noise, a slow drift, a transient). Bin b is weighted by the band at its fractional harmonic b / K
(:func:`block_weights`): the hard band's weight of the nearest harmonic floor(b/K + 1/2), or a smooth
response at b / K. The automatic band is chosen on the block itself
(:func:`robid.signals.spectral_band.choose_band` with the block's quiet-bin noise). Derivatives (Pintelon &
Schoukens ch. 2, as for one period): x^(n)(t_i) = sum_b W(b/K) X_K[b] (j 2 pi b / (K T))^n exp(2 pi j b i / (K M)).

Why the whole block and not each period on its own: a period transformed alone is made periodic over T, so
any difference between its two ends (one period not quite like the next) rings at every period boundary;
the block is continuous across its inner boundaries and only its own two ends meet.

Noise: with exactly periodic data, keeping only the bins b = K h would return the averaged period repeated K
times; keeping the K bins around each harmonic keeps each period's own deviations at the price of K times
the noise variance of the average. The scatter between periods cannot tell noise from such deviations, so the
noise is read from the block's quiet bins -- between harmonics (b not a multiple of K: a periodic signal has
nothing there) and outside the position band (what changes from period to period stays near the kept
harmonics): var(X_K[b]) by a running median over 33 quiet bins (chi-square median correction, ln 2),
interpolated across the band; var(x^(n)) = sum_b w_b W_b^2 (2 pi b / (K T))^(2n) var(X_K[b]) (Parseval,
w_b = 1 at DC, else 2), and per sample s^2 = sum_b w_b var(X_K[b]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from robid.signals import noise, periodic
from robid.signals.path_result import PathResult, format_values
from robid.signals.spectral_band import SpectralBand, choice_account, choose_band

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions


def block_weights(band: SpectralBand, n_periods: int, m: int) -> np.ndarray:
    """Weights (K M/2 + 1, channels) over the bins of the K-period block: bin b at the fractional harmonic b / K
    -- the Butterworth response there, or the hard band's weight of the nearest harmonic floor(b/K + 1/2)."""
    b = np.arange(n_periods * m // 2 + 1)
    return band.at(np.minimum(b / n_periods, band.mask.size - 1))


def process_samples(
    cut: periodic.PeriodCut,
    hard: SpectralBand,
    torque_band: Callable[[SpectralBand], tuple[SpectralBand, str]],
    o: ProcessingOptions,
    segment: tuple[float, float],
    source: str | None,
) -> tuple[PathResult, list[str]]:
    """Every sample of the K periods of ``cut`` (module docstring). The position band: ``hard`` when the
    harmonics or a cut-off are given, else per joint that or a smooth response, whichever predicts the least
    acceleration error on this block's own rows (:func:`robid.signals.spectral_band.choose_band`, with the
    block's own noise); ``torque_band`` gives the torque band for the position band and its line. Returns (the
    result, its account)."""
    k, m = next(iter(cut.periods.values())).shape[:2]
    period = cut.period
    span = k * period
    orders = max(2, o.derivatives)
    block, steps = _without_end_jump(cut, span, orders)
    floors = _floors(block, k, block_weights(hard, k, m)[:, 0], o.position_step)
    positions, risk, band_lines = _position_band(block, floors, period, k, hard, o)
    torques, torque_line = torque_band(positions)
    lines = [f"DFT of the {k}-period block, hard band: {hard.describe(period)}", *band_lines, torque_line]
    mask, mask_tau = block_weights(positions, k, m), block_weights(torques, k, m)[:, 0]
    dq = periodic.spectral_derivatives(block["q"], mask, span, orders)
    derivs = [d + s for d, s in zip(dq, steps["q"], strict=True)]
    tau_f = periodic.spectral_derivatives(block["tau"], mask_tau, span, 0)[0] + steps["tau"][0]
    theta_f = _motor_derivatives(block, steps, mask, span) if "theta" in block else None
    est = _noise(block, k, floors, (mask, mask_tau), span)
    lines.append(
        f"every sample of the {k} periods ({k * m} samples, not averaged): bin b of the block weighted by the band "
        "at its fractional harmonic b / K, differentiated by (j 2 pi b / (K T))^n"
    )
    lines.append(
        "noise per joint from the quiet bins of the block: tau std per sample "
        + format_values(est.tau_std)
        + ", after filtering (not averaged) "
        + format_values(est.tau_std_processed)
    )
    step = period / m
    result = PathResult(
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
        harmonics=positions.kept(),
        segment=segment,
        predicted_qdd_error=tuple(float(v) for v in risk.error()) if risk is not None else est.qdd_std_processed,
    )
    return result, lines



def _position_band(block: dict, floors, period: float, k: int, hard: SpectralBand, o: ProcessingOptions):
    """(position band, its risk account or None, lines): ``hard`` when the harmonics or a cut-off are given, else
    the band :func:`robid.signals.spectral_band.choose_band` chooses on the block (said in the lines)."""
    if o.harmonics is not None or o.cutoff_hz is not None:
        return hard, None, ()
    positions, risk = choose_band(block["q"], floors[0], period, k, hard, o.min_speed, o.snr_threshold)
    return positions, risk, (choice_account(positions, risk, period),)


def _motor_derivatives(block: dict, steps: dict, mask: np.ndarray, span: float) -> list[np.ndarray]:
    """The motor positions and their first two derivatives through the positions' band, the end jump added back."""
    dth = periodic.spectral_derivatives(block["theta"], mask, span, 2)
    return [d + s for d, s in zip(dth, steps["theta"][:3], strict=True)]

#: a jump between the block's ends is removed when it exceeds this many standard deviations of its estimate
JUMP_SIGNIFICANCE = 4.0


def _without_end_jump(
    cut: periodic.PeriodCut, span: float, orders: int
) -> tuple[dict[str, np.ndarray], dict[str, list[np.ndarray]]]:
    """The K-period block of every signal minus the smooth step between its first value and the value one step
    after its end (cubic extrapolation, :func:`robid.signals.periodic.next_sample`), and the steps with their
    exact derivatives (:func:`robid.signals.periodic.endpoint_step`). A joint that sticks at a rest within
    its friction band ends a few mrad from where it started; left in, that jump would leak into every bin of
    the block (as 1/b in position) and be read as noise between the harmonics. Only a jump that stands
    ``JUMP_SIGNIFICANCE`` standard deviations above the noise of its estimate (sqrt(1 + 4^2 + 6^2 + 4^2 + 1)
    times the white noise per sample, :func:`robid.signals.noise.robust_white_std`) is removed: on a periodic
    record the estimate is noise, and a noisy step would ring like a sawtooth in a narrow band. Torques keep
    their jump: their band is that of the regressor columns (``apply_filter``), a linear operator."""
    block, steps = {}, {}
    for name, v in cut.periods.items():
        x = v.reshape(-1, *v.shape[2:])
        jump = periodic.next_sample(x, 3) - x[0]
        sigma = np.sqrt(70.0) * noise.robust_white_std(x)
        significant = (np.abs(jump) > JUMP_SIGNIFICANCE * sigma) & (name != "tau")
        end = np.where(significant, x[0] + jump, x[0])
        step = periodic.endpoint_step(x[0], end, x.shape[0], span, orders)
        block[name], steps[name] = x - step[0], step
    return block, steps


def _floors(
    block: dict[str, np.ndarray], k: int, hard: np.ndarray, step: tuple[float, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Coefficient variances of the block's bins for positions and torques, from its quiet bins -- between
    harmonics (b not a multiple of K, where a periodic signal has nothing) and outside the hard position band
    ``hard`` (weights over the block's bins; where what changes from period to period is small) -- by
    :func:`robid.signals.noise.quiet_floor`. The rounding of the logged positions to ``step`` repeats with the
    motion and sits on the harmonic bins (b a multiple of K), which the quiet bins do not see: its variance
    step^2 / (12 M) is added there (:func:`robid.signals.noise.quantisation_variance`)."""
    n = block["q"].shape[0]
    b = np.arange(n // 2 + 1)
    quiet = (b % k != 0) & (hard < 0.5)
    quiet[-1] = False
    floor_q, floor_tau = (
        noise.quiet_floor(np.abs(np.fft.rfft(block[name], axis=0) / n) ** 2, quiet) for name in ("q", "tau")
    )
    if step is not None:
        floor_q = floor_q + np.outer(b % k == 0, noise.quantisation_variance(step) / (n // k))
    return floor_q, floor_tau


def _noise(
    block: dict[str, np.ndarray],
    k: int,
    floors: tuple[np.ndarray, np.ndarray],
    masks: tuple[np.ndarray, np.ndarray],
    span: float,
):
    """The noise record of the block (module docstring): per sample (Parseval) s^2 = sum_b w_b var(X_K[b]),
    processed through the weights ``masks``."""
    n = block["q"].shape[0]
    weights = noise.harmonic_weights(n, n // 2 + 1)
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
