"""robid.progress: the library is silent, the CLI prints step lines (-q: none, -v: debug lines too) and draws bars
only on a terminal."""

from __future__ import annotations

import io
import logging
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from robid import progress
from robid.cli import main
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile, save_trajectory

DATA = Path(__file__).resolve().parent / "data"
PLANAR = DATA / "planar_2r.yaml"


def trajectory(dof=2, period=2.0):
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.normal(scale=0.2, size=(2, dof, 3))
    return FourierTrajectory(period, np.full(dof, 0.3), a, b, 4).project_rest()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A trajectory file and two short virtual-robot runs of the planar arm."""
    from robid.simulation import SensorSettings, simulate

    folder = tmp_path_factory.mktemp("progress")
    traj = folder / "traj.json"
    save_trajectory(traj, TrajectoryFile(trajectory(), JointLimitSet.create(2)))
    runs = []
    for seed in (1, 2):
        path = folder / f"run{seed}.csv"
        simulate(PLANAR, traj, periods=2, sensors=SensorSettings.with_noise_level("low"), seed=seed).write_csv(path)
        runs.append(path)
    return traj, runs


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ---- the library -------------------------------------------------------------------------------------------------
def test_the_library_is_silent_in_a_fresh_process(tmp_path):
    """Deriving a robot (a cache miss: the longest library step) prints nothing, on stdout or stderr."""
    code = f"import robid; robid.load_robot({str(PLANAR)!r}).base_parameters()"
    env = dict(os.environ, ROBID_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert (done.stdout, done.stderr) == ("", "")
    assert (tmp_path / "cache").is_dir()  # it did derive


def test_the_library_logs_but_prints_nothing(files, tmp_path, monkeypatch, capsys, caplog):
    """Identification and a cache-missing derivation in-process: nothing on stderr, the step lines go to logging
    for whoever configures it (here pytest's capture)."""
    import robid
    from robid.identification import identify

    traj, runs = files
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "cache"))
    with caplog.at_level(logging.DEBUG, logger="robid"):
        robot = robid.load_robot(PLANAR)
        record = identify(robot, [runs[0]], validation_files=[runs[1]])
    assert len(record.validation_data) == 1
    assert capsys.readouterr() == ("", "")
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("deriving the Newton-Euler regressor of planar-2r") for m in messages)
    assert any(m.startswith("identification:") and m.endswith("...") for m in messages)
    assert {r.name for r in caplog.records} >= {"robid.symbolic.derive", "robid.identification.identify"}
    assert all(r.name.startswith("robid") for r in caplog.records)


def test_bars_are_no_ops_in_library_use(monkeypatch):
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    with progress.bar(5, "x") as b:
        b.update()
        b.note("y")
    assert not b.enabled and sys.stderr.getvalue() == ""


# ---- the command line ----------------------------------------------------------------------------------------------
def test_the_cli_prints_step_lines_by_default_and_none_with_q(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "a"))
    assert main(["model", str(PLANAR)]) == 0
    out, err = capsys.readouterr()
    assert "robid: deriving the Newton-Euler regressor of planar-2r (2 joints) ..." in err
    assert "robid: generated code cached in" in err and "base parameters" in out
    quiet = (["-q", "model", str(PLANAR)], ["model", str(PLANAR), "-q"], ["--quiet", "model", str(PLANAR)])
    for n, argv in enumerate(quiet):
        monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / f"q{n}"))  # derives again: the lines would be there
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert err == "" and "base parameters" in out, argv
        assert (tmp_path / f"q{n}").is_dir()


def test_commands_without_step_lines_print_only_their_result_unless_v(tmp_path, monkeypatch, capsys):
    """robid modal (no step lines: its one-line errors stay alone on stderr) says nothing while deriving; -v
    shows the derivation."""
    for n, extra in enumerate(([], ["-v"])):
        monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / f"c{n}"))
        assert main([*extra, "modal", "do_2r_elastic", "--pose", "0.4,1.1"]) == 0
        out, err = capsys.readouterr()
        assert ("robid: deriving the Newton-Euler regressor of do-2r-elastic" in err) == bool(extra), err
        assert out and (tmp_path / f"c{n}").is_dir()


def test_the_cli_leaves_the_library_silent_afterwards(tmp_path, monkeypatch, capsys):
    import robid

    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "a"))
    assert main(["-v", "model", str(PLANAR)]) == 0
    assert "deriving" in capsys.readouterr().err
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "b"))
    robid.load_robot(PLANAR).base_parameters()  # derives again
    assert capsys.readouterr() == ("", "")
    assert logging.getLogger("robid").level == logging.NOTSET


