"""Notebooks: the record and the report's sections show themselves as HTML (Jupyter's ``_repr_html_``), the record
converts to pandas DataFrames, and robid.Campaign runs a campaign given as Python keyword arguments exactly as the
same campaign file runs (docs/campaign.md "Python API", docs/identification.md, docs/report.md)."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_report_html import _measurement, _trajectory

import robid
from robid.campaign import read_campaign, run_campaign, runner
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, run_identification
from robid.io.result_file import read_result, write_result
from robid.report import report_data
from robid.report.sections import ParametersSection, default_sections
from robid.signals import ProcessingOptions

CAMPAIGNS = Path(__file__).parent / "data" / "campaign"
VOID = {"br", "img", "meta", "hr", "input", "link", "col", "wbr"}
HOSTILE = '<script>alert("x")</script>&amp;'


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A quick identification of the 3-axis arm with a validation run and a reference column."""
    folder = tmp_path_factory.mktemp("notebook")
    robot = robid.load_robot("tx200_3axis")
    _measurement(robot, _trajectory(robot, 1), folder / "id.csv", 11)
    _measurement(robot, _trajectory(robot, 2), folder / "val.csv", 12)
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.05))
    record = run_identification(robot, [folder / "id.csv"], options, validation_files=[folder / "val.csv"]).record
    record = record.with_references("truth", robot.base_parameters().values(robot.parameters))
    return robot, record, folder


class _Html(HTMLParser):
    """Tags, text and the nesting of a fragment: an end tag that closes anything but the open element fails."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.style = ""
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style":
            self.style += data
        else:
            self.text.append(data)


def _parse(text: str) -> _Html:
    page = _Html()
    page.feed(text)
    page.close()
    assert not page.errors and not page.stack, (page.errors, page.stack)
    assert "script" not in page.tags and "iframe" not in page.tags
    assert not re.search(r"""(src|href)=["']?(https?|file):""", text)
    return page


# ---- the record ---------------------------------------------------------------------------------------------


def test_record_html_names_the_robot_the_fit_and_every_base_parameter(case):
    _, record, _ = case
    page = _parse(record._repr_html_())
    text = " ".join(page.text)
    assert record.robot in text and record.method in text
    words = set(re.findall(r"[^\s,()=<>]+", text))
    assert set(record.names) <= words
    assert f"{len(record.base_parameters)} base parameters" in text
    for cls in {p.identifiability for p in record.base_parameters}:
        assert cls in text
    # the fit table: a row per run, the validation NRMSE of every joint as the record holds it (3 digits)
    for run in record.runs:
        assert run.label in text
    for m in record.validation_data[0].fit.per_joint:
        assert f"{m.nrmse_percent:.3g} %" in text
    # the style is scoped: it styles nothing of the notebook outside the record's element
    selectors = re.findall(r"([^{}]+)\{", page.style)
    assert selectors and all(s.strip().startswith(".robid-record") for sel in selectors for s in sel.split(","))


