"""What the command line says (issue 33): every command names the processing it chose in one line, console lines
name their run, tables align whatever the joint names, and no requested model term is dropped silently (a rotor
term on a URDF without drives; a built-in model of the same robot with more terms)."""

from __future__ import annotations

from pathlib import Path

import pytest

import robid
from robid.cli import main
from robid.cli.predict_cmd import aligned_table
from robid.identification.choices import term_lines

DATA = Path(__file__).resolve().parent / "data"


def test_a_table_aligns_whatever_the_joint_names():
    rows = [("shoulder_pan_joint", "12.345", "3.1"), ("J2", "1.5", "100.25")]
    text = aligned_table(("joint", "NRMSE [%] (processed)", "RRE [%] (measured)"), rows)
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1  # every line as wide: the columns line up
    ends = [[line.index(cell) + len(cell) for cell in row[1:]] for line, row in zip(lines[1:], rows, strict=True)]
    assert ends[0] == ends[1]  # numbers right-aligned on the same column edge


def _urdf_named(tmp_path: Path, name: str) -> Path:
    """tests/data/ur10e_like.urdf (a UR10e chain, no drives) under the robot name ``name``."""
    text = (DATA / "ur10e_like.urdf").read_text()
    start = text.index("<robot name=")
    end = text.index(">", start)
    path = tmp_path / f"{name}.urdf"
    path.write_text(text[:start] + f'<robot name="{name}"' + text[end:])
    return path


def test_a_rotor_term_without_drives_and_a_richer_builtin_model_are_said(tmp_path, capsys):
    urdf = _urdf_named(tmp_path, "ur10e")
    asked = robid.load_robot(urdf, terms=("rigid", "rotor", "viscous", "coulomb", "offset"))
    lines = term_lines(asked)
    assert any(line.startswith("terms: rotor asked for, but ur10e.urdf declares no drive on any joint")
               and "urdf: ur10e.urdf" in line and "drive:" in line for line in lines), lines
    assert any(line.startswith("model: the built-in robot ur10e has terms ur10e.urdf lacks: rotor") for line in lines)
    assert term_lines(robid.load_robot("ur10e")) == []  # the built-in robot itself: nothing to say
    assert term_lines(robid.load_robot(DATA / "ur10e_like.urdf")) == []  # no built-in robot of that name
    rc = main(["model", str(urdf), "--terms", "rigid,rotor,viscous,coulomb,offset"])
    out = capsys.readouterr().out
    assert rc == 0 and "note: terms: rotor asked for" in out and "note: model: the built-in robot ur10e" in out


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    from test_report_html import ROBOT, _measurement, _trajectory

    folder = tmp_path_factory.mktemp("console")
    robot = robid.load_robot(ROBOT)
    _measurement(robot, _trajectory(robot, 1), folder / "id.csv", 11)
    _measurement(robot, _trajectory(robot, 2), folder / "val.csv", 12)
    return folder


def test_identify_predict_and_process_say_the_processing_of_each_run(measured, capsys, monkeypatch):
    monkeypatch.chdir(measured)
    assert main(["identify", "tx200_3axis", "id.csv", "--validate", "val.csv", "--out", "r.json"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("processing validation val.csv: "))
    assert "rows read, 0 dropped" in line and "samples at 200 Hz" in line and "rows not fitted" in line
    assert "processing identification id.csv: " in out and "validation val.csv NRMSE [%]: " in out
    assert main(["predict", "tx200_3axis", "r.json", "val.csv", "--out", "p.csv"]) == 0
    out = capsys.readouterr().out
    assert "processing val.csv: " in out
    table = out.split("joint ", 1)[1].splitlines()
    assert len({len(("joint " + table[0]).rstrip())} | {len(x) for x in table[1:4]}) == 1
    assert main(["process", "tx200_3axis", "val.csv", "--out", "pr.csv"]) == 0
    assert capsys.readouterr().out.startswith("processing val.csv: ")
