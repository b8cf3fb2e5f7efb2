"""Controller programs: every format is parsed back, re-sampled at the controller rate and checked."""

import math

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.excitation.constraints import JointLimitSet, check_trajectory
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.programs import FORMATS, ProgramOptions, export_program
from robid.excitation.programs.common import smoothstep9
from robid.excitation.programs.parse_back import check_motion, parse_program, verify_program
from robid.excitation.trajectory_file import TrajectoryFile

SUFFIX = {"csv": ".csv", "krl": ".src", "rapid": ".mod", "urscript": ".script"}
LIMITS = JointLimitSet.create(
    6,
    np.deg2rad([[-180, 180], [-180, 0], [-160, 160], [-180, 0], [-90, 90], [-90, 90]]),
    [3.14] * 3 + [6.28] * 3,
    [1.5] * 6,
)
CENTER = np.deg2rad([0, -90, 0, -90, 0, 0])


def _trajectory(rest_order, usage=0.8, seed=0, period=8.0, harmonics=5):
    """A 6-axis trajectory scaled so that its tightest limit is used to ``usage``."""
    rng = np.random.default_rng(seed)
    ls = np.arange(1, harmonics + 1)
    traj = FourierTrajectory(
        period, CENTER, rng.standard_normal((6, harmonics)) / ls, rng.standard_normal((6, harmonics)) / ls, rest_order
    ).project_rest()
    t = np.linspace(0, period, 8001)
    q, qd, qdd = traj.evaluate(t, 2)
    dq = q - CENTER
    room = np.minimum(LIMITS.position[:, 1] - CENTER, CENTER - LIMITS.position[:, 0])
    ratio = max(
        np.max(np.abs(dq).max(0) / room),
        np.max(np.abs(qd).max(0) / LIMITS.velocity),
        np.max(np.abs(qdd).max(0) / LIMITS.acceleration),
    )
    x = traj.coefficients() * usage / ratio
    return traj.with_coefficients(x)


@pytest.fixture(scope="module")
def rest_file():
    traj = _trajectory(4)
    assert check_trajectory(traj, LIMITS).ok
    return TrajectoryFile(traj, LIMITS, 0.05, (), {"criterion": "cond", "criteria": {"cond": 5.0}})


@pytest.fixture(scope="module")
def periodic_file():
    traj = _trajectory(None, usage=0.6, seed=1)
    return TrajectoryFile(traj, LIMITS, 0.05, (), {})


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_passes_its_own_parse_back_check(fmt, rest_file, tmp_path):
    out = tmp_path / f"exc{SUFFIX[fmt]}"
    result = export_program(rest_file, fmt, out, ProgramOptions(periods=2))
    assert all(p.exists() for p in result.paths)
    check = verify_program(out, rest_file, fmt)
    assert check.ok, check.summary()
    assert check.deviation is not None and check.deviation < 2e-3
    motion = parse_program(out, fmt)
    # the executed motion covers both periods and ends where it started, at rest in the centre
    last = 2 * rest_file.trajectory.period - (motion.sample_time if fmt == "csv" else 0.0)
    assert motion.t[-1] >= last - 1e-9
    np.testing.assert_allclose(motion.q[0], CENTER, atol=1e-7)
    np.testing.assert_allclose(motion.q[-1], CENTER, atol=1e-7)


@pytest.mark.parametrize("fmt", ["krl", "rapid", "urscript"])
def test_periodic_design_gets_fade_in_and_out(fmt, periodic_file, tmp_path):
    out = tmp_path / f"per{SUFFIX[fmt]}"
    export_program(periodic_file, fmt, out, ProgramOptions(periods=1))
    motion = parse_program(out, fmt)
    check = check_motion(motion, LIMITS, periodic_file)
    assert check.ok, check.summary()
    period = periodic_file.trajectory.period
    assert motion.lead == 1 and motion.t[-1] >= 3 * period - 1e-6
    # the middle period is the design itself
    mid = (motion.design_time > period + 0.5) & (motion.design_time < 2 * period - 0.5)
    design = periodic_file.trajectory.derivative(motion.design_time[mid], 0)
    assert np.max(np.abs(motion.q[mid] - design)) < 2e-3


