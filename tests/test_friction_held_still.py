"""Rows where a joint is held still are not friction data (robid.identification.friction_fit.held_still): a hold of
0.5 s or more below 0.01 rad/s is left out on that joint only; reversals and starts, however slow, stay."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robid.identification.friction_fit import HELD_STILL_S, HELD_STILL_SPEED, held_still


def _dataset(t, qd):
    processed = SimpleNamespace(t=t, qd=qd, qd_measured=None, qd_measured_std=None,
                                noise=SimpleNamespace(qd_std_processed=[1e-4] * qd.shape[1]))
    return SimpleNamespace(processed=processed)


@settings(max_examples=60, deadline=None)
@given(rate=st.sampled_from([100.0, 250.0, 1000.0]), hold=st.floats(0.0, 2.0), start=st.floats(0.2, 1.0),
       amplitude=st.floats(0.05, 2.0))
def test_a_hold_is_left_out_when_long_enough_and_only_on_its_joint(rate, hold, start, amplitude):
    t = np.arange(0.0, start + hold + 1.5, 1.0 / rate)
    still = (t >= start) & (t < start + hold)
    moving = amplitude * np.sin(2 * np.pi * 0.7 * t)  # reversals every 0.71 s: slow for a few ms only
    qd = np.column_stack([np.where(still, 1e-4 * np.cos(40 * t), amplitude), moving])
    held = held_still(_dataset(t, qd))
    assert not held[:, 1].any()  # a joint reversing is never held still
    span = int(still.sum())
    if span >= np.ceil(HELD_STILL_S * rate):
        assert np.array_equal(held[:, 0], still)
    else:
        assert not held[:, 0].any()


def test_the_threshold_is_the_standstill_speed():
    t = np.arange(0.0, 3.0, 1e-3)
    qd = np.full((t.size, 1), 0.9 * HELD_STILL_SPEED)
    assert held_still(_dataset(t, qd)).all()
    assert not held_still(_dataset(t, qd / 0.8)).any()
