"""Band policies: which harmonics (spectral paths) or which cut-off (non-periodic path) the signal stage keeps.

Positions (docs/signals.md sections 6 and 7): the harmonics the user gives (``--harmonics``), all up to a
cut-off (``--cutoff``: h/T <= fc), or chosen from the data -- on the periodic path every harmonic where the
averaged positions stand ``snr`` times above their period-scatter noise, up to half the Nyquist frequency,
plus the excited harmonics of the trajectory (the hard band; the automatic choice between it and smooth
responses is :mod:`robid.signals.spectral_band`). Every policy returns the set and the words that say how it
was chosen (``ProcessedSignals.method``).
The non-periodic low-pass takes the cut-off that minimises the predicted acceleration error
(:mod:`robid.signals.cutoff`).

Torques (periodic path, ``torque_band``): ``all`` harmonics (period averaging only), the ``positions`` band, or
the position band plus every ``signal`` harmonic where the averaged torque stands above its own noise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from robid.errors import RobidInputError
from robid.signals import noise, periodic
from robid.signals.cutoff import CutoffChoice, PositionSpectra, choose_cutoff
from robid.signals.path_result import format_ranges
from robid.signals.spectral_band import SpectralBand

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions

Band = tuple[np.ndarray, str]


def position_harmonics(
    o: ProcessingOptions, period: float, bins: int, automatic: Callable[[], Band], samples: str = ""
) -> Band:
    """The position harmonics of a spectral path with ``bins`` DFT bins: given, up to the cut-off, or
    ``automatic()``; ``samples`` completes the message that refuses a harmonic at or above Nyquist."""
    if o.harmonics is not None:
        harmonics = np.asarray(sorted(set(o.harmonics)))
        if harmonics.max() >= bins - 1:
            raise RobidInputError(
                f"harmonics: {harmonics.max()} is at or above the Nyquist harmonic {bins - 1}{samples}"
            )
        return harmonics, "given"
    if o.cutoff_hz is not None:
        harmonics = np.arange(1, min(int(np.floor(o.cutoff_hz * period + 1e-9)), bins - 2) + 1)
        return harmonics, f"all up to the cut-off {o.cutoff_hz:g} Hz"
    return automatic()


def significant_harmonics(mean: np.ndarray, per_harmonic: np.ndarray, n_periods: int, snr: float) -> np.ndarray:
    """Harmonics where the averaged period ``mean`` (M, C) has |X[h]|^2 above ``snr`` times the pooled
    period-scatter noise floor of ``per_harmonic`` (:func:`robid.signals.noise.pooled_noise_floor`)."""
    power = np.abs(np.fft.rfft(mean, axis=0) / mean.shape[0]) ** 2
    floor = noise.pooled_noise_floor(per_harmonic, n_periods)
    floor = np.maximum(floor, 1e-24 * power.max(axis=0))  # below double precision: not a signal
    return periodic.select_harmonics_snr(power, np.maximum(floor, 1e-300), snr)


def snr_band(
    mean_q: np.ndarray, harm_q: np.ndarray, n_periods: int, snr: float, excited: tuple[int, ...] | None
) -> Band:
    """Automatic band of the periodic path: the significant position harmonics up to half the Nyquist
    frequency, plus the ``excited`` ones (below Nyquist); harmonic 1 if nothing stands out."""
    m = mean_q.shape[0]
    bins = m // 2 + 1
    # the band follows the positions: torques carry broadband harmonics of Coulomb friction (sign(qd)) that
    # would let noise into the differentiated positions; the regressor is filtered to the same band
    harmonics = significant_harmonics(mean_q, harm_q, n_periods, snr)
    # never differentiate near the Nyquist frequency: a tone there (aliasing, a sampling artefact) multiplied
    # by (h omega)^2 would swamp the accelerations; the automatic band stops at half the Nyquist frequency
    harmonics = harmonics[harmonics <= m // 4]
    how = (
        f"where the averaged positions stand {snr:g} times above the period-scatter "
        f"noise (running median over {noise.pooled_window(n_periods)} harmonics), up to half the Nyquist frequency"
    )
    if excited:
        inside = np.asarray([x for x in excited if x < bins - 1], dtype=int)
        harmonics = np.union1d(harmonics, inside)
        how += f", plus the excited harmonics {format_ranges(tuple(int(x) for x in inside))}"
    if harmonics.size == 0:
        harmonics = np.array([1])
    return harmonics, how


def torque_band(
    policy: str, positions: SpectralBand, mean_tau: np.ndarray, harm_tau: np.ndarray, n_periods: int, snr: float
) -> tuple[SpectralBand, str]:
    """The band of the averaged torque for ``policy`` (all, positions, signal) and how it was chosen.

    The rigid-body dynamics are nonlinear in the states, so a trajectory with H harmonics drives torques at
    many more (and Coulomb friction is broadband). Cutting the torque to the position band would throw that
    signal away and leave only 2H + 1 independent equations per joint. ``signal`` keeps, besides the position
    band, every harmonic where the torque stands above its own period-scatter noise; the regressor is
    filtered to the same band (``apply_filter``).
    """
    if policy == "all":
        everything = SpectralBand.hard(np.ones(positions.mask.size, dtype=bool), "all harmonics")
        return everything, "all harmonics (period averaging only)"
    if policy == "positions":
        return positions, "the position band"
    extra = significant_harmonics(mean_tau, harm_tau, n_periods, snr)
    how = (
        f"the position band plus every harmonic where the averaged torque stands {snr:g} times "
        "above its period-scatter noise"
    )
    band = positions.with_extra(periodic.harmonic_mask(positions.mask.size, extra), how)
    return band, f"{how}: {format_ranges(band.kept())}"


def lowpass_cutoff(
    cutoff_hz: float | None,
    t: np.ndarray,
    q: np.ndarray,
    rate: float,
    order: int,
    spectra: PositionSpectra | None = None,
) -> CutoffChoice:
    """The cut-off of the non-periodic low-pass (section 7): given, or the one that minimises the predicted error
    of the accelerations (:func:`robid.signals.cutoff.choose_cutoff`); either way with the position noise and
    the predicted acceleration error there."""
    return choose_cutoff(q, rate, order, float(t[-1] - t[0]), given=cutoff_hz, spectra=spectra)
