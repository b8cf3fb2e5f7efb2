"""Untrusted text stays data (issue 30, findings 1 and 2): hostile strings in a robot's name, a measurement's file
name and a TRAJ.json's ``design`` block reach every generated format, which must still parse and hold the string
only as inert data.

"Inert" is checked independently of robid's escaping code: the artefact made with the hostile strings and the
one made with harmless strings are parsed by the target language's own tools (Python ``ast``, the C compiler's
preprocessor and syntax check, expat, PyYAML, json, the KRL/RAPID/URScript parse-back) and must have the same
code -- every statement, declaration and element -- and differ only in comments, docstrings or data values.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

import robid
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.programs import FORMATS, ProgramOptions, export_program, render_program
from robid.excitation.programs.parse_back import PARSERS, check_motion
from robid.excitation.trajectory_file import TrajectoryFile, save_trajectory
from robid.io import escaping

#: comment terminators and openers of every target, quotes, backslashes, line ends, NUL, Unicode separators,
#: and a forged robid-program line
HOSTILE = (
    '*/ int evil(void) { return 1; } /*',
    '"""\nimport os\nos.system("touch PWNED")\n"""',
    "'''\nraise SystemExit\n'''",
    "\\",
    "trailing backslash \\",
    "a\nHALT\n$OUT[1]=TRUE",
    "b\r\nStop;\r\n",
    "c\rpopup(\"x\")",
    "nul\x00byte",
    "ls\u2028HALT\u2029ps",
    "nel\x85HALT",
    "vt\x0bff\x0cfs\x1c",
    "--> <evil/> <!--",
    "]]> & <script>alert(1)</script>",
    "robid-program: format=krl; version=1; signs=-1,-1,-1,-1,-1,-1",
    "; ! # // /* ??/",
    "accent é € 😀",
    "\ttab",
)
ALL = "|".join(HOSTILE)


# ------------------------------------------------------------------------------------------ the escapers alone
@pytest.mark.parametrize("text", [*HOSTILE, ALL])
def test_each_escaper_keeps_the_text_inert_in_its_language(text):
    line = escaping.comment_line(text)
    assert line.isascii() and len(line.splitlines()) <= 1 and "\x00" not in line
    doc = ast.parse(f'"""{escaping.python_docstring(text)}"""\nx = 1\n')
    assert [type(n) for n in doc.body] == [ast.Expr, ast.Assign]
    assert ast.literal_eval(escaping.python_string(text)) == text
    comment = escaping.c_comment(text)
    assert "*/" not in comment and all(line.startswith(" *") for line in comment.split("\n"))
    element = ET.tostring(ET.Element("e", a=escaping.xml_text(text)), encoding="unicode")
    root = ET.fromstring(f"<r><!--{escaping.xml_comment(text)}-->{element}</r>")
    assert [child.tag for child in root] == ["e"] and root[0].get("a") == escaping.xml_text(text)


def test_identifiers_come_from_a_whitelist():
    assert escaping.check_identifier("robid_2", "x") == "robid_2"
    for bad in ("2x", "a-b", "a b", "é", "x\n", "", "a;b", "x*/", None, 3):
        with pytest.raises(robid.RobidInputError):
            escaping.check_identifier(bad, "--prefix")


# ------------------------------------------------------------------------------------------ controller programs
LIMITS = JointLimitSet.create(6, np.deg2rad([[-170, 170]] * 6), [2.0] * 6, [4.0] * 6)


def _trajectory_file(design: dict, names=tuple(f"A{j + 1}" for j in range(6))) -> TrajectoryFile:
    rng = np.random.default_rng(3)
    traj = FourierTrajectory(6.0, np.zeros(6), 0.05 * rng.standard_normal((6, 3)), 0.05 * rng.standard_normal((6, 3)),
                             4, names).project_rest()
    return TrajectoryFile(traj, LIMITS, 0.05, (), design)


def _design(text: str) -> dict:
    return {"robot": f"/robots/{text}/kr.yaml", "created": text, "seed": text, "criterion": text,
            "criteria": {"cond": 5.0}}


_COMMENT = {".src": ";", ".dat": ";", ".mod": "!", ".script": "#", ".csv": "#"}


def _code_lines(suffix: str, text: str) -> list[str]:
    """The program's lines that are not comments (its statements, declarations and data)."""
    return [line for line in text.split("\n") if not line.lstrip().startswith(_COMMENT[suffix])]


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_design_strings_stay_inside_the_comments_of_every_program(fmt):
    """TRAJ.json's design.robot, design.created (and the other design fields) holding line ends, NUL, U+2028 and
    comment markers: the program has the same statements as with a harmless design, each line of it is one
    line for the controller (no CR, NEL or line separator that an editor could break it at), and the parse-back
    reads the same motion (the forged robid-program line is not taken for robid's)."""
    options = ProgramOptions(periods=1, signs=None if fmt == "csv" else (1,) * 6)
    if fmt == "csv":  # the CSV program writes its comment lines with a commanded path only: check the comments
        from robid.excitation.programs.common import program_comments

        lines = program_comments(_trajectory_file(_design(ALL)), "csv", options, ["n"], {"rate": 1})
        assert all(line.isascii() and len(f"# {line}\n".splitlines()) == 1 for line in lines)
        return
    plain = render_program(_trajectory_file(_design("harmless")), fmt, options, 20.0 if fmt != "urscript" else 500.0,
                           "exc")
    hostile = render_program(_trajectory_file(_design(ALL)), fmt, options, 20.0 if fmt != "urscript" else 500.0,
                             "exc")
    for suffix, text in hostile.items():
        assert text.isascii(), suffix
        assert text.splitlines() == text.split("\n")[:-1], f"{suffix}: a character other than \\n ends a line"
        assert _code_lines(suffix, text) == _code_lines(suffix, plain[suffix]), suffix
        assert not re.search(r"^\s*(HALT|\$OUT|Stop;|popup|raise|import)", text, re.M)
    tf = _trajectory_file(_design(ALL))
    motion, reference = PARSERS[fmt](hostile), PARSERS[fmt](plain)
    np.testing.assert_array_equal(motion.q, reference.q)
    assert check_motion(motion, tf.limits, tf, tf.trajectory.joint_names).ok


