"""Run records: how one measurement was processed (:class:`ProcessingSummary`, also ``robid process --summary``),
how the identified model fits it (:class:`TorqueFit`), the ranges of its motion, and series and spectra for
figures (:class:`RunRecord`). Part of the identification record (robid.record.identification)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.defaults import PERIODIC, PERIODIC_SAMPLES, REST_TO_REST

# ---- torque fit ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JointFit:
    """Torque fit of one joint (robid.estimation.metrics): RMS error, NRMSE = 100 RMS(error) / RMS(measured)
    (``relative_error_percent`` is the same number under Mamedov's name), largest error, the measured RMS, the
    share of samples inside the 95 % prediction band and the mean parameter-uncertainty std of the prediction."""

    joint: str
    rms: float | None
    nrmse_percent: float | None
    max_error: float | None
    measured_rms: float | None = None
    relative_error_percent: float | None = None
    inside_band_percent: float | None = None
    mean_model_std: float | None = None


@dataclass(frozen=True)
class TorqueFit:
    """Fit of predicted to measured torque over ``samples`` samples; the norm ratio over all joints."""

    per_joint: tuple[JointFit, ...]
    relative_error_norm_percent: float | None
    samples: int

    def nrmse_percent(self) -> tuple[float | None, ...]:
        return tuple(m.nrmse_percent for m in self.per_joint)


@dataclass(frozen=True)
class ReferenceFit:
    """Torque fit of a reference model (a published or nominal parameter set, robid.identification.references)
    on the same processed samples and used rows as robid's fit of the run; no prediction band (schema 1.3)."""

    label: str
    fit: TorqueFit


# ---- runs ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseLevels:
    """Noise std per joint, per raw sample and after processing (docs/signals.md), and how it was estimated."""

    method: str
    q_std: tuple[float | None, ...]
    tau_std: tuple[float | None, ...]
    q_std_processed: tuple[float | None, ...]
    qd_std_processed: tuple[float | None, ...]
    qdd_std_processed: tuple[float | None, ...]
    tau_std_processed: tuple[float | None, ...]


@dataclass(frozen=True)
class DroppedSample:
    """A sample removed while reading: 1-based line (text files) or sample index (.mat) and the reason."""

    file: str
    row: int
    sample: int
    reason: str


@dataclass(frozen=True)
class ProcessingGuard:
    """Per joint, which processing the signal stage kept -- ``robid`` (its band or cut-off) or ``plain`` (a
    zero-phase Butterworth of order 4 at the joint's automatic cut-off and central differences) -- with the
    predicted rms qdd error of both (rad/s^2, m/s^2) and the plain recipe's cut-off (Hz); ``applied`` False where
    the band was given (compared only). robid.signals.guard, docs/signals.md section 7b."""

    kept: tuple[str, ...]
    robid_qdd_error: tuple[float | None, ...]
    plain_qdd_error: tuple[float | None, ...]
    plain_cutoff_hz: tuple[float | None, ...]
    applied: bool


#: processing modes whose grid holds whole periods (an averaged one, a segment, or K periods sample by sample)
PERIODIC_MODES = (PERIODIC, REST_TO_REST, PERIODIC_SAMPLES)


@dataclass(frozen=True, kw_only=True)
class ProcessingSummary:
    """How the signal stage processed one measurement (also the summary JSON of ``robid process``).

    ``method`` lists every decision, one line each; ``unused_rows_per_joint`` counts the (sample, joint) rows
    the data selection left out; ``segment_s`` is the time span used; ``trimmed_samples`` the filter edges."""

    robid_processed: int = 1
    mode: str
    samples: int
    sample_rate_hz: float
    period_s: float | None
    period_source: str | None
    n_periods: int
    rejected_periods: tuple[int, ...]
    harmonics: tuple[int, ...] | None
    cutoff_hz: float | None
    segment_s: tuple[float, float] | None
    trimmed_samples: tuple[int, int]
    standstill_s: tuple[tuple[float, float], ...]
    unused_rows_per_joint: tuple[int, ...]
    noise: NoiseLevels
    dropped_rows: tuple[DroppedSample, ...]
    samples_read: int
    notes: tuple[str, ...]
    method: tuple[str, ...]
    #: per joint robid's processing or the plain recipe (schema 1.5; left out when none)
    guard: ProcessingGuard | None = field(default=None, metadata={"omit_none": True})

    @property
    def periodic(self) -> bool:
        """True when the processed grid is one (averaged) period: its spectrum has no leakage."""
        return self.mode in PERIODIC_MODES and self.period_s is not None

    def line(self) -> str:
        """The processing chosen, in one line: mode, rows read and dropped, the grid, the period and how many
        periods were averaged or left out, the band kept, and the (sample, joint) rows left out of the fit."""
        parts = [self.mode, f"{self.samples_read} rows read, {len(self.dropped_rows)} dropped",
                 f"{self.samples} samples at {self.sample_rate_hz:.4g} Hz"]
        if self.period_s is not None:
            how = "averaged" if self.mode == PERIODIC and self.n_periods > 1 else "used"
            period = f"T {self.period_s:.4g} s ({self.period_source}), {self.n_periods} period(s) {how}"
            if self.rejected_periods:
                period += f", {len(self.rejected_periods)} left out"
            parts.append(period)
        if self.harmonics:
            parts.append(f"{len(self.harmonics)} harmonic(s) kept" + (
                f" up to {max(self.harmonics) / self.period_s:.3g} Hz" if self.period_s else ""))
        elif self.cutoff_hz is not None:
            parts.append(f"low-pass {self.cutoff_hz:.3g} Hz")
        parts.append(f"{sum(self.unused_rows_per_joint)} (sample, joint) rows not fitted")
        return "; ".join(parts)


@dataclass(frozen=True)
class JointRange:
    """Range of the processed motion of one joint: position extremes and mean, peak |velocity|, |acceleration|
    and |torque| (SI), over every sample of the run."""

    joint: str
    q_min: float
    q_max: float
    q_mean: float
    qd_peak: float
    qdd_peak: float
    tau_peak: float


Series = tuple[float | None, ...]


@dataclass(frozen=True)
class DisplaySeries:
    """A run's processed series for figures: every ``step``-th sample of the processed grid (at most a few
    thousand), 6 significant digits; ``t`` counts from ``t0``, the time of the first processed sample (s).
    Joint-indexed tuples hold one column per joint; ``tau_friction`` and ``tau_compensator`` are the predicted
    torque of the joint's own (ungrouped) friction and compensator parameters (None for a joint without); ``used``
    marks the rows the data selection kept. A value that is not available (the model std of a prediction that
    involves a parameter the data never excited) is None.

    Elastic layout only (schema 1.2; None for a rigid record and left out of its JSON): ``deflection_measured`` is
    the recorded deflection theta - q of every elastic joint (processed motor and link positions, joint units),
    ``deflection_predicted`` the one the identified model predicts from the link row
    (robid.identification.run_records.elastic_deflection); None for a joint that is not elastic."""

    step: int
    t0: float
    t: tuple[float, ...]
    q: tuple[Series, ...]
    qd: tuple[Series, ...]
    tau_measured: tuple[Series, ...]
    tau_predicted: tuple[Series, ...]
    tau_std_model: tuple[Series, ...]
    tau_friction: tuple[Series | None, ...]
    tau_compensator: tuple[Series | None, ...]
    used: tuple[tuple[bool, ...], ...]
    deflection_measured: tuple[Series | None, ...] | None = field(default=None, metadata={"omit_none": True})
    deflection_predicted: tuple[Series | None, ...] | None = field(default=None, metadata={"omit_none": True})

    def array(self, name: str) -> np.ndarray:
        """(n, dof) array of a joint-indexed series; NaN for a value or a joint without it."""
        columns = getattr(self, name)
        n = len(self.t)
        return np.column_stack(
            [np.full(n, np.nan) if c is None else np.array([np.nan if v is None else v for v in c]) for c in columns]
        )


@dataclass(frozen=True)
class ResidualSpectrum:
    """Single-sided amplitude spectra of the measured torque and of the residual of a run, per joint, up to
    ``max_frequency_hz`` (bins merged by their maximum where there were more than a few thousand)."""

    frequency_hz: tuple[float, ...]
    measured: tuple[tuple[float, ...], ...]
    residual: tuple[tuple[float, ...], ...]
    max_frequency_hz: float


@dataclass(frozen=True, kw_only=True)
class RunRecord(ProcessingSummary):
    """One measurement as identification used it: the processing summary (flattened into the JSON entry),
    the file, its role, the rows in the least squares, the torque fit of the reported values on it, the ranges
    of its motion, and series and a residual spectrum for figures. ``notes`` are those of reading, processing and
    forming the least-squares block."""

    file: str
    role: str  # "identification" | "validation"
    rows_used: int
    fit: TorqueFit
    ranges: tuple[JointRange, ...]
    display: DisplaySeries
    spectrum: ResidualSpectrum | None = None
    #: fits of the reference models on the same samples (schema 1.3; empty, and left out of the JSON, when none)
    references: tuple[ReferenceFit, ...] = field(default=(), metadata={"omit_empty": True})

    @property
    def label(self) -> str:
        return f"{self.role}: {Path(self.file).name}"
