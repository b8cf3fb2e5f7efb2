"""The periodic path: K whole periods cut from the periodic part of the record, transient periods left out,
the rest averaged, kept at the band's harmonics and differentiated in the frequency domain (docs/signals.md
section 6; the spectral primitives and their references are in :mod:`robid.signals.periodic`).

Steps: periodic part, K and the start of the periods (:mod:`robid.signals.whole_periods`; the time window when
one is given; one period: the single-period path) -> cut into (K, M, C), resampled onto T/M steps unless the
samples can be taken as they are -> outlier periods left out -> average x_bar -> position band and torque band
(:mod:`robid.signals.bands`) -> x^(n) = sum_{h in H} X[h] (j h omega)^n e^{j h omega t} -> noise from the
scatter between periods (section 8). ``average_periods=False``: after the band, every sample of the K periods
instead of their average (:mod:`robid.signals.periodic_samples`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from robid.defaults import PERIODIC
from robid.errors import RobidInputError
from robid.signals import bands, noise, periodic, periodic_samples, whole_periods
from robid.signals.path_result import PathResult, format_values
from robid.signals.single_period import process_single_period
from robid.signals.spectral_band import BandRisk, SpectralBand, choice_account, choose_band

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions


@dataclass(frozen=True)
class _Averaged:
    """The average of the kept periods of ``cut`` (``n`` periods of ``m`` samples) and their scatter."""

    cut: periodic.PeriodCut
    keep: np.ndarray  # 0-based indices of the averaged periods
    mean_q: np.ndarray
    mean_tau: np.ndarray
    var_q: np.ndarray  # per-sample noise variance (C,)
    var_tau: np.ndarray
    harm_q: np.ndarray  # variance of the averaged DFT coefficient per harmonic (M//2 + 1, C)
    harm_tau: np.ndarray

    @property
    def n(self) -> int:
        return int(self.keep.size)

    @property
    def m(self) -> int:
        return self.cut.samples_per_period


def process_periodic(
    t: np.ndarray, sig: dict, period: float, source: str | None, o: ProcessingOptions, where: str
) -> tuple[PathResult, list[str]]:
    """Process the record on the uniform grid ``t`` as periodic with ``period`` (from ``source``): (the result,
    its account). ``o.average_periods`` False: every sample of the K periods, not averaged
    (:mod:`robid.signals.periodic_samples`)."""
    place = _placement(t, sig["q"], period, o, where)
    k = place.n_periods
    if k == 1:
        i0 = place.first
        i1 = min(i0 + int(round(period / float(t[1] - t[0]))), t.size - 1)
        single = f"one period of {period:g} s from {t[i0]:g} s: single-period processing"
        return process_single_period(t, sig, (i0, i1), o, source, where), [single]
    present = {name: v for name, v in sig.items() if v is not None}
    cut = periodic.cut_periods(t, present, place.start, period, k)
    lines = [_periods_line(period, source, cut, place), *whole_periods.left_out_account(t, sig["q"], place,
                                                                                         cut.period)]
    avg = _average(cut, k, o.reject_periods, o.position_step)
    rejected = tuple(int(i) + 1 for i in range(k) if i not in avg.keep)
    if rejected:
        lines.append(
            f"periods {', '.join(map(str, rejected))} left out of the average: their deviation from the median "
            "period is more than 10 times the typical one (transient)"
        )
    lines.append(f"averaged {avg.n} periods")
    segment = (place.start, place.start + k * cut.period)

    def periods_of(x: np.ndarray) -> np.ndarray:
        return periodic.cut_periods(t, {"x": x}, place.start, period, k).periods["x"]

    if not o.average_periods:
        result, sample_lines = periodic_samples.process_samples(
            cut, _hard_band(avg, cut.period, o), lambda p: _torque_band(avg, p, o), o, segment, source
        )
        return replace(result, onto_grid=lambda x: periods_of(x).reshape(-1, x.shape[1])), [*lines, *sample_lines]
    band, risk, band_lines = _averaged_band(avg, cut.period, o)
    derivs, tau_f, theta_f, est, apply_filter, spectral_lines = _spectral(avg, cut.period, band, o)
    lines += [*band_lines, *spectral_lines]
    return PathResult(
        t=cut.t,
        derivs=derivs,
        tau=tau_f,
        theta=theta_f,
        noise=est,
        apply_filter=apply_filter,
        mode=PERIODIC,
        rate=avg.m / cut.period,
        period=cut.period,
        period_source=source,
        n_periods=avg.n,
        harmonics=band.kept,
        segment=segment,
        rejected=rejected,
        predicted_qdd_error=tuple(float(v) for v in risk.error()) if risk is not None else est.qdd_std_processed,
        onto_grid=lambda x: periods_of(x)[avg.keep].mean(axis=0),
    ), lines


def _placement(
    t: np.ndarray, q: np.ndarray, period: float, o: ProcessingOptions, where: str
) -> whole_periods.PeriodPlacement:
    """Where the K whole periods lie (:func:`robid.signals.whole_periods.place_periods`): in the periodic part
    of the record, or from the first sample of the time window when one is given; all that fit, or
    ``o.n_periods``."""
    window = o.start is not None
    place = whole_periods.place_periods(t, q, period, o.n_periods, whole_record=window)
    if place is None:
        raise RobidInputError(f"{where}: no part of the record repeats with the period {period:g} s")
    a, b = place.part
    span = f"{t[a]:g}-{t[b]:g} s"
    if place.n_periods > place.fit:
        raise RobidInputError(
            f"{where}: {place.n_periods} periods of {period:g} s requested, only {place.fit} fit in {span}"
        )
    if place.n_periods < 1:
        raise RobidInputError(f"{where}: not one whole period of {period:g} s in the periodic part {span}")
    return place


def _periods_line(
    period: float, source: str | None, cut: periodic.PeriodCut, place: whole_periods.PeriodPlacement
) -> str:
    """The account of the cut: period, K, start, M, and whether the samples were taken as they are."""
    k, mm = place.n_periods, cut.samples_per_period
    if cut.resampled:
        how = " (resampled by cubic spline onto T/M steps)"
    elif abs(cut.period - period) > 1e-12 * period:
        drift = k * abs(period - cut.period) / (cut.period / mm)
        how = f"; T = {period:.10g} s taken as M h = {cut.period:.10g} s ({k} periods differ by {drift:.2g} steps)"
    else:
        how = ""
    return (
        f"periodic: T = {cut.period:.9g} s ({source}), {k} whole periods from {place.start:g} s to "
        f"{place.start + k * cut.period:g} s, M = {mm} samples per period{how}"
    )


def _average(cut: periodic.PeriodCut, k: int, reject: bool, step: tuple[float, ...] | None = None) -> _Averaged:
    """Leave out transient periods (``reject``, K >= 3: :func:`robid.signals.periodic.reject_outlier_periods`
    on positions and torques; at least two stay), average the rest and measure their scatter. The rounding of
    the logged positions to ``step`` repeats with the motion, so the scatter misses it: its variance step^2/12
    is added per sample and, as white, step^2/(12 M) per harmonic of the average
    (:func:`robid.signals.noise.quantisation_variance`)."""
    keep = np.arange(k)
    if reject and k >= 3:
        keep = np.intersect1d(
            periodic.reject_outlier_periods(cut.periods["q"]), periodic.reject_outlier_periods(cut.periods["tau"])
        )
        if keep.size < 2:
            keep = np.arange(k)
    pq, ptau = cut.periods["q"][keep], cut.periods["tau"][keep]
    var_q, harm_q = noise.period_scatter(pq)
    var_tau, harm_tau = noise.period_scatter(ptau)
    if step is not None:
        rounding = noise.quantisation_variance(step)
        var_q, harm_q = var_q + rounding, harm_q + rounding / pq.shape[1]
    return _Averaged(cut, keep, pq.mean(axis=0), ptau.mean(axis=0), var_q, var_tau, harm_q, harm_tau)


@dataclass(frozen=True)
class PeriodBand:
    """The bands of a periodic record: positions (per joint) and torques (shared), as weights over harmonics."""

    positions: SpectralBand
    torques: SpectralBand

    @property
    def kept(self) -> tuple[int, ...]:
        return self.positions.kept()


def _hard_band(avg: _Averaged, period: float, o: ProcessingOptions) -> SpectralBand:
    """The position harmonics given, up to the cut-off, or where the averaged positions stand out of their
    period-scatter noise (:mod:`robid.signals.bands`)."""
    bins = avg.m // 2 + 1
    harmonics, how = bands.position_harmonics(
        o,
        period,
        bins,
        lambda: bands.snr_band(avg.mean_q, avg.harm_q, avg.n, o.snr_threshold, o.excited_harmonics),
        f" of M = {avg.m} samples",
    )
    return SpectralBand.hard(periodic.harmonic_mask(bins, harmonics), how)


def _torque_band(avg: _Averaged, positions: SpectralBand, o: ProcessingOptions) -> tuple[SpectralBand, str]:
    """The torque band for ``o.torque_band`` (:func:`robid.signals.bands.torque_band`), shared by every joint, and
    the line that says it."""
    shared = positions.common("the position band of every joint")
    torques, how = bands.torque_band(o.torque_band, shared, avg.mean_tau, avg.harm_tau, avg.n, o.snr_threshold)
    return torques, (f"torques: {how}"
                     + ("" if o.torque_band == "all" else "; the regressor is filtered to the same band"))


def _averaged_band(
    avg: _Averaged, period: float, o: ProcessingOptions
) -> tuple[PeriodBand, BandRisk | None, list[str]]:
    """The bands of the averaged period: the hard band given or chosen from the SNR, or -- automatic -- per
    joint that or a smooth response, whichever predicts the smaller acceleration error on the rows
    identification uses (:func:`robid.signals.spectral_band.choose_band`), with the predicted errors then; and
    the lines that say so."""
    hard = _hard_band(avg, period, o)
    positions, risk = hard, None
    if o.harmonics is None and o.cutoff_hz is None:
        floor = noise.pooled_noise_floor(avg.harm_q, avg.n)
        positions, risk = choose_band(avg.mean_q, floor, period, 1, hard, o.min_speed, o.snr_threshold)
        lines = [f"DFT of the averaged period, hard band: {hard.describe(period)}",
                 choice_account(positions, risk, period)]
    else:
        lines = [f"DFT of the averaged period: kept {hard.describe(period)}"]
    torques, torque_line = _torque_band(avg, positions, o)
    return PeriodBand(positions, torques), risk, [*lines, torque_line]


def _spectral(avg: _Averaged, period: float, band: PeriodBand, o: ProcessingOptions):
    """Spectral derivatives, noise and filter of the averaged period: (derivs, tau, theta, noise, apply_filter,
    lines)."""
    mm, kk = avg.m, avg.n
    mask, mask_tau = band.positions.weights(), band.torques.weights()[:, 0]
    derivs = periodic.spectral_derivatives(avg.mean_q, mask, period, max(2, o.derivatives))
    tau_f = periodic.spectral_derivatives(avg.mean_tau, mask_tau, period, 0)[0]
    theta_f, theta_noise = None, {}
    if "theta" in avg.cut.periods:
        periods_theta = avg.cut.periods["theta"][avg.keep]
        theta_f = periodic.spectral_derivatives(periods_theta.mean(axis=0), mask, period, 2)
        theta_noise = _motor_noise(periods_theta, mask, 2.0 * np.pi / period, mm)
    lines = ["averaged period differentiated by (j h omega)^n, omega = 2 pi / T, harmonic h weighted by the band"]
    est = noise.spectral_estimate(
        avg.var_q,
        avg.var_tau,
        avg.harm_q,
        avg.harm_tau,
        (mask, mask_tau),
        2.0 * np.pi / period,
        mm,
        f"scatter between {kk} periods (unbiased variance per sample and per harmonic)",
        per_harmonic=True,
    )
    est = replace(est, spectrum_q_processed=mask**2 * avg.harm_q, **theta_noise)
    lines.append(
        "noise per joint from the scatter between periods: tau std per sample "
        + format_values(est.tau_std)
        + ", after averaging and filtering "
        + format_values(est.tau_std_processed)
    )
    return derivs, tau_f, theta_f, est, periodic.masked_filter(mask_tau, mm, "one period"), lines


def _motor_noise(periods_theta: np.ndarray, mask: np.ndarray, omega: float, m: int) -> dict:
    """The processed motor positions' noise std (theta, thetad, thetadd) from their scatter between the averaged
    periods (K, M, dof), differentiated in the position band ``mask``: the NoiseEstimate fields
    ``theta*_std_processed`` (:func:`robid.signals.noise.processed_variance`) and ``spectrum_theta_processed``."""
    harm = noise.period_scatter(periods_theta)[1]
    names = ("theta_std_processed", "thetad_std_processed", "thetadd_std_processed")
    stds = {name: tuple(float(v) for v in np.sqrt(noise.processed_variance(harm, mask, omega, order, m)))
            for order, name in enumerate(names)}
    return stds | {"spectrum_theta_processed": mask**2 * harm}
