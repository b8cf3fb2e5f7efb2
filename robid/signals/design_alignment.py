"""Where a known design was executed inside a record: the start time t0 of the executed period.

A record of one execution of a designed motion q_d(tau), tau in [0, T] (a rest-to-rest Fourier design, robid's
or a published one) holds it somewhere between rests and approach moves. Given the design sampled at times
tau_k, the start is the time shift that best lays the design over the measured positions (least squares)::

    J(t0) = sum_k sum_j (q_j(t0 + tau_k) - q_d,j(tau_k))^2,        t0 = argmin J

1. Coarse: the design is resampled (cubic spline) onto the record's uniform step h, and J is evaluated at every
   whole-sample lag L by the FFT: J(L) = sum_k |q[L + k]|^2 - 2 sum_k q[L + k] . q_d[k] + sum_k |q_d[k]|^2
   (the cross-correlation term by zero-padded FFTs, the first by cumulative sums).
2. Fine: J(t0) with the measured positions interpolated by a cubic spline (exact design samples, no
   interpolation of the design) is minimised within one step of the best lag (bounded search), then polished by
   Gauss-Newton steps on the residual r_k(t0) = q(t0 + tau_k) - q_d(tau_k) (dr/dt0 = qdot(t0 + tau_k)).

This is the time-delay estimate of a known waveform by least squares (the matched filter of a deterministic
signal in white noise; e.g. Kay, Fundamentals of Statistical Signal Processing I, section 7.10 / Knapp & Carter,
IEEE T-ASSP 24(4), 1976). The residual per joint tells how closely the robot followed the design (tracking
error, timing slips of the controller); it is reported, never hidden.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import minimize_scalar

from robid.errors import RobidInputError
from robid.signals import periodic


@dataclass(frozen=True)
class DesignSamples:
    """A known design as the signal stage needs it (plain values, stored with the processing options).

    ``q``: positions (K, dof) at tau_k = k T / (K - 1), k = 0..K-1 (one period, both ends included);
    ``harmonics``: the design's band (harmonics of 1/T it holds its motion at); ``source``: where it came
    from (a file name), for the account.
    """

    source: str
    period: float
    harmonics: tuple[int, ...]
    q: tuple[tuple[float, ...], ...]

    def times(self) -> np.ndarray:
        return np.linspace(0.0, self.period, len(self.q))

    def positions(self) -> np.ndarray:
        return np.asarray(self.q, dtype=float)


def design_samples(source: str, period: float, harmonics: tuple[int, ...], q: np.ndarray) -> DesignSamples:
    """The record of a design sampled at K = q.shape[0] equally spaced times over [0, period]."""
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[0] < 4 or not np.all(np.isfinite(q)):
        raise ValueError("q: at least 4 finite samples (K, dof) over one period")
    return DesignSamples(source, float(period), tuple(int(h) for h in harmonics), tuple(map(tuple, q.tolist())))


@dataclass(frozen=True)
class DesignAlignment:
    """The executed period of a design found in a record.

    ``start``: t0 on the record's clock (s), where the design's tau = 0 falls; ``coarse_start``: the best
    whole-sample lag before refinement; ``rms``: per joint, the rms of q(t0 + tau) - q_d(tau) over the period
    (rad or m); ``mismatch``: J(t0) divided by the design's own variation sum_k |q_d[k] - mean q_d|^2
    (0 = the design found exactly, 1 = no better than its mean pose).
    """

    start: float
    coarse_start: float
    rms: tuple[float, ...]
    mismatch: float


def align_design(
    t: np.ndarray, q: np.ndarray, tau: np.ndarray, q_design: np.ndarray, where: str = "record"
) -> DesignAlignment:
    """Start time of the design ``q_design`` (K, dof) sampled at ``tau`` (K,), tau[0] = 0, increasing, in the
    measured positions ``q`` (N, dof) on the uniform grid ``t`` (module docstring)."""
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    tau = np.asarray(tau, dtype=float)
    q_design = np.asarray(q_design, dtype=float)
    _check(t, q, tau, q_design, where)
    h = float(t[1] - t[0])
    lag = _coarse_lag(q, _on_grid(tau, q_design, h))
    spline = CubicSpline(t, q, axis=0)
    start = _refine(spline, t, tau, q_design, float(t[0] + lag * h), h)
    residual = spline(start + tau) - q_design
    spread = float(np.sum((q_design - q_design.mean(axis=0)) ** 2))
    return DesignAlignment(
        start=start,
        coarse_start=float(t[0] + lag * h),
        rms=tuple(float(x) for x in np.sqrt(np.mean(residual**2, axis=0))),
        mismatch=float(np.sum(residual**2) / spread) if spread > 0 else float("inf"),
    )


def _check(t: np.ndarray, q: np.ndarray, tau: np.ndarray, q_design: np.ndarray, where: str) -> None:
    if q.ndim != 2 or q_design.ndim != 2 or q.shape[1] != q_design.shape[1]:
        raise RobidInputError(
            f"{where}: the design has {q_design.shape[-1]} joints, the record {q.shape[-1] if q.ndim else 0}"
        )
    if tau.shape != (q_design.shape[0],) or tau.size < 4 or tau[0] != 0.0 or np.any(np.diff(tau) <= 0):
        raise ValueError("tau: at least 4 increasing design times starting at 0, one per row of q_design")
    span = float(t[-1] - t[0])
    if tau[-1] > span:
        raise RobidInputError(f"{where}: the record ({span:g} s) is shorter than the design's period ({tau[-1]:g} s)")


def _on_grid(tau: np.ndarray, q_design: np.ndarray, h: float) -> np.ndarray:
    """The design resampled onto 0, h, 2h, ... <= tau[-1] (cubic spline; used for the coarse search only)."""
    grid = np.arange(int(np.floor(tau[-1] / h + 1e-9)) + 1) * h
    return CubicSpline(tau, q_design, axis=0)(np.minimum(grid, tau[-1]))


def _coarse_lag(q: np.ndarray, d: np.ndarray) -> int:
    """The whole-sample lag L (0 <= L <= N - K) minimising sum_k |q[L + k] - d[k]|^2, by the FFT."""
    n, k = q.shape[0], d.shape[0]
    size = int(2 ** np.ceil(np.log2(n + k)))
    spec = np.fft.rfft(q, n=size, axis=0) * np.conj(np.fft.rfft(d, n=size, axis=0))
    cross = np.fft.irfft(spec, n=size, axis=0)[: n - k + 1].sum(axis=1)  # sum_k q[L + k] . d[k]
    energy = np.concatenate([[0.0], np.cumsum(np.sum(q**2, axis=1))])
    window = energy[k : n + 1] - energy[: n - k + 1]  # sum_k |q[L + k]|^2
    return int(np.argmin(window - 2.0 * cross))


def _refine(spline: CubicSpline, t: np.ndarray, tau: np.ndarray, q_design: np.ndarray, guess: float, h: float) -> float:
    """Sub-sample t0 within one step of ``guess`` (bounded search, then Gauss-Newton), kept inside the record."""
    lo, hi = max(guess - h, float(t[0])), min(guess + h, float(t[-1] - tau[-1]))
    if hi <= lo:
        return guess

    def cost(start: float) -> float:
        return float(np.sum((spline(start + tau) - q_design) ** 2))

    start = float(minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6 * h}).x)
    slope = spline.derivative()
    return periodic.gauss_newton_scalar(
        start, lambda s: spline(s + tau) - q_design, lambda s: slope(s + tau), h, (lo, hi)
    )
