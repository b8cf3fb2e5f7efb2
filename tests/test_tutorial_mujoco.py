"""docs/tutorial-mujoco-ros2.md runs as written: its script records the two bags from MuJoCo, its five commands
identify, predict, report and export; the numbers the page quotes hold (the prediction of the check run against
the torques MuJoCo applied before the sensor noise: NRMSE 0.02-0.18 % per joint, below 0.3 % here)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import mujoco
import numpy as np
import pandas as pd

import robid
from robid.cli import main
from robid.io.measurement_file import read_measurement

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial-mujoco-ros2.md"
DATA = ROOT / "tests" / "data" / "mjcf"


def _block(marker: str) -> str:
    """The fenced code block that follows ``<!-- tutorial: marker -->`` on the page."""
    text = PAGE.read_text()
    match = re.search(rf"<!-- tutorial: {re.escape(marker)} -->\n```\w+\n(.*?)```", text, re.S)
    assert match, marker
    return match.group(1)


def test_the_tutorial_runs_as_written(tmp_path, monkeypatch):
    shutil.copy(DATA / "ur10e_arm.xml", tmp_path / "arm.xml")
    shutil.copy(DATA / "ur10e_ident_traj.json", tmp_path / "excite.json")
    shutil.copy(DATA / "ur10e_valid_traj.json", tmp_path / "check.json")
    monkeypatch.chdir(tmp_path)
    script = _block("simulate.py")
    namespace: dict = {"__name__": "simulate"}
    exec(compile(script, "simulate.py", "exec"), namespace)  # the page's script, as `python simulate.py`
    assert (tmp_path / "excite_bag" / "excite_bag.db3").is_file()
    assert (tmp_path / "check_bag" / "check_bag.mcap").is_file()
    commands = [line for line in _block("commands").splitlines() if line.strip()]
    assert len(commands) == 5
    for line in commands:
        args = shlex.split(line)
        assert args[0] == "robid" and main(args[1:]) == 0, line
    # the check run again without sensor noise: the torques MuJoCo applied
    namespace["noise"] = np.zeros(6)
    namespace["record"]("check.json", "check_clean", "mcap", periods=3, seed=2)
    robot = robid.load_robot(tmp_path / "arm.xml")
    clean = read_measurement(tmp_path / "check_clean", robot.model)
    pred = pd.read_csv(tmp_path / "pred.csv")
    rows = np.searchsorted(clean.t, pred["t"].to_numpy())
    np.testing.assert_array_equal(clean.t[rows], pred["t"])
    predicted = pred[[f"tau_pred{j + 1}" for j in range(6)]].to_numpy()
    truth = clean.tau[rows]
    nrmse = 100 * np.sqrt(np.mean((predicted - truth) ** 2, axis=0) / np.mean(truth**2, axis=0))
    assert np.all(nrmse < 0.3), nrmse
    mujoco.MjModel.from_xml_path(str(tmp_path / "arm_identified.xml"))
    assert robid.load_robot(tmp_path / "arm_identified.urdf").dof == 6
    assert (tmp_path / "report.html").stat().st_size > 100_000
