"""``robid export --motor-side``: programs that command an elastic robot's motor-side reference theta.

References, none produced by the code under test:
* the Do planar 2R (``do_2r_elastic``, undamped springs): theta - q = K^-1 (tau_rigid + D_l qd) with tau_rigid from
  the virtual robot's own numeric Newton-Euler (robid.simulation.rnea, which shares nothing with the generated code),
  on the design itself and on the faded timeline of a periodic design (its envelope derivatives written out here);
* the KR300 (``kr_heavy``, damped springs, counterbalance, 6 axes for URScript): the values of
  robid.elastic.motor_reference.motor_reference at the program's own samples, read from the program text with the
  regular expressions below.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from numpy.polynomial import Polynomial

from robid.cli import main
from robid.elastic.motor_reference import motor_reference
from robid.elastic.program_reference import MotorSidePath
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.programs import ProgramOptions, export_program
from robid.excitation.programs.parse_back import parse_program, verify_program
from robid.excitation.trajectory_file import TrajectoryFile, load_trajectory, save_trajectory
from robid.model.loader import read_robot
from robid.simulation.rnea import RigidBodyDynamics

SUFFIX = {"csv": ".csv", "krl": ".src", "rapid": ".mod", "urscript": ".script"}
HALF_DIGIT_DEG = 0.5e-6 * 1.02  # KRL/RAPID print 6 decimals of a degree (+ the 1e-9 deg block repetition tolerance)


def design(model, center_deg, period, rest_order, usage, seed=3, harmonics=5) -> FourierTrajectory:
    """A design for ``model`` using ``usage`` of its tightest position, velocity or acceleration limit."""
    limits = JointLimitSet.from_model(model)
    rng = np.random.default_rng(seed)
    ls = np.arange(1, harmonics + 1)
    dof, center = model.dof, np.deg2rad(center_deg)
    a, b = rng.standard_normal((dof, harmonics)) / ls, rng.standard_normal((dof, harmonics)) / ls
    traj = FourierTrajectory(period, center, a, b, rest_order, tuple(model.joint_names)).project_rest()
    t = np.linspace(0.0, period, 4001)
    q, qd, qdd = traj.evaluate(t, 2)
    room = np.minimum(limits.position[:, 1] - center, center - limits.position[:, 0])
    ratio = max(
        np.max(np.abs(q - center).max(0) / room),
        np.max(np.abs(qd).max(0) / limits.velocity),
        np.max(np.abs(qdd).max(0) / limits.acceleration),
    )
    return traj.with_coefficients(traj.coefficients() * usage / ratio)


def trajectory_file(path, model, traj, robot: str | None, limits: JointLimitSet | None = None):
    tf = TrajectoryFile(traj, limits or JointLimitSet.from_model(model), 0.05, (), {"robot": robot} if robot else {})
    save_trajectory(path, tf)
    return path


@pytest.fixture(scope="module")
def do2r():
    return read_robot("do_2r_elastic")


@pytest.fixture(scope="module")
def kr():
    return read_robot("kr_heavy")


@pytest.fixture(scope="module")
def do2r_traj(do2r):
    return design(do2r, [-30.0, 60.0], 4.0, 4, 0.5)


@pytest.fixture(scope="module")
def kr_traj(kr):
    return design(kr, [0.0, -90.0, 90.0, 0.0, 30.0, 0.0], 8.0, 4, 0.5)


def export(traj_path, fmt, out, *extra) -> int:
    return main(["export", str(traj_path), "--format", fmt, "--out", str(out), *extra])


def point_list(out, fmt) -> tuple[np.ndarray, float, int]:
    """The commanded points (deg, as printed), their spacing and the number of repetitions of a KRL or RAPID
    program."""
    if fmt == "krl":
        dat, src = out.with_suffix(".dat").read_text(), out.read_text()
        rows = re.findall(r"^XP\[\d+\]=\{([^}]*)\}", dat, re.M)
        points = np.array([[float(v) for v in re.findall(r"A\d\s+([-0-9.]+)", r)] for r in rows])
        dt = float(re.search(r"dt=([0-9.eE+-]+)", dat).group(1))
        return points, dt, int(re.search(r"FOR K=1 TO (\d+)", src).group(1))
    mod = out.read_text()
    body = re.search(r"CONST jointtarget JP\{\d+\} := \[(.*?)\];", mod, re.S).group(1)
    points = np.array([[float(v) for v in r.split(",")] for r in re.findall(r"\[\[([^\]]*)\]", body)])
    dt = float(re.search(r"CONST num DT := ([0-9.]+);", mod).group(1))
    return points, dt, int(re.search(r"CONST num NPER := (\d+);", mod).group(1))


def csv_rows(out) -> np.ndarray:
    """The data rows of a CSV export (after its # comment lines and the column header)."""
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert lines[0].startswith("t,q1,")
    return np.loadtxt(lines[1:], delimiter=",", ndmin=2)


def with_time_constant(model, seconds: float):
    """``model`` with the spring damping D_s = seconds * K on every elastic joint."""
    joints = tuple(
        j
        if j.elasticity is None
        else dataclasses.replace(
            j, elasticity=dataclasses.replace(j.elasticity, damping=seconds * j.elasticity.stiffness)
        )
        for j in model.joints
    )
    return dataclasses.replace(model, joints=joints)


def spring(model):
    return (np.array([getattr(j.elasticity, f) for j in model.joints]) for f in ("stiffness", "link_viscous"))


# ---- what the program states -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csv", "krl", "rapid", "urscript"])
def test_header_states_the_motor_side_reference(fmt, do2r, do2r_traj, kr, kr_traj, tmp_path, capsys):
    model, traj, robot = (kr, kr_traj, "kr_heavy") if fmt == "urscript" else (do2r, do2r_traj, "do_2r_elastic")
    path = trajectory_file(tmp_path / "traj.json", model, traj, robot)
    out = tmp_path / f"exc{SUFFIX[fmt]}"
    assert export(path, fmt, out, "--motor-side") == 0, capsys.readouterr().err
    assert "motor-side positions of " + robot in capsys.readouterr().out
    text = out.with_suffix(".dat").read_text() if fmt == "krl" else out.read_text()
    head = text[: text.index("robid-program:")]
    assert "MOTOR-SIDE REFERENCE" in head and "theta = q + K^-1 tau_link" in head and "not q" in head
    first = "A1 K 4.5778e+06, D_s 3200" if fmt == "urscript" else "J1 K 2000, D_s 0; J2 K 1600, D_s 0"
    assert f"robot {model.name} ({robot})" in head and first in head
    assert "max deflection |theta - q| per joint" in head
    assert re.search(r"robid-program: [^\n]*commanded=motor-side", text)
    assert "MOTOR-SIDE REFERENCE" in "".join(text.splitlines(keepends=True)[:5])  # at the top of the header
    with pytest.raises(ValueError, match="motor-side"):  # a motor-side program is not verified against the link path
        verify_program(out, load_trajectory(path), fmt)


# ---- what the program commands -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["krl", "rapid"])
@pytest.mark.parametrize("robot", ["do_2r_elastic", "kr_heavy"])
def test_point_lists_command_the_motor_reference(fmt, robot, do2r, do2r_traj, kr, kr_traj, tmp_path):
    model, traj = (do2r, do2r_traj) if robot == "do_2r_elastic" else (kr, kr_traj)
    path = trajectory_file(tmp_path / "traj.json", model, traj, robot)
    out = tmp_path / f"exc{SUFFIX[fmt]}"
    assert export(path, fmt, out, "--motor-side", "--periods", "2") == 0
    points, dt, blocks = point_list(out, fmt)
    points = points[:, : model.dof]
    assert blocks == 2 and dt * (len(points) - 1) == pytest.approx(traj.period)  # one period, repeated
    t = np.arange(len(points)) * dt
    for k in range(blocks):  # every repetition is the reference of its period, from standstill
        ref = motor_reference(model, traj, t=t + k * traj.period, periods=2)
        np.testing.assert_allclose(points, np.rad2deg(ref.theta), rtol=0, atol=HALF_DIGIT_DEG)
    link = np.rad2deg(traj.derivative(t))
    assert np.max(np.abs(points - link)) > 1e-3  # the deflection is visible in the printed digits
    check = verify_program(out, load_trajectory(path), fmt, MotorSidePath(robot, traj))
    assert check.ok, check.summary()


def test_slow_springs_make_one_block_and_are_told_not_settled(do2r, do2r_traj, tmp_path):
    """With D_s / K = 0.1 s the motor lags the link by a memory of the last period's motion: every period starts
    from another deflection, so the periods are written as one block, and the motors have not settled at the
    end (the controller holds the last value): a warning."""
    model = with_time_constant(do2r, 0.1)
    commanded = MotorSidePath(model, do2r_traj, "do_2r_elastic + D_s")
    tf = TrajectoryFile(do2r_traj, JointLimitSet.from_model(do2r), 0.05, (), {})
    out = tmp_path / "slow.src"
    assert export_program(tf, "krl", out, ProgramOptions(periods=2, commanded=commanded)).check.ok
    points, dt, blocks = point_list(out, "krl")
    assert blocks == 1 and dt * (len(points) - 1) == pytest.approx(2 * do2r_traj.period)
    ref = motor_reference(model, do2r_traj, t=np.arange(len(points)) * dt, periods=2)
    np.testing.assert_allclose(points[:, :2], np.rad2deg(ref.theta), rtol=0, atol=HALF_DIGIT_DEG)
    n = (len(points) - 1) // 2
    assert np.max(np.abs(points[n:] - points[: n + 1])) > 1e-3  # the second period differs in the printed digits
    assert any("have not settled when the program ends (t = 8 s)" in w for w in commanded.warnings)
    assert "motor-side warning: the motors have not settled" in out.read_text()


def test_csv_columns_are_theta_and_its_rates(do2r, do2r_traj, tmp_path):
    path = trajectory_file(tmp_path / "traj.json", do2r, do2r_traj, "do_2r_elastic")
    out = tmp_path / "exc.csv"
    assert export(path, "csv", out, "--motor-side", "--periods", "2", "--rate", "100") == 0
    data = csv_rows(out)
    t, theta, thetad, thetadd = data[:, 0], data[:, 1:3], data[:, 3:5], data[:, 5:7]
    assert data.shape == (800, 7)
    ref = motor_reference(do2r, do2r_traj, t=t, periods=2)
    for column, exact in ((theta, ref.theta), (thetad, ref.thetad), (thetadd, ref.thetadd)):
        np.testing.assert_allclose(column, exact, rtol=1e-11, atol=1e-12 * np.abs(exact).max())
    assert parse_program(out, "csv").q.shape == (800, 2)


def test_deflection_is_the_inverse_stiffness_times_the_link_torque(do2r, do2r_traj, tmp_path):
    """Undamped springs: theta - q = K^-1 (M qdd + C qd + G + D_l qd), the link torque of an independent
    Newton-Euler; non-zero under gravity, at rest too."""
    path = trajectory_file(tmp_path / "traj.json", do2r, do2r_traj, "do_2r_elastic")
    out = tmp_path / "exc.csv"
    assert export(path, "csv", out, "--motor-side") == 0
    data = csv_rows(out)
    q, qd, qdd = do2r_traj.evaluate(data[:, 0], 2)
    k, dl = spring(do2r)
    tau = RigidBodyDynamics(do2r).inverse_dynamics(q, qd, qdd) + dl * qd
    np.testing.assert_allclose(data[:, 1:3] - q, tau / k, rtol=0, atol=1e-11)
    assert np.all(np.abs(tau[0] / k) > 1e-3)  # at standstill: K^-1 G(q0)
    assert np.abs(data[:, 1:3] - q).max() > 1e-2


@pytest.mark.parametrize("time_constant", [None, 0.05])
def test_urscript_targets_are_the_motor_reference(time_constant, kr, kr_traj, tmp_path):
    """The built-in KR300 (D_s / K < 1 ms), and with D_s / K = 50 ms: the decay from the standstill deflection
    lasts several ticks."""
    out = tmp_path / "exc.script"
    if time_constant is None:
        model = kr
        path = trajectory_file(tmp_path / "traj.json", kr, kr_traj, "kr_heavy")
        assert export(path, "urscript", out, "--motor-side", "--periods", "2") == 0
    else:
        model = with_time_constant(kr, time_constant)
        tf = TrajectoryFile(kr_traj, JointLimitSet.from_model(kr), 0.05, (), {})
        export_program(tf, "urscript", out, ProgramOptions(periods=2, commanded=MotorSidePath(model, kr_traj)))
    motion = parse_program(out, "urscript")
    ref = motor_reference(model, kr_traj, t=motion.t, periods=2)
    # the script's series drops deflection harmonics summing to <= 1e-10 rad (stated in its header)
    assert "sum to <= 1e-10 rad" in out.read_text()
    np.testing.assert_allclose(motion.q, ref.theta, rtol=0, atol=2e-10)
    np.testing.assert_allclose(motion.start, ref.theta[0], rtol=0, atol=2e-10)
    deflection = np.abs(motion.q - kr_traj.derivative(motion.t)).max(axis=0)
    assert np.all(deflection[1:3] > 1e-4) and np.all(deflection[3:] < 1e-12)  # A2, A3 under gravity; A4-A6 rigid


def test_periodic_design_fades_through_the_time_domain_reference(do2r, tmp_path):
    """The faded timeline p = c + e(t) (q - c) of a periodic design, with e the C4 smoothstep of the fades."""
    traj = design(do2r, [-30.0, 60.0], 4.0, None, 0.4, seed=5)
    path = trajectory_file(tmp_path / "traj.json", do2r, traj, "do_2r_elastic")
    out = tmp_path / "exc.src"
    assert export(path, "krl", out, "--motor-side") == 0
    points, dt, blocks = point_list(out, "krl")
    assert blocks == 1
    t = np.arange(len(points)) * dt
    ramp, total = traj.period, 3 * traj.period
    e = Polynomial([0, 0, 0, 0, 0, 126, -420, 540, -315, 70])

    def envelope(k):
        u_in, u_out = np.clip(t / ramp, 0, 1), np.clip((total - t) / ramp, 0, 1)
        fade_in, fade_out = t < ramp, t > total - ramp
        value = np.where(fade_in, e.deriv(k)(u_in) / ramp**k if k else e(u_in), 1.0 if k == 0 else 0.0)
        return np.where(fade_out, (-1) ** k * (e.deriv(k)(u_out) if k else e(u_out)) / ramp**k, value)

    dq = [traj.derivative(t, k) - (traj.center if k == 0 else 0.0) for k in range(3)]
    p = [traj.center + envelope(0)[:, None] * dq[0]]
    p.append(envelope(1)[:, None] * dq[0] + envelope(0)[:, None] * dq[1])
    p.append(envelope(2)[:, None] * dq[0] + 2 * envelope(1)[:, None] * dq[1] + envelope(0)[:, None] * dq[2])
    k, dl = spring(do2r)
    theta = p[0] + (RigidBodyDynamics(do2r).inverse_dynamics(*p) + dl * p[1]) / k
    np.testing.assert_allclose(points[:, :2], np.rad2deg(theta), rtol=0, atol=HALF_DIGIT_DEG)
    # the CSV file holds the excited periods: the periodic steady state
    assert export(path, "csv", tmp_path / "exc.csv", "--motor-side") == 0
    data = csv_rows(tmp_path / "exc.csv")
    q, qd, qdd = traj.evaluate(data[:, 0], 2)
    theta = q + (RigidBodyDynamics(do2r).inverse_dynamics(q, qd, qdd) + dl * qd) / k
    np.testing.assert_allclose(data[:, 1:3], theta, rtol=0, atol=1e-11)


def test_urscript_of_a_periodic_design_is_refused(kr, tmp_path, capsys):
    traj = design(kr, [0.0, -90.0, 90.0, 0.0, 30.0, 0.0], 8.0, None, 0.4)
    path = trajectory_file(tmp_path / "traj.json", kr, traj, "kr_heavy")
    assert export(path, "urscript", tmp_path / "x.script", "--motor-side") == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: ") and err.count("\n") == 1 and "fade" in err and "rest-to-rest" in err
    assert not (tmp_path / "x.script").exists()


# ---- refusals and warnings ---------------------------------------------------------------------------------------
def test_a_rigid_robot_is_refused(kr_traj, kr, tmp_path, capsys):
    path = trajectory_file(tmp_path / "traj.json", kr, kr_traj, "kr_heavy")
    out = tmp_path / "x.csv"
    assert export(path, "csv", out, "--motor-side", "--robot", "ur10e") == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: --motor-side: robot ur10e: no elastic joint") and err.count("\n") == 1
    assert not out.exists()


def test_the_robot_comes_from_the_option_or_the_design(do2r, do2r_traj, tmp_path, capsys):
    named = trajectory_file(tmp_path / "named.json", do2r, do2r_traj, "do_2r_elastic")
    anonymous = trajectory_file(tmp_path / "anonymous.json", do2r, do2r_traj, None)
    assert export(anonymous, "csv", tmp_path / "a.csv", "--motor-side") == 2
    assert "names no robot" in capsys.readouterr().err
    assert export(anonymous, "csv", tmp_path / "a.csv", "--motor-side", "--robot", "do_2r_elastic") == 0
    assert export(named, "csv", tmp_path / "b.csv", "--motor-side") == 0
    np.testing.assert_array_equal(csv_rows(tmp_path / "a.csv"), csv_rows(tmp_path / "b.csv"))
    assert "robot do-2r-elastic (do_2r_elastic)" in (tmp_path / "a.csv").read_text()
    assert export(named, "csv", tmp_path / "c.csv", "--robot", "do_2r_elastic") == 2
    assert "only used with --motor-side" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["csv", "krl", "urscript"])