def test_hostile_joint_names_in_a_trajectory_file_are_refused_or_inert(tmp_path):
    """joint_names of TRAJ.json (written into every program's limit comments): names with line ends stay in
    their comment; a list that is not names is refused with one line."""
    names = ("A1\nHALT", "A2", "A3\u2028$OUT[1]=TRUE", "A4", "A5", "A6")
    tf = _trajectory_file(_design("x"), names)
    path = tmp_path / "traj.json"
    save_trajectory(path, tf)
    out = tmp_path / "exc.src"
    export_program(robid_load_trajectory(path), "krl", out, ProgramOptions())
    for suffix in (".src", ".dat"):
        text = out.with_suffix(suffix).read_text()
        assert not re.search(r"^\s*(HALT|\$OUT)", text, re.M)
    data = json.loads(path.read_text())
    data["joint_names"] = [{"a": 1}] * 6
    path.write_text(json.dumps(data))
    with pytest.raises(robid.RobidInputError, match="joint_names"):
        robid_load_trajectory(path)


def robid_load_trajectory(path):
    from robid.excitation.trajectory_file import load_trajectory

    return load_trajectory(path)


# ------------------------------------------------------------------------------------------ export-model
ROBOT_TEXT = """robid: 1
name: {name}
gravity: [0, -9.81, 0]
kinematics: dh
joints:
  - name: P1
    a: 0.5
    limits: {{position: [-2.5, 2.5], velocity: 3.0, acceleration: 20.0}}
    link: {{mass: 2.0, com: [-0.25, 0.01, 0.0], inertia: [0.013, 0.012, 0.011, -0.0003, -0.0007, 0.0002]}}
    friction: {{viscous: 0.2, coulomb: 0.5}}
  - name: P2
    a: 0.4
    limits: {{position: [-2.5, 2.5], velocity: 3.0, acceleration: 20.0}}
    link: {{mass: 1.5, com: [-0.2, -0.005, 0.01], inertia: [0.0073, 0.0085, 0.0073, 0.0005, -0.0004, 0.0009]}}
    friction: {{viscous: 0.1, coulomb: 0.3}}
"""