def test_v_adds_debug_lines(files, tmp_path, capsys):
    _, runs = files
    argv = ["identify", str(PLANAR), str(runs[0]), "--validate", str(runs[1]), "--out", str(tmp_path / "r.json")]
    assert main(argv) == 0
    plain = capsys.readouterr().err
    assert "robid: identification: " in plain and ": done in " in plain
    assert "samples" not in plain  # the per-file lines are debug lines
    step = next(line for line in plain.splitlines() if line.startswith("robid: identification: 12 base parameters"))
    for verbose in (["-v", *argv], [*argv, "--verbose"]):
        assert main(verbose) == 0
        err = capsys.readouterr().err
        assert f"robid: identification: {runs[0]}: " in err and f"robid: identification: {runs[1]}: " in err
        assert step in err.splitlines()  # the step lines stay


def test_no_bar_and_no_carriage_return_when_stderr_is_not_a_terminal(files, tmp_path, capsys):
    traj, _ = files
    assert main(["simulate", str(PLANAR), str(traj), "--out", str(tmp_path / "m.csv")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "|" not in err and "%" not in err
    assert err.splitlines()[0].startswith("robid: simulating") and err.splitlines()[-1].endswith(" s")


def test_a_bar_on_a_terminal_shows_the_count(files, tmp_path, monkeypatch):
    traj, runs = files
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["simulate", str(PLANAR), str(traj), "--out", str(tmp_path / "m.csv")]) == 0
    text = terminal.getvalue()
    assert "\rsimulate:" in text and "/4.0 s" in text  # 2 periods of 2 s, simulated seconds done / total
    assert "robid: simulating" in text
    terminal.seek(0)
    terminal.truncate()
    assert main(["identify", str(PLANAR), *map(str, runs), "--out", str(tmp_path / "r.json")]) == 0
    text = terminal.getvalue()
    assert "identify: files:" in text and "0/2 files" in text and "2/2 files" in text
    # log lines written while the bar is open start on a line of their own
    assert all(line.startswith(("robid: ", "\r")) or not line for line in text.split("\n"))
    terminal.seek(0)
    terminal.truncate()
    assert main(["-q", "simulate", str(PLANAR), str(traj), "--out", str(tmp_path / "m.csv")]) == 0
    assert terminal.getvalue() == ""  # -q: no bar either


def test_bar_helper_counts_and_writes_log_lines_above_it(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress.cli_output(0):
        progress.show_steps()
        with progress.bar(3, "starts", "starts") as b:
            shown = b.enabled
            for _ in progress.iterate(range(2), "inner"):
                pass
            b.update(2)
            progress.report("a step line")
            b.note("best 1.5")
            b.update()
    text = terminal.getvalue()
    assert shown and not b.enabled and "2/3 starts" in text and "3/3 starts" in text
    assert "inner:" in text and "2/2" in text
    assert "robid: a step line\n" in text and "best 1.5" in text


def test_a_bar_on_a_pseudo_terminal(files, tmp_path):
    """The real thing: stderr a pseudo-terminal (of unknown size) in a fresh process."""
    pty = pytest.importorskip("pty")
    traj, _ = files
    code = (
        "import sys; from robid.cli import main; "
        f"sys.exit(main(['simulate', {str(PLANAR)!r}, {str(traj)!r}, '--out', {str(tmp_path / 'm.csv')!r}]))"
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        if select.select([master], [], [], 0.1)[0]:
            try:
                data = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait() == 0
    text = b"".join(chunks).decode(errors="replace")
    assert "\rsimulate:" in text and "/4.0 s" in text and "robid: simulating" in text


def test_the_earlier_callback_interface_still_works(tmp_path, monkeypatch, capsys):
    """progress.set_progress(callback) (scripts such as the benchmarks) receives the step lines until unset."""
    import robid

    lines: list[str] = []
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "a"))
    progress.set_progress(lines.append)
    try:
        robid.load_robot(PLANAR).base_parameters()
    finally:
        progress.set_progress(None)
    assert lines[0] == "deriving the Newton-Euler regressor of planar-2r (2 joints) ..."
    assert logging.getLogger("robid").level == logging.NOTSET and capsys.readouterr() == ("", "")
    count = len(lines)
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "b"))
    robid.load_robot(PLANAR).base_parameters()  # derives again, unheard
    assert len(lines) == count and capsys.readouterr() == ("", "")