def test_smoothstep_is_c4():
    s = np.array([0.0, 1.0])
    h = 1e-3
    assert np.array_equal(smoothstep9(s), [0.0, 1.0])
    for k in range(1, 5):
        # k-th derivative by finite differences vanishes at both ends (polynomial of degree 9: O(h^(5-k)))
        d0 = np.diff(smoothstep9(np.arange(k + 1) * h), k) / h**k
        assert abs(d0[0]) < 10 * h ** (5 - k) * 126 * math.factorial(9)


def test_signs_offsets_and_units_round_trip(rest_file, tmp_path):
    signs = (1, -1, 1, -1, 1, 1)
    for fmt, offsets in (
        ("krl", (0, 90, 0, 0, 10, 0)),
        ("rapid", (5, 0, 0, 0, 0, -20)),
        ("urscript", (0, 0, 0.5, 0, 0, 0)),
    ):
        out = tmp_path / f"s{SUFFIX[fmt]}"
        export_program(rest_file, fmt, out, ProgramOptions(signs=signs, offsets=offsets))
        check = verify_program(out, rest_file, fmt)
        assert check.ok and check.deviation < 2e-3, (fmt, check.summary())
    text = (tmp_path / "s.dat").read_text()
    # joint 2 at the centre (-90 deg) with sign -1 and offset 90 is written as 180 deg on the KUKA
    assert "XSTART={A1 0.000000,A2 180.000000," in text


def test_parse_back_catches_a_tampered_program(rest_file, tmp_path):
    out = tmp_path / "bad.src"
    export_program(rest_file, "krl", out, ProgramOptions())
    dat = out.with_suffix(".dat")
    lines = dat.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("XP[40]="))
    lines[i] = lines[i].replace("{A1 ", "{A1 3.0+")  # break the number: parsing must fail loudly
    dat.write_text("\n".join(lines) + "\n")
    with pytest.raises((ValueError, KeyError)):
        verify_program(out, rest_file, "krl")
    # a plausible but wrong point (a 2 degree kink) violates the acceleration limit after interpolation
    export_program(rest_file, "krl", out, ProgramOptions())
    lines = dat.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("XP[40]="))
    head, rest = lines[i].split("{A1 ", 1)
    value, tail = rest.split(",", 1)
    lines[i] = f"{head}{{A1 {float(value) + 2.0:.6f},{tail}"
    dat.write_text("\n".join(lines) + "\n")
    check = verify_program(out, rest_file, "krl")
    assert not check.ok and any(i.quantity == "acceleration" and not i.ok for i in check.items)


def test_explicit_rate_that_fails_is_refused(rest_file, tmp_path):
    with pytest.raises(RobidInputError, match="violate"):
        export_program(rest_file, "rapid", tmp_path / "x.mod", ProgramOptions(rate=1.0))
    assert not (tmp_path / "x.mod").exists()


def test_urscript_targets_are_the_design(rest_file, tmp_path):
    out = tmp_path / "u.script"
    export_program(rest_file, "urscript", out, ProgramOptions(periods=1))
    motion = parse_program(out, "urscript")
    np.testing.assert_allclose(motion.q, rest_file.trajectory.derivative(motion.t, 0), atol=1e-12)
    assert motion.sample_time == pytest.approx(0.002)
    text = out.read_text()
    assert "servoj(q, 0, 0, DT, 0.1, 300)" in text and "movej(START" in text


def test_csv_columns_and_exact_samples(rest_file, tmp_path):
    out = tmp_path / "c.csv"
    export_program(rest_file, "csv", out, ProgramOptions(periods=3, rate=100.0))
    header = out.read_text().splitlines()[0].split(",")
    assert header == ["t"] + [f"q{j}" for j in range(1, 7)] + [f"qd{j}" for j in range(1, 7)] + [
        f"qdd{j}" for j in range(1, 7)
    ]
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    assert data.shape == (3 * 800, 19)
    q, qd, qdd = rest_file.trajectory.evaluate(data[:, 0], 2)
    np.testing.assert_allclose(data[:, 1:7], q, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(data[:, 13:], qdd, rtol=1e-11, atol=1e-12)