def test_record_html_escapes_what_it_shows(case):
    _, record, _ = case
    first = dataclasses.replace(record.base_parameters[0], name=HOSTILE, expression=f"{HOSTILE} + m_J2")
    run = dataclasses.replace(record.validation_data[0], file=f"/data/{HOSTILE}.csv")
    hostile = dataclasses.replace(record, robot=HOSTILE, base_parameters=(first, *record.base_parameters[1:]),
                                  validation_data=(run,))
    text = hostile._repr_html_()
    page = _parse(text)  # no script element, tags balanced
    shown = " ".join(page.text)
    assert HOSTILE in shown  # as text, character for character
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_to_frame_holds_the_records_numbers(case):
    _, record, folder = case
    params = record.to_frame()
    assert params.shape[0] == len(record.base_parameters)
    assert list(params["name"]) == list(record.names)
    np.testing.assert_array_equal(params["value"].to_numpy(), record.values)
    np.testing.assert_array_equal(params["std"].to_numpy(), record.std)
    np.testing.assert_array_equal(params["truth"].to_numpy(), record.references()["truth"])
    assert list(params["class"]) == [p.identifiability for p in record.base_parameters]
    assert list(params["expression"]) == [p.expression for p in record.base_parameters]
    assert list(params["grouped"]) == [p.grouped for p in record.base_parameters]
    rel = [np.nan if p.relative_std_percent is None else p.relative_std_percent for p in record.base_parameters]
    np.testing.assert_array_equal(params["relative_std_percent"].to_numpy(), rel)

    standard = record.to_frame("standard")
    assert standard.shape[0] == len(record.standard_parameters)
    assert list(standard["structural_class"]) == [p.structural_class for p in record.standard_parameters]
    assert list(standard["base_parameters"]) == [p.base_parameters for p in record.standard_parameters]

    fit = record.to_frame("fit")
    assert fit.shape[0] == len(record.runs) * len(record.joints)
    for k, run in enumerate(record.runs):
        rows = fit[fit["run"] == k]
        assert set(rows["role"]) == {run.role} and set(rows["file"]) == {run.file}
        assert list(rows["joint"]) == [m.joint for m in run.fit.per_joint]
        for column in ("rms", "nrmse_percent", "max_error", "inside_band_percent"):
            np.testing.assert_array_equal(rows[column].to_numpy(), [getattr(m, column) for m in run.fit.per_joint])

    runs = record.to_frame("runs")
    assert runs.shape[0] == len(record.runs)
    assert list(runs["role"]) == ["identification", "validation"]
    assert list(runs["samples"]) == [r.samples for r in record.runs]
    assert list(runs["rows_used"]) == [r.rows_used for r in record.runs]
    assert list(runs["unused_rows"]) == [sum(r.unused_rows_per_joint) for r in record.runs]
    assert list(runs["harmonics"]) == [len(r.harmonics) for r in record.runs]
    np.testing.assert_array_equal(runs["period_s"].to_numpy(), [r.period_s for r in record.runs])

    # the record read back from RESULT.json gives the same frames
    write_result(folder / "RESULT.json", record)
    again = read_result(folder / "RESULT.json")
    for what in ("parameters", "standard", "fit", "runs"):
        assert again.to_frame(what).equals(record.to_frame(what)), what
    class _Printer:  # IPython's pretty printer, as far as _repr_pretty_ uses it
        text = staticmethod(lambda t: shown.append(t))

    shown: list[str] = []
    record._repr_pretty_(_Printer(), False)
    assert len(shown) == 1 and len(shown[0]) < 200 and record.robot in shown[0]
    with pytest.raises(RobidInputError, match="what='params'"):
        record.to_frame("params")


# ---- the report's sections ------------------------------------------------------------------------------------


def test_every_section_and_the_report_show_themselves(case):
    robot, record, _ = case
    data = report_data(record, robot)
    sections = data.sections()
    applying = [s for s in default_sections() if s.applies(data)]
    assert [s.anchor for s in sections] == [s.anchor for s in applying] and len(sections) >= 6
    for section in sections:
        text = section._repr_html_()
        page = _parse(text)
        assert section.title in " ".join(page.text), section.title
        assert f'id="{section.anchor}"' in text and "<style>" in text
        # the report's CSS, scoped to the report's element (a rule at top level or inside @media)
        rules = re.findall(r"([^{}@]+)\{[^{}]*\}", page.style)
        assert rules and all(s.strip().startswith(".robid-report") for r in rules for s in r.split(","))
    names = _parse(data.section("parameters")._repr_html_()).text
    assert set(record.names) <= {w.strip() for w in names}
    whole = data._repr_html_()
    shown = " ".join(_parse(whole).text)
    assert all(s.title in shown for s in sections) and data.title in shown
    assert isinstance(data.section("ParametersSection"), ParametersSection)
    with pytest.raises(RobidInputError, match="not one of"):
        data.section("appendix")
    assert "not bound" in ParametersSection()._repr_html_()  # a section without data says how to get one


# ---- the Python campaign -------------------------------------------------------------------------------------


