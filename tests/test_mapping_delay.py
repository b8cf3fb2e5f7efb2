"""A mapping's per-signal ``delay`` (docs/mapping-file.md "Channels recorded late"): the band-limited
fractional-delay interpolation of robid.signals.time_shift against the analytic signal at the shifted time, and
the reader applying it per joint, with clear errors for bad values."""

from __future__ import annotations

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.io.mapping import mapping_from_dict
from robid.io.measurement_file import read_measurement
from robid.signals.time_shift import advance, uniform_step

STEP = 0.004  # the KR300's 250 Hz
DELAY = 3.06e-3  # its link-encoder lag: 0.765 of a step


def drifting(t):
    """Not periodic in the record: three components 0.37-17 Hz (below 0.14 of Nyquist) and a linear drift."""
    return (0.3 * np.sin(2 * np.pi * 0.37 * t + 0.2) + 0.1 * np.sin(2 * np.pi * 3.1 * t)
            + 0.02 * np.cos(2 * np.pi * 17 * t) + 0.05 * t)


def from_rest(t):
    """0 -> 1 with zero velocity and acceleration at both ends of [0, 10] s, constant outside."""
    u = np.clip(t / 10.0, 0.0, 1.0)
    return u - np.sin(2 * np.pi * u) / (2 * np.pi)


@pytest.mark.parametrize("delay", [DELAY, -DELAY, 2.5 * STEP])
def test_advance_matches_the_signal_at_the_shifted_time(delay):
    t = np.arange(2501) * STEP
    error = advance(drifting(t), STEP, delay) - drifting(t + delay)
    assert np.max(np.abs(error[20:-20])) < 1e-6  # interior: the exact band-limited delay (amplitude ~0.8)
    # the ends: the odd continuation, second-order accurate, error below max|x''| delay^2
    curvature = 0.3 * (2 * np.pi * 0.37) ** 2 + 0.1 * (2 * np.pi * 3.1) ** 2 + 0.02 * (2 * np.pi * 17) ** 2
    assert np.max(np.abs(error)) < curvature * delay**2
    # the uncorrected record is off by the delay times the slope: 500x more than the interpolation
    assert np.max(np.abs(drifting(t) - drifting(t + delay))[20:-20]) > 500 * np.max(np.abs(error[20:-20]))
    rest = advance(from_rest(t), STEP, delay) - from_rest(t + delay)
    assert np.max(np.abs(rest)) < 1e-8  # a record from rest to rest: exact up to its ends


def test_advance_on_whole_periods_is_the_phase_shift_per_harmonic():
    period = 10.0
    t = np.arange(2500) * STEP  # exactly one period

    def periodic(t):
        return sum(np.sin(2 * np.pi * k / period * t + k) / k for k in range(1, 30))

    error = advance(periodic(t), STEP, DELAY) - periodic(t + DELAY)
    assert np.max(np.abs(error[20:-20])) < 1e-7
    two = advance(np.column_stack([periodic(t), from_rest(t)]), STEP, DELAY)  # columns shifted alike
    assert np.allclose(two[:, 0], advance(periodic(t), STEP, DELAY))
    assert np.array_equal(advance(periodic(t), STEP, 0.0), periodic(t))


def test_uniform_step():
    t = np.arange(100) * STEP
    assert uniform_step(t) == pytest.approx(STEP)
    assert uniform_step(np.delete(t, 50)) is None


def _write(tmp_path, t, q, tau):
    path = tmp_path / "run.csv"
    rows = np.column_stack([t, q, tau])
    np.savetxt(path, rows, delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    return path


def _mapping(delay, tmp_path):
    spec = {"robid_mapping": 1, "format": "csv", "dof": 2, "time": {"column": "t", "unit": "s"},
            "positions": {"columns": ["q1", "q2"], "unit": "rad", "delay": delay},
            "torques": {"columns": ["tau1", "tau2"], "unit": "Nm"}}
    return mapping_from_dict(spec, str(tmp_path / "map.yaml"))


def test_reader_undoes_the_delay_of_one_joint(tmp_path):
    t = np.arange(2501) * STEP
    late = drifting(t - DELAY)  # joint 1 read 3.06 ms late
    path = _write(tmp_path, t, np.column_stack([late, from_rest(t)]), np.column_stack([t, -t]))
    m = read_measurement(path, mapping=_mapping(["3.06ms", 0], tmp_path), dof=2)
    assert np.max(np.abs(m.q[20:-20, 0] - drifting(t[20:-20]))) < 1e-6
    assert np.array_equal(m.q[:, 1], from_rest(t))  # joint 2 untouched
    assert any("recorded late" in n and "1: 3.06 ms" in n for n in m.notes)
    same = read_measurement(path, mapping=_mapping(0.00306, tmp_path), dof=2)  # one value for every joint
    assert np.allclose(same.q[:, 0], m.q[:, 0])
    assert not np.array_equal(same.q[:, 1], from_rest(t))
    assert np.allclose(read_measurement(path, mapping=_mapping("3060 us", tmp_path), dof=2).q, same.q)


@pytest.mark.parametrize("delay, message", [
    ("3 minutes", r"positions: delay: cannot read '3 minutes' as a time"),
    ([True, 0], r"positions: delay\[0\]: expected a finite number"),
    ([], r"positions: delay: expected a time or a list"),
])
def test_bad_delay_values_are_named(tmp_path, delay, message):
    with pytest.raises(RobidInputError, match=message):
        _mapping(delay, tmp_path)


def test_delay_needs_one_value_per_joint_and_uniform_time(tmp_path):
    t = np.arange(200) * STEP
    path = _write(tmp_path, t, np.column_stack([t, t]), np.column_stack([t, t]))
    with pytest.raises(RobidInputError, match=r"map.yaml: positions.delay: 3 values for 2 joints"):
        read_measurement(path, mapping=_mapping([0.001, 0, 0], tmp_path), dof=2)
    jitter = t.copy()
    jitter[100:] += 0.5 * STEP
    path = _write(tmp_path, jitter, np.column_stack([t, t]), np.column_stack([t, t]))
    with pytest.raises(RobidInputError, match=r"positions.delay: needs uniformly sampled time stamps"):
        read_measurement(path, mapping=_mapping(0.001, tmp_path), dof=2)
