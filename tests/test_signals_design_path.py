"""The design path: a known rest-to-rest design located in a record (least-squares start, sub-sample), cut to
[t0, t0 + T] and processed at the design's harmonics. References are closed forms written here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.record.codec import from_plain, to_plain
from robid.signals import Measurement, ProcessingOptions, process
from robid.signals.design_alignment import align_design, design_samples

PERIOD = 12.0
W = 2 * math.pi / PERIOD
CENTER = np.array([0.3, -1.2, 0.5])
A = np.array([0.4, -0.3, 0.25])
B = np.array([0.2, 0.5, -0.35])


def design(tau: np.ndarray, order: int = 0) -> np.ndarray:
    """q = c + A (1 - cos w tau)^2 + B (sin w tau - sin(2 w tau)/2): harmonics 1 and 2 only, qd = qdd = 0 at
    tau = 0 and T; written with its derivatives by hand. Outside [0, T]: at rest at c."""
    tau = np.asarray(tau, dtype=float)
    inside = ((tau >= 0) & (tau <= PERIOD))[:, None]
    x = W * tau[:, None]
    # (1 - cos x)^2 = 3/2 - 2 cos x + cos(2x)/2
    terms = {
        0: A * (1.5 - 2 * np.cos(x) + 0.5 * np.cos(2 * x)) + B * (np.sin(x) - 0.5 * np.sin(2 * x)),
        1: W * (A * (2 * np.sin(x) - np.sin(2 * x)) + B * (np.cos(x) - np.cos(2 * x))),
        2: W**2 * (A * (2 * np.cos(x) - 2 * np.cos(2 * x)) + B * (-np.sin(x) + 2 * np.sin(2 * x))),
    }
    return np.where(inside, terms[order], 0.0) + (CENTER if order == 0 else 0.0)


def record(start: float, rate: float = 100.0, span: float = 20.0, noise: float = 0.0, seed: int = 0):
    """Rest, an approach move of 0.5 s to the centre, rest, the design from ``start``, rest."""
    t = 1000.0 + np.arange(int(span * rate)) / rate
    local = t - t[0]
    q = design(local - start)
    approach = np.clip((1.0 - local) / 0.5, 0.0, 1.0) ** 2  # an approach ending 1 s into the record
    q = q + approach[:, None] * np.array([0.05, -0.04, 0.03])
    q = q + noise * np.random.default_rng(seed).standard_normal(q.shape)
    tau = 2.0 * design(local - start, 2) + 0.5 * design(local - start, 1) + np.sin(q)
    return t, q, tau


def samples(k: int = 257):
    tau = np.linspace(0.0, PERIOD, k)
    return design_samples("closed-form design", PERIOD, (1, 2), design(tau))


@pytest.mark.parametrize("noise", [0.0, 2e-4])
def test_start_found_to_sub_sample_precision(noise):
    start = 3.23717  # not on the 10 ms grid
    t, q, _ = record(start, noise=noise)
    d = samples()
    found = align_design(t, q, d.times(), d.positions())
    assert abs(found.start - (t[0] + start)) < (1e-6 if noise == 0 else 2e-4)
    assert abs(found.coarse_start - (t[0] + start)) <= 0.0101
    assert max(found.rms) < 1e-5 + 1.5 * noise and found.mismatch < 1e-4


def test_design_path_cuts_the_period_and_differentiates_at_the_design_harmonics():
    start = 4.5123
    t, q, tau = record(start)
    m = Measurement(source="synthetic", t=t, q=q, tau=tau)
    p = process(m, ProcessingOptions(design=samples()))
    assert p.mode == "rest-to-rest" and p.period_source == "design" and p.harmonics == (1, 2)
    assert p.period == pytest.approx(PERIOD, rel=1e-12)
    assert p.segment[0] == pytest.approx(t[0] + start, abs=1e-6)
    local = p.t - (t[0] + start)
    scale = [np.max(np.abs(design(local, k))) for k in range(3)]
    for k, x in enumerate((p.q, p.qd, p.qdd)):
        assert np.max(np.abs(x - design(local, k))) < 1e-7 * scale[k], k
    assert "executed period found at t0 = " in p.method and "harmonics 1-2" in p.method


def test_given_harmonics_win_over_the_design_band():
    t, q, tau = record(2.0)
    p = process(Measurement(source="synthetic", t=t, q=q, tau=tau), ProcessingOptions(design=samples(),
                                                                                        harmonics=(1, 2, 3, 4)))
    assert p.harmonics == (1, 2, 3, 4)


def test_a_record_that_does_not_follow_the_design_is_refused():
    t, q, tau = record(3.0)
    slow = np.linspace(0.0, PERIOD, 257)
    other = design_samples("slower design", PERIOD, (1, 2), design(slow * 0.85))  # another motion
    with pytest.raises(RobidInputError, match=r"synthetic: the record does not follow the design slower design"):
        process(Measurement(source="synthetic", t=t, q=q, tau=tau), ProcessingOptions(design=other))
    with pytest.raises(RobidInputError, match=r"shorter than the design's period"):
        process(Measurement(source="short", t=t[:1000], q=q[:1000], tau=tau[:1000]),
                ProcessingOptions(design=samples()))


def test_the_design_travels_in_the_stored_options():
    o = ProcessingOptions(design=samples(17), period=PERIOD, excited_harmonics=(1, 2))
    back = from_plain(ProcessingOptions, to_plain(o), "RESULT.json")
    assert back == o and back.design.positions().shape == (17, 3)


def test_a_measurement_that_names_its_design_is_cut_there():
    t, q, tau = record(3.5)
    m = Measurement(source="synthetic", t=t, q=q, tau=tau, design=samples())
    p = process(m)
    assert p.period_source == "design" and p.segment[0] == pytest.approx(t[0] + 3.5, abs=1e-6)
    # an explicit period wins over the measurement's design
    assert process(m, ProcessingOptions(period=PERIOD, mode="periodic")).period_source == "user"


def test_a_malformed_stored_design_is_refused_naming_it():
    t, q, tau = record(3.0)
    bad = from_plain(ProcessingOptions, {"design": {"source": "d.mat", "period": PERIOD, "harmonics": [1],
                                                    "q": [[0.0, 0.0]] * 5}}, "RESULT.json")
    with pytest.raises(RobidInputError, match=r"synthetic: design d.mat: expected at least 4 samples of 3 finite"):
        process(Measurement(source="synthetic", t=t, q=q, tau=tau), bad)
