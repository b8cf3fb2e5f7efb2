"""Whole periods are found and all used, whatever the rounding of the period to samples and the time origin
(robid.signals.whole_periods, periodic.detect_period / cut_periods, processing's time origin).

Records are built like a controller log of exactly K periods: ``t = np.arange(0, K*T, h)``; positions are a
closed-form multi-joint Fourier series, so the number of periods, their start and the derivatives are known
exactly, independently of the code under test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.signals import Measurement, ProcessingOptions, process

Q_NOISE = 1e-5  # rad: a realistic encoder noise
TAU_NOISE = 0.02  # N m, about 1 % of the torque


class Series:
    """q(t) = c + sum_l a_l/(l w) sin(l w t) - b_l/(l w) cos(l w t) and its derivatives, in closed form."""

    def __init__(self, period: float, harmonics: int = 6, dof: int = 4, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w = 2.0 * np.pi / period
        self.a = rng.normal(size=(harmonics, dof)) * 0.3
        self.b = rng.normal(size=(harmonics, dof)) * 0.3
        self.c = rng.normal(size=dof)

    def __call__(self, t: np.ndarray, order: int = 0) -> np.ndarray:
        out = np.zeros((t.size, self.c.size)) + (self.c if order == 0 else 0.0)
        for l in range(1, self.a.shape[0] + 1):
            wl = l * self.w
            s = np.sin(wl * t + order * np.pi / 2)[:, None]
            c = np.cos(wl * t + order * np.pi / 2)[:, None]
            out += wl ** (order - 1) * (self.a[l - 1] * s - self.b[l - 1] * c)
        return out


def torque(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    return 1.5 * qdd + 2.0 * np.cos(q) + 0.2 * qd


def record(series: Series, t: np.ndarray, seed: int = 1, offset: float = 0.0) -> Measurement:
    rng = np.random.default_rng(seed)
    q = series(t)
    tau = torque(q, series(t, 1), series(t, 2))
    return Measurement(
        source="log",
        t=t + offset,
        q=q + Q_NOISE * rng.normal(size=q.shape),
        tau=tau + TAU_NOISE * rng.normal(size=q.shape),
    )


def exact_periods(k: int, period: float, rate: float, offset: float = 0.0) -> tuple[Series, Measurement]:
    series = Series(period)
    return series, record(series, np.arange(0.0, k * period, 1.0 / rate), offset=offset)


CASES = [(k, 10.0, rate) for k in (2, 3, 7) for rate in (100.0, 250.0, 1000.0)]
CASES += [(2, 10.0, 500.0), (3, 7.3219, 333.0), (7, 4.0013, 250.0)]  # T/h not an integer: resampled


@pytest.mark.parametrize(("k", "period", "rate"), CASES)
def test_exact_periods_are_detected_and_all_used(k, period, rate):
    series, m = exact_periods(k, period, rate)
    p = process(m)
    print(f"\nK = {k}, T = {period} s, {rate:g} Hz ({m.n_samples} samples): mode {p.mode}, {p.n_periods} periods, "
          f"T = {p.period:.10g} s ({p.period_source}), segment {p.segment[0]:.4g}-{p.segment[1]:.6g} s")
    assert p.mode == "periodic" and p.period_source == "detected"
    assert p.n_periods == k, p.method
    assert abs(p.period - period) < 1e-6 * period
    assert abs(p.segment[0]) < 1e-9 and abs(p.segment[1] - k * period) < 1e-5 * period
    # the K periods are the ones averaged: the accelerations are those of the series
    ref = series(p.t, 2)
    assert np.sqrt(np.mean((p.qdd - ref) ** 2)) < 0.01 * np.sqrt(np.mean(ref**2))


@pytest.mark.parametrize("k", [2, 3])
def test_given_period_uses_all_periods(k):
    period = 10.0
    _, m = exact_periods(k, period, 100.0)
    for opts in (
        ProcessingOptions(period=period),
        ProcessingOptions(period=period, period_source="trajectory"),
        ProcessingOptions(period=period + 5e-7),  # a period that rounds to a fraction of a step more
        ProcessingOptions(period=period, n_periods=k),
    ):
        p = process(m, opts)
        assert p.mode == "periodic" and p.n_periods == k, p.method
    with pytest.raises(RobidInputError, match=f"{k + 1} periods of 10 s requested, only {k} fit"):
        process(m, ProcessingOptions(period=period, n_periods=k + 1))


def test_the_last_period_may_end_up_to_half_a_step_past_the_record():
    """Rule: K periods of T are used when K T <= (number of samples + 1/2) h."""
    h, k, m_steps = 0.01, 3, 1000
    series = Series(10.0)
    t = np.arange(k * m_steps) * h  # exactly 3 x 1000 samples
    m = record(series, t)
    for past, expected in ((0.0, 3), (0.2, 3), (0.45, 3), (0.55, 2), (0.9, 2)):
        period = (m_steps + past / k) * h  # the third period ends `past` steps after the record
        p = process(m, ProcessingOptions(period=period))
        assert p.n_periods == expected, (past, p.method)


def test_processing_does_not_depend_on_the_time_origin():
    """The same log with controller time stamps counted from 1970 (t + 1.7e9 s, rounded to 2.4e-7 s by the
    float format): same periods, same derivatives, times reported as given."""
    k, period, rate = 3, 8.0, 100.0
    _, m0 = exact_periods(k, period, rate)
    _, m1 = exact_periods(k, period, rate, offset=1.7e9)
    assert np.ptp(np.diff(m1.t)) > 1e-7  # the stamps look jittered
    for opts in (ProcessingOptions(), ProcessingOptions(period=period, average_periods=False)):
        p0, p1 = process(m0, opts), process(m1, opts)
        assert p1.n_periods == p0.n_periods == k and p1.n_samples == p0.n_samples
        assert "no resampling" in p1.method and "uniform to their float resolution" in p1.method
        assert np.allclose(p1.t - 1.7e9, p0.t, atol=1e-6)
        assert p1.segment[0] - 1.7e9 == pytest.approx(p0.segment[0], abs=1e-6)
        for name in ("q", "qd", "qdd", "tau"):
            a, b = getattr(p0, name), getattr(p1, name)
            assert np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(a)), name
    # the filtering path too: the same grid, the same samples
    q0 = process(m0, ProcessingOptions(mode="nonperiodic", cutoff_hz=5.0))
    q1 = process(m1, ProcessingOptions(mode="nonperiodic", cutoff_hz=5.0))
    assert q0.n_samples == q1.n_samples
    assert np.max(np.abs(q1.qdd - q0.qdd)) <= 1e-7 * np.max(np.abs(q0.qdd))


def test_approach_move_and_trailing_rest_are_cut_off_and_reported():
    """Rest at a home pose (1 s), a smooth approach move to the start pose (2 s), three periods of a motion
    that starts and ends at rest, and a trailing rest (1.5 s)."""
    rate, period, k = 200.0, 6.0, 3
    rest0, move, rest1 = 1.0, 2.0, 1.5
    w = 2.0 * np.pi / period
    amp = np.array([[0.4, -0.3, 0.2], [0.25, 0.3, -0.2], [-0.3, 0.1, 0.15]])  # (harmonic, joint)
    center = np.array([0.3, -0.8, 1.1])
    home = center + np.array([-0.6, 0.5, 0.4])

    def motion(s):  # starts and ends every period at the centre pose at rest: sum a_l (1 - cos(l w s))
        return center + sum(np.outer(1.0 - np.cos((i + 1) * w * s), amp[i]) for i in range(amp.shape[0]))

    t = np.arange(0.0, rest0 + move + k * period + rest1, 1.0 / rate)
    u = np.clip((t - rest0) / move, 0.0, 1.0)[:, None]
    q = home + (center - home) * (10 * u**3 - 15 * u**4 + 6 * u**5)
    start = rest0 + move
    inside = (t >= start) & (t < start + k * period)
    q[inside] = motion(t[inside] - start)
    q[t >= start + k * period] = center
    rng = np.random.default_rng(3)
    m = Measurement(
        source="approach",
        t=t,
        q=q + Q_NOISE * rng.normal(size=q.shape),
        tau=2.0 * np.cos(q) + TAU_NOISE * rng.normal(size=q.shape),
    )
    p = process(m)
    print("\n" + "\n".join(line for line in p.method.splitlines() if "left out" in line or "whole periods" in line))
    assert p.mode == "periodic" and p.n_periods == k
    assert abs(p.segment[0] - start) < 0.05 and abs(p.segment[1] - (start + k * period)) < 0.05
    before = re.search(r"left out before the periods: 0-([\d.]+) s \((\d+) samples\): (.*)", p.method)
    after = re.search(r"left out after the periods: ([\d.]+)-([\d.]+) s \((\d+) samples\): (.*)", p.method)
    assert before and after, p.method
    assert abs(float(before.group(1)) - start) < 0.06
    spans = re.fullmatch(r"rest 0-([\d.]+) s, approach move or lead-in ([\d.]+)-([\d.]+) s", before.group(3))
    assert spans, before.group(3)
    assert rest0 <= float(spans.group(1)) < rest0 + 0.2 and float(spans.group(3)) == float(before.group(1))
    assert abs(float(after.group(1)) - (start + k * period)) < 0.06 and float(after.group(2)) == t[-1]
    assert after.group(4).startswith("rest "), after.group(4)