def _identified(folder: Path, name: str, run_name: str):
    """A planar 2R arm named ``name`` identified from a noiseless simulated run stored as ``run_name``."""
    from robid.identification import run_identification

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "robot.yaml"
    data = yaml.safe_load(ROBOT_TEXT.format(name="x"))
    data["name"] = name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    robot = robid.load_robot(path)
    t = np.arange(0.0, 12.0, 0.01)
    rng = np.random.default_rng(0)
    traj = FourierTrajectory(4.0, np.zeros(2), 0.3 * rng.standard_normal((2, 4)), 0.3 * rng.standard_normal((2, 4)),
                             4, ("P1", "P2")).project_rest()
    q, qd, qdd = traj.evaluate(t, 2)
    tau = robot.inverse_dynamics(q, qd, qdd)
    run = folder / run_name
    np.savetxt(run, np.column_stack([t, q, tau]), delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    record = run_identification(robot, [run]).record
    return robot, record


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """export-model in every format, of the same model named harmlessly and with every hostile string (in the
    robot's name, the run's file name and the result's path)."""
    from robid.export import export_model

    out = {}
    hostile_run = "run*\\ *|\n\u2028\"\"\"'-->.csv"  # no "/" in a file name
    for key, name, run in (("plain", "harmless", "run.csv"), ("hostile", ALL, hostile_run)):
        folder = tmp_path_factory.mktemp(key)
        robot, record = _identified(folder, name, run.replace("\x00", ""))
        source = f"{folder}/res*/\n\"\"\"-->\u2028.json"
        out[key] = {fmt: export_model(record, robot, fmt, source=source).text
                    for fmt in ("python", "c", "urdf", "mjcf", "yaml", "json")}
        out[key]["record"] = record
        out[key]["robot"] = robot
    return out


def _without_docstring(tree: ast.Module) -> str:
    body = tree.body[1:] if isinstance(tree.body[0], ast.Expr) else tree.body
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def test_exported_python_parses_and_holds_the_name_only_in_its_docstring(exports, tmp_path):
    text = exports["hostile"]["python"]
    tree = ast.parse(text)
    assert _without_docstring(tree) == _without_docstring(ast.parse(exports["plain"]["python"]))
    doc = ast.get_docstring(tree, clean=False)
    assert doc.startswith("Identified dynamic model of robot '*/ int evil(void)") and 'os.system("touch PWNED")' in doc
    # importing runs nothing but the module's definitions
    (tmp_path / "model.py").write_text(text)
    subprocess.run(["python3", "-c", "import sys; sys.path.insert(0, '.'); import model"], cwd=tmp_path, check=True)
    assert not (tmp_path / "PWNED").exists()


def _c_tokens(text: str, folder: Path) -> str:
    """The C source as the compiler sees it: comments removed by its own preprocessor."""
    path = folder / "model.c"
    path.write_text(text)
    done = subprocess.run(["cc", "-fpreprocessed", "-E", "-P", str(path)], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_exported_c_compiles_and_holds_the_name_only_in_comments(exports, tmp_path):
    text = exports["hostile"]["c"]
    path = tmp_path / "model.c"
    path.write_text(text)
    done = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror=comment", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert text.isascii()
    (tmp_path / "plain").mkdir()
    assert _c_tokens(text, tmp_path) == _c_tokens(exports["plain"]["c"], tmp_path / "plain")


def _elements(node: ET.Element) -> list:
    """Tags, attributes (the robot's name left out) and texts of every element: the URDF's content, comments
    left out."""
    attrib = {k: v for k, v in node.attrib.items() if not (node.tag == "robot" and k == "name")}
    kids = [_elements(c) for c in node if isinstance(c.tag, str)]
    return [node.tag, attrib, (node.text or "").strip(), kids]


def test_exported_urdf_is_well_formed_with_the_name_as_an_attribute_value(exports):
    text = exports["hostile"]["urdf"]
    root = ET.fromstring(text)  # expat: well-formed, no control characters
    assert _elements(root) == _elements(ET.fromstring(exports["plain"]["urdf"]))
    assert root.get("name") == escaping.xml_text(ALL)
    assert "<evil" not in text.split("-->", 1)[1]  # the markup of the name sits in the header comment only


def test_exported_mjcf_is_well_formed_and_loads_with_the_name_in_its_comment_only(exports):
    """The MJCF export (MuJoCo's own compiler reads it): the hostile name and paths change no element, the header
    stays one comment."""
    text = exports["hostile"]["mjcf"]
    root = ET.fromstring(text)
    strip = [_elements(ET.fromstring(exports[k]["mjcf"])) for k in ("hostile", "plain")]
    strip = [[tag, {k: v for k, v in attrib.items() if k != "model"}, *rest] for tag, attrib, *rest in strip]
    assert strip[0] == strip[1]
    assert "<evil" not in text.split("-->", 1)[1]
    assert root.get("model") is not None
    mujoco = pytest.importorskip("mujoco")
    mujoco.MjModel.from_xml_string(text)


def test_exported_yaml_and_json_hold_the_name_as_data(exports):
    record = exports["hostile"]["record"]
    assert yaml.safe_load(exports["hostile"]["yaml"])["name"] == ALL
    data = json.loads(exports["hostile"]["json"])
    assert data["robot"] == ALL == record.robot
    plain = json.loads(exports["plain"]["json"])
    assert set(data) == set(plain)
    head = [line for line in exports["hostile"]["yaml"].split("\n") if not line.startswith("#")]
    assert yaml.safe_load("\n".join(head))["name"] == ALL  # the header is comments only


def test_exported_c_refuses_a_prefix_that_is_not_an_identifier(exports):
    from robid.export.code import c_source

    with pytest.raises(robid.RobidInputError, match="prefix"):
        c_source(None, (), (), (), (), (), "", "x */ evil")
    assert dataclasses.is_dataclass(exports["hostile"]["record"])


def test_the_html_report_holds_hostile_names_and_titles_as_text(exports, tmp_path):
    """The report (Jinja2 autoescape, html.escape) of the hostile robot with a hostile title: no element, attribute
    or script comes from the strings; the title reads back as the text given."""
    from html.parser import HTMLParser

    from robid.report import write_report

    class Elements(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.title, self._in_title = [], "", False

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self._in_title = tag == "title"

        def handle_endtag(self, tag):
            self._in_title = False

        def handle_data(self, data):
            if self._in_title:
                self.title += data

    title = "report " + ALL.replace("\x00", "")
    path = write_report(tmp_path / "r.html", exports["hostile"]["record"], exports["hostile"]["robot"], title=title)
    parser = Elements()
    parser.feed(path.read_text())
    assert "script" not in parser.tags and "evil" not in parser.tags
    assert parser.title.replace("\r\n", "\n").replace("\r", "\n") == title.replace("\r\n", "\n").replace("\r", "\n")
