"""The plain command takes the best path the robot file and the data allow, and says so (issue 29).

On the damped elastic 2R (tests/oracles/damped_2r.py: springs and dampers on both joints, link and motor encoders,
its own forward dynamics):

* ``robid identify ROBOT ident.csv`` with nothing else chooses the elastic layout (the robot file declares springs,
  the file holds theta1..) and eiv (the averaged periodic runs), prints both choices, and identifies the springs
  (k within 1 % and 4 std of the truth, as tests/test_elastic_identification.py asks of the explicit options);
* the same file without its motor-position columns: the rigid layout, and a line that names the springs left out;
* terms given: kept as given, no layout line;
* the elastic layout on a non-periodic record: wls, with the line that says eiv needs whole periods.
"""

from __future__ import annotations

import csv

import pytest

from robid.cli import main
from robid.io.result_file import read_result
from tests.oracles.damped_2r import damped_2r_runs

TRUTH = {"k_J1": 2000.0, "k_J2": 1600.0}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("default-path")
    robot_file, (ident, valid) = damped_2r_runs(folder)
    return folder, robot_file, ident, valid


def _identify(capsys, *args) -> tuple[int, str]:
    code = main(["identify", *map(str, args)])
    return code, capsys.readouterr().out


def test_plain_identify_chooses_the_elastic_layout_and_eiv(runs, tmp_path, capsys):
    _, robot_file, ident, _ = runs
    code, out = _identify(capsys, robot_file, ident, "--out", tmp_path / "r.json")
    assert code == 0, out
    lines = [line for line in out.splitlines() if line.startswith("chose ")]
    assert lines[0].startswith("chose layout: elastic (springs declared on J1, J2, motor positions measured)")
    assert lines[1].startswith("chose method: eiv (auto)")
    record = read_result(tmp_path / "r.json")
    assert record.motor_joints == ("J1", "J2") and record.method == "eiv"
    assert "stiffness" in record.terms and "damping" in record.terms
    for name, true in TRUTH.items():
        p = record.parameter(name)
        assert abs(p.value / true - 1) < 0.01 and abs(p.value - true) < 4 * p.std, (name, p.value, p.std)


def test_without_motor_positions_the_rigid_layout_is_said(runs, tmp_path, capsys):
    _, robot_file, ident, _ = runs
    with open(ident, newline="") as f:
        rows = list(csv.reader(f))
    keep = [k for k, name in enumerate(rows[0]) if not name.startswith("theta")]
    rigid = tmp_path / "no_theta.csv"
    with open(rigid, "w", newline="") as f:
        csv.writer(f).writerows([[row[k] for k in keep] for row in rows])
    code, out = _identify(capsys, robot_file, rigid, "--out", tmp_path / "r.json")
    assert code == 0, out
    assert "chose layout: rigid -- the robot file declares springs on J1, J2, but" in out
    assert "stiffness and damping left out" in out
    record = read_result(tmp_path / "r.json")
    assert record.motor_joints == () and record.method == "wls"


def test_terms_given_are_kept_as_given(runs, tmp_path, capsys):
    _, robot_file, ident, _ = runs
    code, out = _identify(capsys, robot_file, ident, "--out", tmp_path / "r.json", "--terms",
                          "rigid,rotor,viscous,coulomb,offset")
    assert code == 0 and "chose layout" not in out
    assert read_result(tmp_path / "r.json").motor_joints == ()


def test_the_elastic_layout_on_a_non_periodic_record_says_why_not_eiv(runs, tmp_path, capsys):
    _, robot_file, ident, _ = runs
    code, out = _identify(capsys, robot_file, ident, "--out", tmp_path / "r.json", "--mode", "nonperiodic")
    assert code == 0, out
    assert "chose method: wls (auto) -- the elastic layout on runs that are not averaged periodic ones" in out
    assert read_result(tmp_path / "r.json").method == "wls"
