"""``robid design`` and ``robid export`` end to end on the stand-in 2R arm (robid.load_robot patched)."""

import json

import numpy as np
import pytest

import robid
from robid.cli import main
from robid.excitation.planar2r import Planar2R
from robid.excitation.trajectory_file import load_trajectory

SPEC = """
harmonics: 4
period: 5
center: ["10deg", 0.3]
rest_to_rest: true
criterion: cond
limits:
  position: [["-120deg", "120deg"], [-2.0, 2.0]]
  velocity: [1.5, 2.0]
  acceleration: 3.0
seed: 7
starts: 1
grid_points: 100
max_iterations: 25
cartesian:
  - name: tip
    body: J2
    point: [0, 0, 0]
    planes: [{normal: [0, 1, 0], offset: -0.8}]
"""


@pytest.fixture
def standin(monkeypatch):
    calls = []

    def load_robot(name, **kw):
        calls.append(name)
        return Planar2R()

    monkeypatch.setattr(robid, "load_robot", load_robot, raising=False)
    return calls


def test_design_then_export(standin, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "traj.json"
    assert main(["design", "planar", str(spec), "--out", str(out)]) == 0
    assert standin == ["planar"]
    captured = capsys.readouterr()
    assert "cond" in captured.out and "robid: design: start 1/1" in captured.err
    data = json.loads(out.read_text())
    assert data["rest_to_rest"] and data["continuity_order"] >= 4 and data["design"]["check"]["ok"]
    assert data["design"]["criteria"]["cond"] > 1 and "logdet" in data["design"]["criteria"]
    tf = load_trajectory(out)
    np.testing.assert_allclose(tf.trajectory.center, [np.deg2rad(10), 0.3])
    assert tf.cartesian[0]["name"] == "tip"
    csv = tmp_path / "traj.csv"
    assert main(["export", str(out), "--format", "csv", "--out", str(csv), "--rate", "50", "--periods", "2"]) == 0
    assert np.loadtxt(csv, delimiter=",", skiprows=1).shape == (500, 7)
    for fmt, name in (("krl", "exc.src"), ("rapid", "exc.mod")):
        assert main(["export", str(out), "--format", fmt, "--out", str(tmp_path / name)]) == 0
    assert (tmp_path / "exc.dat").exists()
    assert "parse-back check" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text, field",
    [
        ("period: 5\nlimits: {}\n", "harmonics"),
        ("harmonics: 4\nperiod: -1\n", "period"),
        ("harmonics: 2\nperiod: 5\n", "harmonics"),  # too few for rest-to-rest C4
        ("harmonics: 4\nperiod: 5\ncriterion: aopt\n", "criterion"),
        ("harmonics: 4\nperiod: 5\nlimits: {velocity: [1, 2, 3]}\n", "limits.velocity"),
        ("harmonics: 4\nperiod: 5\nlimits: {position: [[1, 0], [0, 1]]}\n", "limits.position[0]"),
        ("harmonics: 4\nperiod: 5\nlimits: {speed: 1}\n", "limits: unknown field 'speed'"),
        ("harmonics: 4\nperiod: 5\nwobble: 1\n", "wobble"),
        ("harmonics: 4\nperiod: 5\ncenter: [3.0, 0]\n", "center[0]"),
        ("harmonics: 4\nperiod: 5\ncartesian: [{body: J9, floor: 0}]\n", "cartesian[0].body"),
        ("harmonics: 4\nperiod: 5\nmargin: 0.7\n", "margin"),
        ("harmonics: 4\nperiod: 5\ncriterion: cond_both\nraw_weight: -1\n", "raw_weight"),
    ],
)
def test_bad_spec_names_the_field(standin, tmp_path, capsys, text, field):
    spec = tmp_path / "bad.yaml"
    spec.write_text(text)
    code = main(["design", "planar", str(spec), "--out", str(tmp_path / "t.json")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("robid: error: ") and field in err and str(spec) in err
    assert err.count("\n") == 1
    assert not (tmp_path / "t.json").exists()


def test_export_errors(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert main(["export", str(bad), "--format", "csv", "--out", str(tmp_path / "x.csv")]) == 2
    assert "malformed JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse usage error
        main(["export", str(bad), "--format", "pdf", "--out", "x"])
    assert exc.value.code == 2