def test_the_safety_check_sees_the_motor_side_positions(fmt, do2r, do2r_traj, kr, kr_traj, tmp_path, capsys):
    """A position limit between the link path's peak and the motor path's peak: the link program passes, the
    motor-side program is refused and nothing is written."""
    model, traj, robot = (kr, kr_traj, "kr_heavy") if fmt == "urscript" else (do2r, do2r_traj, "do_2r_elastic")
    free = trajectory_file(tmp_path / "free.json", model, traj, robot)
    out = tmp_path / f"m{SUFFIX[fmt]}"
    assert export(free, fmt, out, "--motor-side") == 0
    motor = parse_program(out, fmt).q
    t = np.linspace(0.0, traj.period, 20001)
    link = traj.derivative(t)
    above, below = motor.max(0) - link.max(0), link.min(0) - motor.min(0)
    j = int(np.argmax(np.maximum(above, below)))
    assert max(above[j], below[j]) > 1e-4
    limits = JointLimitSet.from_model(model)
    position = limits.position.copy()
    if above[j] >= below[j]:
        position[j, 1] = 0.5 * (link[:, j].max() + motor[:, j].max())
    else:
        position[j, 0] = 0.5 * (link[:, j].min() + motor[:, j].min())
    tight = JointLimitSet(position, limits.velocity, limits.acceleration, limits.jerk, limits.torque)
    tightened = trajectory_file(tmp_path / "tight.json", model, traj, robot, tight)
    assert export(tightened, fmt, tmp_path / f"l{SUFFIX[fmt]}") == 0  # the link path fits
    capsys.readouterr()
    assert export(tightened, fmt, tmp_path / f"x{SUFFIX[fmt]}", "--motor-side") == 2
    err = capsys.readouterr().err
    name = model.joint_names[j]
    assert "(motor-side positions) would violate limits" in err and f"position {name}" in err
    assert not (tmp_path / f"x{SUFFIX[fmt]}").exists()