def _python_small(base: Path) -> robid.Campaign:
    """tests/data/campaign/small_sel.yaml as Python keyword arguments (tuples and paths where YAML has lists and
    strings)."""
    return robid.Campaign(
        Path("arm3.yaml"),
        name="small",
        trajectories={
            "ident": {"spec": {"harmonics": 4, "period": 4, "seed": 1, "starts": 1, "grid_points": 120,
                               "max_iterations": 30}},
            "valid": {"spec": {"harmonics": 4, "period": 5, "seed": 2, "starts": 1, "grid_points": 120,
                               "max_iterations": 20}},
        },
        export=[{"trajectory": "ident", "format": "csv", "periods": 1}],
        measurements={
            "ident": {"simulate": {"trajectory": "ident", "periods": 4, "noise": "realistic", "seed": 3, "rate": 200}},
            "valid": {"simulate": {"trajectory": "valid", "periods": 3, "noise": "realistic", "seed": 4, "rate": 200}},
        },
        processing={"min_speed": 0.1},
        identification={"measurements": ("ident",), "validation": ["valid"], "method": "wls"},
        report=False,
        base=base,
    )


def test_python_campaign_is_the_campaign_file(tmp_path, monkeypatch):
    # robid's own source is part of every step's fingerprint: held fixed, so that a source file saved meanwhile
    # (by an editor, another checkout's tests) does not count as a change of the campaign
    monkeypatch.setattr(runner, "code_fingerprint", lambda: "robid source")
    shutil.copy(CAMPAIGNS / "arm3.yaml", tmp_path / "arm3.yaml")
    shutil.copy(CAMPAIGNS / "small_sel.yaml", tmp_path / "small.yaml")
    out = tmp_path / "out"
    from_file = run_campaign(read_campaign(tmp_path / "small.yaml"), out, log=lambda m: None)
    result_text = from_file.result_path.read_text()

    campaign = _python_small(tmp_path)
    assert campaign.data == yaml.safe_load((CAMPAIGNS / "small_sel.yaml").read_text())
    assert dataclasses.replace(campaign.spec, source=tmp_path / "small.yaml") == read_campaign(tmp_path / "small.yaml")
    # the same steps with the same fingerprints: nothing to recompute after the file's run
    assert campaign.run(out, log=lambda m: None).recomputed == ()
    # every step run again from Python: the same RESULT.json, byte for byte
    run = campaign.run(out, force=True, log=lambda m: None)
    assert set(run.recomputed) == {s.name for s in from_file.steps}
    assert run.result_path == from_file.result_path and run.result_path.read_text() == result_text
    np.testing.assert_array_equal(run.record.values, from_file.record.values)
    np.testing.assert_array_equal(run.record.covariance_matrix, from_file.record.covariance_matrix)
    assert run.record == from_file.record

    again = robid.Campaign.from_yaml(tmp_path / "small.yaml", out=out)
    assert again.data == campaign.data and again.run(log=lambda m: None).recomputed == ()
    assert yaml.safe_load(campaign.to_yaml()) == campaign.data


def test_python_campaign_is_checked_like_the_file(tmp_path):
    """A bad key gives the message the campaign file gives, naming the field; robid.Campaign names itself."""
    shutil.copy(CAMPAIGNS / "arm3.yaml", tmp_path / "arm3.yaml")
    text = (CAMPAIGNS / "small_sel.yaml").read_text().replace("method: wls", "method: magic")
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(RobidInputError) as from_file:
        read_campaign(tmp_path / "bad.yaml")
    good = _python_small(tmp_path).data
    kwargs = {k: v for k, v in good.items() if k not in ("robid_campaign", "robot")}
    kwargs["identification"] = {**good["identification"], "method": "magic"}
    with pytest.raises(RobidInputError) as from_python:
        robid.Campaign(good["robot"], base=tmp_path, **kwargs)
    file_message = str(from_file.value).split(": ", 1)
    python_message = str(from_python.value).split(": ", 1)
    assert python_message[1] == file_message[1] and "identification.method" in python_message[1]
    assert python_message[0].endswith("robid.Campaign")
    with pytest.raises(RobidInputError, match="unknown field 'colour'"):
        robid.Campaign(good["robot"], base=tmp_path,
                       **{**kwargs, "identification": good["identification"], "report": {"colour": "red"}})


def test_import_robid_stays_light():
    """robid.Campaign is imported on first use; reading a record loads no pandas until a frame is asked for."""
    code = ("import sys, robid, robid.record; "
            "print(sorted(m for m in ('robid.campaign', 'robid.robot', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert robid.Campaign is __import__("robid.campaign.api", fromlist=["Campaign"]).Campaign
