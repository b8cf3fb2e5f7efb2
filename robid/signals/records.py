"""Frozen records that the signal stage hands on: what was read, what was dropped, what was produced.

Arrays inside these records are made read-only, so a record describes a fact that no later stage can change.
Samples are rows: every ``(N, dof)`` array has one row per sample and one column per joint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from robid.signals.design_alignment import DesignSamples

if TYPE_CHECKING:
    from robid.signals.guard import GuardChoice


def _frozen(array: np.ndarray | None) -> np.ndarray | None:
    if array is None:
        return None
    out = np.array(array, dtype=float, copy=True)
    out.flags.writeable = False
    return out


class _Samples:
    """Rows are samples, columns joints: the sample count of ``t`` (N,) and the joint count of ``q`` (N, dof)."""

    @property
    def n_samples(self) -> int:
        return int(self.t.shape[0])

    @property
    def dof(self) -> int:
        return int(self.q.shape[1])


@dataclass(frozen=True)
class DroppedRow:
    """One sample removed from a measurement, and why.

    ``row`` is the 1-based line number in ``file`` for text files (header and skipped lines counted), or the
    1-based sample index for ``.mat`` files; ``sample`` is the 1-based index of the sample in the recording.
    """

    file: str
    row: int
    sample: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: row {self.row}: {self.reason}"


@dataclass(frozen=True)
class DropRecord:
    """Every sample removed while reading (only when the user allowed dropping), with the reason per sample."""

    rows: tuple[DroppedRow, ...] = ()
    samples_read: int = 0

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def row_numbers(self) -> tuple[int, ...]:
        return tuple(r.row for r in self.rows)

    def summary(self) -> str:
        """One line for a report: how many samples were dropped out of how many, and which rows."""
        if not self.rows:
            return f"no samples dropped ({self.samples_read} read)"
        return (
            f"{self.count} of {self.samples_read} samples dropped: "
            + "; ".join(f"row {r.row} ({r.reason})" for r in self.rows[:20])
            + (f"; ... {self.count - 20} more" if self.count > 20 else "")
        )

    def lines(self) -> list[str]:
        """One line per dropped sample, for a report table."""
        return [str(r) for r in self.rows]


@dataclass(frozen=True, eq=False)
class Measurement(_Samples):
    """A measurement in the canonical form of docs/interfaces.md section 3, SI units, joint side.

    ``t`` (N,) strictly increasing, in s, as recorded (not shifted to zero); ``q`` (N, dof) link-side joint
    positions; ``tau`` (N, dof) joint torques (forces for prismatic joints); ``qd``/``qdd`` measured velocities
    and accelerations when the file has them; ``theta`` motor positions divided by the transmission (joint
    units) when the file has them. ``uniform_time`` is True when the time axis was built from a sampling rate.
    ``notes`` lists every non-fatal decision taken while reading (ignored columns, conversions, allowances).
    ``design``: the design the record executes once, when its mapping names one (processing cuts its period
    unless the options give a design or a period).
    """

    source: str
    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    theta: np.ndarray | None = None
    dropped: DropRecord = field(default_factory=DropRecord)
    notes: tuple[str, ...] = ()
    uniform_time: bool = False
    design: DesignSamples | None = None

    def __post_init__(self) -> None:
        for name in ("t", "q", "tau", "qd", "qdd", "theta"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))


@dataclass(frozen=True)
class NoiseEstimate:
    """Noise of the measured channels, per joint.

    ``q_std``/``tau_std``: standard deviation of the noise on one raw sample (before averaging and filtering).
    ``q_std_processed``, ``qd_std_processed``, ``qdd_std_processed``, ``tau_std_processed``: standard deviation of
    the noise left on the processed (averaged, filtered, differentiated) signals -- the numbers a weighted
    estimator uses. ``per_harmonic_q``/``per_harmonic_tau`` (periodic path only): variance of the averaged DFT
    coefficient at each harmonic 0..M/2, shape (M//2 + 1, dof). ``method`` says how they were obtained.
    ``theta_std_processed``, ``thetad_std_processed``, ``thetadd_std_processed`` (averaged periodic path with motor
    positions only, else None): the same for the processed motor positions, from their own scatter between periods
    (the motor encoders' noise; the errors-in-variables estimate of the elastic layout needs it).
    ``spectrum_q_processed``/``spectrum_theta_processed`` (averaged periodic path only; theta with motor
    positions): the variance of the processed noise's DFT coefficient at each harmonic 0..M/2, W_h^2 var(X[h]),
    shape (M//2 + 1, dof) -- how the position noise is spread over frequency after the band, which the
    errors-in-variables covariance needs (robid.identification.regressor_noise_meat).
    """

    q_std: tuple[float, ...]
    tau_std: tuple[float, ...]
    q_std_processed: tuple[float, ...]
    qd_std_processed: tuple[float, ...]
    qdd_std_processed: tuple[float, ...]
    tau_std_processed: tuple[float, ...]
    method: str
    per_harmonic_q: np.ndarray | None = None
    per_harmonic_tau: np.ndarray | None = None
    theta_std_processed: tuple[float, ...] | None = None
    thetad_std_processed: tuple[float, ...] | None = None
    thetadd_std_processed: tuple[float, ...] | None = None
    spectrum_q_processed: np.ndarray | None = None
    spectrum_theta_processed: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("per_harmonic_q", "per_harmonic_tau", "spectrum_q_processed", "spectrum_theta_processed"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def tau_variance_processed(self) -> np.ndarray:
        """Per-joint variance of the processed torque: the weights 1/sigma^2 of a weighted least squares."""
        return np.asarray(self.tau_std_processed) ** 2


@dataclass(frozen=True, eq=False)
class RowNoise:
    """How white noise on the recorded samples reaches the processed rows when a filter correlates them (the
    non-periodic path): rows = F e, F the zero-phase low-pass followed by edge trimming and decimation, the same
    linear map for every channel. ``transpose(x)`` applies F^T to x (rows, k) and returns (m, k) for some m (only
    inner products of its columns carry meaning); ``power_gain`` = (F F^T)_nn, the variance of a processed sample
    per unit variance of the white noise (mean_f |H|^2 of the zero-phase response H)."""

    transpose: Callable[[np.ndarray], np.ndarray]
    power_gain: float
    #: ``transpose_gram(rows, k)``: (F^T x)^T (F^T x) (k, k) with x given block by block, ``rows(lo, hi)`` ->
    #: (hi - lo, k), never held whole (None: use ``transpose``)
    transpose_gram: Callable[..., np.ndarray] | None = None
    #: ``gram(x)``: (F^T x)^T (F^T x) (k, k) of processed rows x (rows, k) without F^T, from the band of F F^T
    #: (decimated rows: robid.signals.nonperiodic_path.toeplitz_gram); None: use ``transpose``
    gram: Callable[[np.ndarray], np.ndarray] | None = None


@dataclass(frozen=True, eq=False)
class ProcessedSignals(_Samples):
    """What identification uses: filtered, differentiated, resampled signals and how they were obtained.

    Arrays are (N, dof) on the uniform grid ``t``, in the time base of the measurement. Periodic path: one
    averaged period of M samples, ``t = t_start + m*T/M``; every sample of the periods (``periodic-samples``):
    the K whole periods, K M samples. Non-periodic path: the filtered record with the edges trimmed (and decimated).
    ``keep`` (N, dof) marks the (sample, joint) rows the data selection kept (all True without selection).
    ``apply_filter`` applies the same linear filter to any signal on the grid ``t`` (axis 0) -- use it on
    regressor columns for parallel filtering; ``tau`` has already been through it (do not filter it again).
    ``parallel_filter`` (non-periodic path) does better for functions of the states: it evaluates them on the
    whole record, edges included, and filters them exactly like the torque (on the trimmed grid alone a filter
    restarts at the ends of the kept segment, where the torque's had settled: a model error of its own).
    ``method`` is a human-readable, multi-line account of every step.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    mode: str  # one of robid.defaults.PROCESSED_MODES
    sample_rate: float
    noise: NoiseEstimate
    keep: np.ndarray
    dropped: DropRecord
    method: str
    apply_filter: Callable[[np.ndarray], np.ndarray]
    qddd: np.ndarray | None = None
    qdddd: np.ndarray | None = None
    theta: np.ndarray | None = None
    thetad: np.ndarray | None = None
    thetadd: np.ndarray | None = None
    period: float | None = None
    period_source: str | None = None  # "user" | "trajectory" | "detected" | "segment"
    n_periods: int = 0
    harmonics: tuple[int, ...] | None = None
    cutoff_hz: float | None = None
    segment: tuple[float, float] | None = None  # time span of the recording that was used
    trimmed: tuple[int, int] = (0, 0)  # samples removed at the start and the end (filter edges)
    rejected_periods: tuple[int, ...] = ()  # 1-based indices of periods left out of the average
    standstill: tuple[tuple[float, float], ...] = ()
    notes: tuple[str, ...] = ()
    row_noise: RowNoise | None = None  # filtered (correlated) rows: how white noise reaches them; None: independent
    decimation: int = 1  # non-periodic path: the processed rows are every decimation-th filtered sample
    # non-periodic path: parallel_filter(evaluate) applies evaluate(q, qd, qdd, v) -> (n, k) on the whole record;
    # parallel_filter(evaluate, block) does it block by block and returns (columns, rows) compactly
    # (edges included; v the velocity for the Coulomb sign: the measured one when the file has it, else qd),
    # filters the result exactly as the torque was filtered and returns it on the grid t
    parallel_filter: Callable[[Callable[..., np.ndarray]], np.ndarray] | None = None
    # the controller's measured velocity on the grid t and its noise std per joint, when the file has one
    # (robid.signals.measured_velocity: the velocity whose sign the Coulomb term takes)
    qd_measured: np.ndarray | None = None
    qd_measured_std: tuple[float, ...] | None = None
    # per joint, robid's processing or the plain recipe, whichever predicts the smaller qdd error (signals/guard.py)
    guard: GuardChoice | None = None

    def __post_init__(self) -> None:
        for name in ("t", "q", "qd", "qdd", "tau", "qddd", "qdddd", "theta", "thetad", "thetadd", "qd_measured"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        keep = np.array(self.keep, dtype=bool, copy=True)
        keep.flags.writeable = False
        object.__setattr__(self, "keep", keep)