def test_reference_warnings_go_to_stderr_and_the_header(do2r, tmp_path, capsys):
    """A C3 design on undamped springs: the feed-forward motor torque steps at the start and end (motor_reference's
    warning), told on stderr and in the program."""
    traj = design(do2r, [-30.0, 60.0], 4.0, 3, 0.5)
    assert traj.continuity_order() == 3
    path = trajectory_file(tmp_path / "traj.json", do2r, traj, "do_2r_elastic")
    out = tmp_path / "exc.csv"
    assert export(path, "csv", out, "--motor-side") == 0
    err = capsys.readouterr().err
    assert "robid: warning: motor-side: trajectory: the link path is C3" in err
    assert "# motor-side warning: trajectory: the link path is C3" in out.read_text()


def test_python_api_matches_the_command_line(do2r, do2r_traj, tmp_path):
    path = trajectory_file(tmp_path / "traj.json", do2r, do2r_traj, "do_2r_elastic")
    assert export(path, "rapid", tmp_path / "cli.mod", "--motor-side") == 0
    commanded = MotorSidePath("do_2r_elastic", do2r_traj)
    result = export_program(load_trajectory(path), "rapid", tmp_path / "cli2.mod", ProgramOptions(commanded=commanded))
    assert result.check.ok and result.rate == 10.0
    text = (tmp_path / "cli.mod").read_text().replace("MODULE cli\n", "MODULE cli2\n")
    assert text == (tmp_path / "cli2.mod").read_text()
