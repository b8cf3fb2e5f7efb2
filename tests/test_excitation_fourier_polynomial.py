"""Fourier series plus polynomial (the published rest-to-rest designs): values, derivatives, rest outside the
period, continuity, band; the .mat reader and its checks (robid.io.design_file)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.io

from robid.errors import RobidInputError
from robid.excitation.fourier_polynomial import FourierPolynomialTrajectory
from robid.io.design_file import design_processing, read_design, read_published_design
from robid.io.measurement_file import read_trajectory_timing

Q0 = np.array([0.0, -math.pi / 2, 0.0, -math.pi / 2, 0.0, 0.0])


def _fourier(a, b, w, t, order=0):
    """The series and its derivatives written out term by term (sin(x + k pi/2) = sin^(k)(x))."""
    out = np.zeros((t.size, a.shape[0]))
    for l in range(1, a.shape[1] + 1):
        x = l * w * t[:, None] + order * math.pi / 2
        out += (l * w) ** (order - 1) * (a[:, l - 1] * np.sin(x) - b[:, l - 1] * np.cos(x))
    return out


def _rest_polynomial(a, b, period, q0):
    """c (dof, 6), ascending powers, with q(0) = q(T) = q0 and qd = qdd = 0 at both ends (Mamedov et al.)."""
    w = 2 * math.pi / period
    rows, rhs = [], []
    for tt in (0.0, period):
        for k in range(3):
            rows.append([math.perm(p, k) * tt ** (p - k) if p >= k else 0.0 for p in range(6)])
            f = _fourier(a, b, w, np.array([tt]), k)[0]
            rhs.append((q0 if k == 0 else 0.0) - f)
    return np.linalg.solve(np.array(rows), np.array(rhs)).T


def _design(harmonics=5, period=20.0, seed=0):
    rng = np.random.default_rng(seed)
    a = 0.3 * rng.standard_normal((6, harmonics))
    b = 0.3 * rng.standard_normal((6, harmonics))
    return a, b, _rest_polynomial(a, b, period, Q0)


def test_values_and_derivatives_match_the_closed_form_and_finite_differences():
    a, b, c = _design()
    traj = FourierPolynomialTrajectory(20.0, a, b, c)
    t = np.linspace(0.3, 19.7, 53)
    w = 2 * math.pi / 20.0
    for k in range(4):
        poly = sum(math.perm(p, k) * c[:, p] * t[:, None] ** (p - k) for p in range(k, 6))
        np.testing.assert_allclose(traj.derivative(t, k), _fourier(a, b, w, t, k) + poly, atol=1e-9)
    h = 1e-4
    for k in range(3):
        num = (traj.derivative(t - 2 * h, k) - 8 * traj.derivative(t - h, k) + 8 * traj.derivative(t + h, k)
               - traj.derivative(t + 2 * h, k)) / (12 * h)
        assert np.max(np.abs(num - traj.derivative(t, k + 1))) < 1e-7 * np.max(np.abs(traj.derivative(t, k + 1)))


def test_rest_to_rest_ends_and_rest_outside_the_period():
    a, b, c = _design()
    traj = FourierPolynomialTrajectory(20.0, a, b, c)
    ends = np.array([0.0, 20.0])
    np.testing.assert_allclose(traj.derivative(ends, 0), [Q0, Q0], atol=1e-9)
    assert np.max(np.abs(traj.derivative(ends, 1))) < 1e-9 and np.max(np.abs(traj.derivative(ends, 2))) < 1e-8
    assert traj.continuity_order() == 2  # qddd jumps: the polynomial only zeroes qd and qdd
    outside = np.array([-3.0, -1e-3, 20.001, 50.0])
    np.testing.assert_allclose(traj.derivative(outside, 0), [Q0] * 4, atol=1e-9)
    assert np.all(traj.derivative(outside, 1) == 0.0) and np.all(traj.derivative(outside, 2) == 0.0)
    np.testing.assert_allclose(traj.center, Q0, atol=1e-9)
    assert traj.fourier_part().derivative(np.array([3.0]), 1) == pytest.approx(_fourier(a, b, traj.omega,
                                                                                         np.array([3.0]), 1))


def test_band_is_the_series_alone_without_polynomial_and_wider_with_it():
    a, b, c = _design(harmonics=5)
    pure = FourierPolynomialTrajectory(20.0, a, b, np.zeros((6, 1)))
    assert pure.band() == (1, 2, 3, 4, 5)
    traj = FourierPolynomialTrajectory(20.0, a, b, c)
    band = traj.band(0.01)
    assert band[:5] == (1, 2, 3, 4, 5) and len(band) > 5 and band == tuple(range(1, len(band) + 1))
    # independent check of the definition: the accelerations above the band hold at most 1 % of their rms,
    # one harmonic less holds more (per joint, DFT of one period written here)
    m = 4096
    qdd = traj.derivative(np.arange(m) * 20.0 / m, 2)
    spec = np.abs(np.fft.rfft(qdd - qdd.mean(axis=0), axis=0)) ** 2
    total = spec[1:-1].sum(axis=0)
    top = len(band)
    assert np.all(spec[top + 1 : -1].sum(axis=0) <= 1e-4 * total)
    assert np.any(spec[top : -1].sum(axis=0) > 1e-4 * total)
    assert len(traj.band(0.1)) < top < len(traj.band(0.001))


def _write_mat(path, a, b, c, period, **par):
    traj_par = {"T": period, "wf": 2 * math.pi / period, "N": a.shape[1], "t_smp": 0.5, "q0": Q0,
                "q_min": -np.pi * np.ones(6), "q_max": np.pi * np.ones(6), "qd_max": np.full(6, 3.14),
                "q2d_max": np.full(6, 2.0)}
    traj_par.update(par)
    scipy.io.savemat(path, {"a": a, "b": b, "c_pol": c, "traj_par": traj_par})


def test_mat_design_read_with_limits_timing_and_samples(tmp_path):
    a, b, c = _design(harmonics=4, period=10.0)
    f = tmp_path / "N4T10.mat"
    _write_mat(f, a, b, c, 10.0)
    tf = read_design(f)
    assert isinstance(tf.trajectory, FourierPolynomialTrajectory) and tf.trajectory.harmonics == 4
    np.testing.assert_array_equal(tf.trajectory.poly, c)
    assert tf.limits.velocity.tolist() == [3.14] * 6 and tf.limits.position[1].tolist() == [-math.pi, math.pi]
    period, band = read_trajectory_timing(f)
    assert period == 10.0 and band == tf.trajectory.band()
    period, band2, samples = design_processing(f)
    assert band2 == band and samples.period == 10.0 and samples.source == "N4T10.mat"
    tau = samples.times()
    np.testing.assert_allclose(samples.positions(), tf.trajectory.derivative(tau), atol=1e-12)
    assert tau[1] * 16 * max(band) <= 10.0 + 1e-9  # at least 16 samples per period of the top harmonic


@pytest.mark.parametrize(
    "change, message",
    [
        ({"wf": 0.3}, r"traj_par.wf = 0.3 rad/s is not 2 pi / T"),
        ({"N": 7}, r"traj_par.N = 7 but a and b hold 4 harmonics"),
        ({"q0": Q0 + 0.01}, r"q\(0\) of a, b, c_pol differs from traj_par.q0 by 0.01 rad"),
        ({"T": -1.0}, r"traj_par.T: expected a positive number"),
        ({"qd_max": np.ones(5)}, r"traj_par.qd_max: expected 6 finite values"),
    ],
)
def test_mat_design_errors_name_file_and_field(tmp_path, change, message):
    a, b, c = _design(harmonics=4, period=10.0)
    f = tmp_path / "bad.mat"
    _write_mat(f, a, b, c, 10.0, **change)
    with pytest.raises(RobidInputError, match=r"bad.mat: " + message):
        read_published_design(f)


def test_mat_design_missing_variables(tmp_path):
    f = tmp_path / "empty.mat"
    scipy.io.savemat(f, {"x": np.ones(3)})
    with pytest.raises(RobidInputError, match=r"empty.mat: a: missing \(the file holds: x\)"):
        read_published_design(f)
    with pytest.raises(RobidInputError, match="no such design file"):
        read_published_design(tmp_path / "none.mat")


def test_the_polynomial_convention_is_what_the_published_files_hold(shared):
    """Every published design satisfies its own rest conditions only with ascending powers of t (the reader's
    convention): q(0) = q(T) = q0 and qd = qdd = 0 at both ends. Reversed powers would break them."""
    folder = shared / "anchors/data/dynamic_calibration/trajectory_optmzn/optimal_trjctrs"
    for f in sorted(folder.glob("*.mat")):
        traj = read_design(f).trajectory
        ends = np.array([0.0, traj.period])
        scale = np.max(np.abs(traj.derivative(np.linspace(0, traj.period, 501), 1)))
        assert np.max(np.abs(traj.derivative(ends, 1))) < 1e-10 * scale, f.name
        assert np.max(np.abs(traj.derivative(ends, 2))) < 1e-10, f.name
        np.testing.assert_allclose(*traj.derivative(ends, 0), atol=1e-9, err_msg=f.name)
        assert traj.continuity_order() == 2, f.name
        reversed_poly = FourierPolynomialTrajectory(traj.period, traj.a, traj.b, traj.poly[:, ::-1])
        assert np.max(np.abs(reversed_poly.derivative(ends, 1))) > 1e-2 * scale, f.name
