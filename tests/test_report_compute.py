"""The few quantities the report derives itself, checked against closed forms or independent routes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.estimation import band_coverage
from robid.io.reference_file import normalise_references, read_truth_file
from robid.model.terms import standalone_parameters
from robid.report._compute import compensator_columns, compensator_curve, friction_curve, limit_usage
from robid.report._figures import joint_groups
from robid.report.section import num
from robid.signals.spectrum import amplitude_spectrum, merge_bins


def test_limit_usage_closed_forms():
    t = np.linspace(0.0, 1.0, 1001)
    q = np.column_stack([np.interp(t, [0, 0.5, 1], [-1, 1, -1]), np.interp(t, [0, 0.5, 1], [2.5, 3.5, 2.5])])
    qd = np.column_stack([1.5 * np.sin(2 * np.pi * t), np.zeros_like(t)])
    qdd = np.zeros_like(q)
    limits = {
        "position": np.array([[-2.0, 2.0], [0.0, 4.0]]),
        "velocity": np.array([3.0, np.inf]),
        "acceleration": np.array([1.0, 1.0]),
        "torque": np.array([np.inf, np.inf]),
    }
    rows = limit_usage(q, qd, qdd, limits)
    assert rows[0]["position_pct"] == pytest.approx(50.0) and rows[0]["margin"] == pytest.approx(1.0)
    # asymmetric: excursion 1.5 above the middle 2 of a half range 2 -> 75 %, 0.5 from the upper limit
    assert rows[1]["position_pct"] == pytest.approx(75.0) and rows[1]["margin"] == pytest.approx(0.5)
    assert rows[0]["velocity_pct"] == pytest.approx(50.0, rel=1e-4)
    assert rows[1]["velocity_pct"] is None and rows[1]["velocity_limit"] is None


def test_amplitude_spectrum_of_sines():
    n, T = 1000, 10.0
    t = np.arange(n) * T / n
    x = 2.0 + 3.0 * np.sin(2 * np.pi * 5 * t / T) + 0.5 * np.cos(2 * np.pi * 12 * t / T)
    f, a = amplitude_spectrum(x[:, None], n / T, periodic=True)
    assert a[0, 0] == pytest.approx(2.0) and a[5, 0] == pytest.approx(3.0) and a[12, 0] == pytest.approx(0.5)
    assert f[5] == pytest.approx(0.5)
    # windowed path: a bin-centred sine keeps its amplitude (coherent gain corrected)
    _, a2 = amplitude_spectrum((3.0 * np.sin(2 * np.pi * 50 * np.arange(4000) / 4000))[:, None], 400.0, False)
    assert np.max(a2) == pytest.approx(3.0, rel=2e-3)


def test_band_coverage_counts_only_used_rows():
    m = np.array([[0.0], [1.0], [5.0], [9.0]])
    mask = np.array([[True], [True], [True], [False]])
    assert band_coverage(m, m - 1, np.array([[1.0], [2.0], [4.0], [0.0]]), mask)[0] == pytest.approx(200 / 3)


@pytest.mark.parametrize("dof", [1, 2, 3, 6, 7, 9])
def test_joint_groups_cover_every_joint_once(dof):
    groups = joint_groups(dof)
    assert sorted(j for g in groups for j in g) == list(range(dof))
    assert max(len(g) for g in groups) <= 3


def test_friction_band_matches_monte_carlo():
    names = ["fv_J1", "fc_J1", "f0_J1"]
    values = np.array([2.0, 5.0, 0.3])
    a = np.array([[0.3, 0.1, 0.0], [0.1, 0.5, 0.05], [0.0, 0.05, 0.2]])
    cov = a @ a.T
    qd = np.array([-2.0, -0.5, 0.5, 3.0])
    curve = friction_curve(qd, ["fv", "fc", "f0"], "J1", names, values, cov, np.array([1.0, 4.0, 0.0]), {})
    assert curve.identified == pytest.approx(2.0 * qd + 5.0 * np.sign(qd) + 0.3)
    assert curve.nominal == pytest.approx(1.0 * qd + 4.0 * np.sign(qd))
    draws = np.random.default_rng(0).multivariate_normal(values, cov, size=200_000)
    mc = draws[:, 0][:, None] * qd + draws[:, 1][:, None] * np.sign(qd) + draws[:, 2][:, None]
    assert curve.std == pytest.approx(mc.std(axis=0), rel=0.02)


def test_compensator_curve_equals_inverse_dynamics_difference():
    robot = robid.load_robot("tx200_3axis")
    base = robot.base_parameters()
    j = robot.joint_names.index("J2")
    cols, base_idx = compensator_columns(robot, base.names, base.expressions, j)
    assert [robot.parameter_names[c] for c in cols] == ["comp_k_J2", "comp_kl0_J2"]
    values = base.values(robot.parameters)
    grid = np.linspace(-0.4, 2.5, 25)
    q_ref = np.array([0.3, 0.0, -1.0])
    curve = compensator_curve(robot, j, grid, q_ref, cols, base_idx, values, np.eye(len(values)) * 0.0, {})
    # independent route: nominal inverse dynamics at rest with and without the compensator parameters
    q = np.tile(q_ref, (grid.size, 1))
    q[:, j] = grid
    zero = np.zeros_like(q)
    p0 = robot.parameters.copy()
    p0[cols] = 0.0
    expected = robot.inverse_dynamics(q, zero, zero)[:, j] - robot.inverse_dynamics(q, zero, zero, p0)[:, j]
    assert curve.nominal == pytest.approx(expected, rel=1e-9, abs=1e-9 * np.max(np.abs(expected)))
    assert curve.identified == pytest.approx(expected, rel=1e-9, abs=1e-9 * np.max(np.abs(expected)))
    assert np.max(np.abs(expected)) > 100.0  # the spring does work over this range


def test_merged_spectrum_bins_keep_every_peak():
    freq = np.arange(10_001) * 0.01
    spec = np.full((freq.size, 2), 1e-3)
    spec[4321, 0], spec[77, 1] = 5.0, 2.0
    f, merged = merge_bins(freq, spec, 1000)
    assert f.size <= 1000 and merged.shape == (f.size, 2)
    assert merged[:, 0].max() == 5.0 and merged[:, 1].max() == 2.0
    k = int(np.argmax(merged[:, 0]))
    assert f[k] <= freq[4321] < f[k + 1]  # the peak stays in the bin group that holds its frequency


def test_standalone_parameters_ignore_whitespace_and_grouped_ones():
    names = ["fv_J1", "fc_J1", "f0_J1", "comp_k_J1", "comp_k_J11"]
    expressions = [" fv_J1 ", "fc_J1 + 2*fc_J2", "f0_J1", "comp_k_J1", "comp_k_J11"]
    assert standalone_parameters(names, expressions, "J1", "friction") == [0, 2]
    assert standalone_parameters(names, expressions, "J1", "compensator") == [3]


def test_references_bad_input_names_the_field(tmp_path):
    names = ["m1", "m2"]
    ref = normalise_references({"truth": {"m1": 1.0}}, names)["truth"]
    assert ref[0] == 1.0 and np.isnan(ref[1])  # NaN where the reference has no value
    with pytest.raises(RobidInputError, match="truth: 3 values for 2"):
        normalise_references({"truth": [1, 2, 3]}, names)
    with pytest.raises(RobidInputError, match="not base parameters of this result: zz"):
        normalise_references({"truth": {"zz": 1.0}}, names)
    robot = robid.load_robot("tx200_3axis")
    bad = tmp_path / "t.json"
    bad.write_text('{"base_parameters": [{"name": "Izz_J1"}]}')
    with pytest.raises(RobidInputError, match="t.json: base_parameters"):
        read_truth_file(bad, robot)


def test_number_format():
    assert num(None) == "\u2013" and num(math.nan) == "\u2013"
    assert num(-1234.5678) == "\u22121235" and num(0.000123456, 3) == "0.000123" and num(0) == "0"


def test_parameter_units_by_kind_and_joint_type():
    """Units by dimensional analysis of each term: tau = m g x (first moment kg m -> N m needs m/s^2), tau =
    I qdd (kg m^2 rad/s^2), tau = fv qd (N m s/rad), tau = k (theta - q) (N m/rad); along a prismatic joint the
    same terms give forces (kg, N s/m, N, N/m). Compensators as docs/compensator.md states them."""
    from types import SimpleNamespace

    from robid.report._compute import parameter_unit

    robot = SimpleNamespace(
        model=SimpleNamespace(
            joints=[SimpleNamespace(name="J1", revolute=True), SimpleNamespace(name="J11", revolute=False)]
        )
    )
    expected = {
        "m_J1": "kg", "mx_J1": "kg m", "Ixy_J1": "kg m\u00b2", "Izz_J11": "kg m\u00b2", "Ia_J1": "kg m\u00b2",
        "Ia_J11": "kg", "fv_J1": "N m s/rad", "fv_J11": "N s/m", "fc_J1": "N m", "f0_J11": "N", "k_J1": "N m/rad",
        "k_J11": "N/m", "d_J1": "N m s/rad", "fl_J1": "N m s/rad", "Iam_J1": "kg m\u00b2", "fcm_J1": "N m",
        "comp_k_J1": "N/m", "comp_kl0_J1": "N", "comp_p0_J1": "Pa", "comp_b3_J1": "N m", "comp_b1_J11": "N",
        "mystery_J1": "", "m_J2": "",
    }
    assert {n: parameter_unit(n, robot) for n in expected} == expected


def test_every_base_parameter_of_a_robot_has_a_unit():
    from robid.report._compute import parameter_unit

    robot = robid.load_robot("tx200_3axis")
    units = {n: parameter_unit(n, robot) for n in robot.base_parameters().names}
    assert all(units.values()), units
    # a grouped base parameter takes the unit of the standard parameter it is named after
    assert units["Izz_J1"] == "kg m\u00b2" and units["mx_J2"] == "kg m" and units["comp_k_J2"] == "N/m"


def _run(mode: str, n_periods: int):
    from types import SimpleNamespace

    display = SimpleNamespace(t=(0.0, 0.5, 1.0), t0=12.0)
    return SimpleNamespace(mode=mode, n_periods=n_periods, display=display)


@pytest.mark.parametrize(
    ("mode", "n_periods", "start", "words"),
    [
        ("periodic", 5, 0.0, "averaged over 5 periods"),
        ("periodic", 1, 12.0, "time in the record: one period (not averaged)"),
        ("periodic-samples", 4, 12.0, "4 whole periods, every sample (not averaged)"),
        ("rest-to-rest", 1, 12.0, "rest-to-rest run (not averaged)"),
        ("nonperiodic", 0, 12.0, "time in the record (not averaged)"),
    ],
)
def test_time_axis_says_what_the_run_is(mode, n_periods, start, words):
    from robid.report.sections.torque import run_time

    t, label = run_time(_run(mode, n_periods))
    assert words in label and label.endswith("[s]")
    assert ("averaged period" in label or "averaged over" in label) == (mode == "periodic" and n_periods > 1)
    assert t[0] == start and t[-1] == start + 1.0  # a run that was not averaged keeps the record's own time


def test_speed_thresholds_get_their_unit():
    from types import SimpleNamespace

    from robid.report.sections.data_quality import with_speed_units

    def robot(*revolute):
        return SimpleNamespace(model=SimpleNamespace(joints=[SimpleNamespace(revolute=r) for r in revolute]))

    lines = ["near-zero velocity (|qd| < 0.2) marked unused per joint: 3, 4 of 100 samples",
             "rows identification uses (|qd| >= 5e-2 by the hard band's velocity)", "already (|qd| < 0.2 rad/s)"]
    out = with_speed_units(lines, robot(True, True))
    assert out == ["near-zero velocity (|qd| < 0.2 rad/s) marked unused per joint: 3, 4 of 100 samples",
                   "rows identification uses (|qd| >= 5e-2 rad/s by the hard band's velocity)",
                   "already (|qd| < 0.2 rad/s)"]
    assert "(|qd| < 0.2 m/s)" in with_speed_units(lines, robot(False))[0]
    assert "(|qd| < 0.2 rad/s (m/s for prismatic joints))" in with_speed_units(lines, robot(True, False))[0]


@pytest.mark.parametrize(
    ("nrmse", "coverage", "level"),
    [(2.0, 95.0, "good"), (2.0, 67.5, "warn"), (2.0, 90.0, "good"), (2.0, None, "good"), (7.0, 99.0, "warn"),
     (7.0, 50.0, "warn"), (12.0, 99.0, "bad"), (None, 95.0, "info")],
)
def test_fit_level_needs_the_band_coverage_for_good(nrmse, coverage, level):
    from robid.report import VerdictThresholds
    from robid.report.sections.summary import fit_level

    assert fit_level(nrmse, coverage, VerdictThresholds()) == level
