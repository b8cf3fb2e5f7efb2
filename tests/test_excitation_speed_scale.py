"""A first run at reduced speed (issue 33): every exported program can run the design at a fraction s of its speed on
the same path; it states the peak joint speeds and the tool speed it commands, and the parse-back verifies on the
executed motion that it commands at most s of the design's joint speeds and s^2 of its accelerations, and never a
limit violated."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_excitation_programs import LIMITS, SUFFIX, _trajectory

from robid.excitation.programs import FORMATS, ProgramOptions, export_program
from robid.excitation.programs.parse_back import parse_program
from robid.excitation.programs.speed import FIRST_RUN_SCALE, slowed, timeline_peaks
from robid.excitation.trajectory_file import TrajectoryFile


@pytest.fixture(scope="module")
def rest_file():
    return TrajectoryFile(_trajectory(4, usage=0.9), LIMITS, 0.05, (), {"robot": "ur10e", "criterion": "cond"})


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 1.0), st.floats(0.0, 1.0))
def test_a_slowed_design_is_the_same_path_in_stretched_time(scale, phase):
    """q_s(t / s) = q(t), qd_s = s qd, qdd_s = s^2 qdd at the same poses (closed form of the Swevers series)."""
    tf = TrajectoryFile(_trajectory(4), LIMITS, 0.05, (), {})
    slow = slowed(tf, scale).trajectory
    t = np.array([phase * tf.trajectory.period])
    for order, factor in ((0, 1.0), (1, scale), (2, scale**2), (3, scale**3)):
        np.testing.assert_allclose(slow.derivative(t / scale, order), factor * tf.trajectory.derivative(t, order),
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_first_run_program_commands_a_tenth_of_the_speed_and_says_so(fmt, rest_file, tmp_path):
    out = tmp_path / f"first_run{SUFFIX[fmt]}"
    result = export_program(rest_file, fmt, out, ProgramOptions(speed_scale=FIRST_RUN_SCALE))
    assert result.check.ok, result.check.summary()
    scaled = [i for i in result.check.items if "scale" in i.quantity]
    assert len(scaled) == 2 * rest_file.trajectory.dof and all(i.ok for i in scaled)
    # independently of the check: the executed motion parsed back against the design's own peaks
    motion = parse_program(out, fmt)
    qd, qdd = timeline_peaks(rest_file)
    executed_qd = np.max(np.abs(motion.qd), axis=0)
    executed_qdd = np.max(np.abs(motion.qdd), axis=0)
    print(f"{fmt}: executed / design speed {np.round(executed_qd / qd, 4)}, acceleration "
          f"{np.round(executed_qdd / qdd, 5)}")
    assert np.all(executed_qd <= 0.1 * qd * 1.01) and np.all(executed_qdd <= 0.01 * qdd * 1.01)
    assert np.all(executed_qd >= 0.1 * qd * 0.95)  # the path is the design's: the speeds are a tenth, not less
    assert np.all(np.abs(motion.qd) <= LIMITS.velocity * (1 + 1e-9))
    if fmt == "csv":  # a sampled file: its speeds are its qd columns, no comment block
        return
    text = out.read_text()
    assert "speed scale 0.1 of the design (a first run at reduced speed)" in text
    line = next(x for x in text.splitlines() if "max joint speeds commanded:" in x)
    stated = [float(v) for v in re.findall(r"q\d ([-\d.e+]+) rad/s", line)]
    assert len(stated) == rest_file.trajectory.dof
    np.testing.assert_allclose(stated, 0.1 * qd, rtol=2e-3)  # the program states what it commands
    assert re.search(r"max Cartesian speed of the origin of .*: [\d.]+ m/s", text)


def test_the_full_speed_program_states_its_speeds_too(rest_file, tmp_path):
    out = tmp_path / "full.script"
    export_program(rest_file, "urscript", out, ProgramOptions())
    text = out.read_text()
    assert "speed scale 1: the design's full speed" in text and "max joint speeds commanded: q1 " in text


def test_a_scale_outside_0_1_is_refused(rest_file, tmp_path, capsys):
    from robid.errors import RobidInputError

    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(RobidInputError, match="^speed_scale: "):  # the command line words it --speed-scale
            export_program(rest_file, "csv", tmp_path / "x.csv", ProgramOptions(speed_scale=bad))
    # the command line words the library's field as its flag (robid.requests.Where)
    from robid.cli import main
    from robid.excitation.trajectory_file import save_trajectory

    save_trajectory(tmp_path / "t.json", rest_file)
    assert main(["export", str(tmp_path / "t.json"), "--format", "csv", "--out", str(tmp_path / "x.csv"),
                 "--speed-scale", "1.5"]) == 2
    assert capsys.readouterr().err.startswith("robid: error: --speed-scale: ")
