"""The request layer (robid/requests.py, issue 35): a default changed there changes every front end alike -- the
command line, campaign files, the Python Campaign API and fleets -- and a wrong value is named in each front end's
own words."""

from __future__ import annotations

from pathlib import Path

import pytest

import robid
from robid.campaign.campaign_file import campaign_from_dict
from robid.campaign.runner import _base_processing
from robid.cli import build_parser
from robid.cli.process_cmd import processing_options, screening_policy
from robid.errors import RobidInputError
from robid.fleet.spec import fleet_from_dict
from robid.requests import Where, estimator_request, processing_request, screening_request

#: not robid's defaults: where they show, the front end took the request layer's
MIN_SPEED, MAX_GAP, METHOD = 0.123, 7.5, "irls"


@pytest.fixture
def changed_defaults(monkeypatch, tmp_path: Path):
    """The request layer's defaults of min_speed and max_gap_factor changed, as a future release might (and the
    measurement file the front ends name, which they check exists)."""
    from robid import requests

    (tmp_path / "run.csv").write_text("t,q1\n")
    monkeypatch.setitem(requests.PROCESSING_DEFAULTS, "min_speed", MIN_SPEED)
    monkeypatch.setitem(requests.SCREENING_DEFAULTS, "max_gap_factor", MAX_GAP)
    monkeypatch.setitem(requests.IDENTIFICATION_DEFAULTS, "method", METHOD)


CAMPAIGN = {
    "robid_campaign": 1,
    "name": "c",
    "robot": "ur10e",
    "measurements": {"run": {"file": "run.csv"}},
    "identification": {"measurements": ["run"]},
    "report": False,
}


def test_the_command_line_takes_the_request_layers_defaults(changed_defaults):
    for command in (["identify", "ur10e", "run.csv", "--out", "r.json"],
                    ["process", "ur10e", "run.csv", "--out", "p.csv"],
                    ["payload", "identify", "ur10e", "--loaded", "a.csv", "--unloaded", "b.csv"]):
        args = build_parser().parse_args(command)
        assert processing_options(args).min_speed == MIN_SPEED, command
        assert screening_policy(args).max_gap_factor == MAX_GAP, command
    assert _identify_help_shows()
    args = build_parser().parse_args(["identify", "ur10e", "run.csv", "--out", "r.json"])
    assert estimator_request({"method": args.method}, Where.command_line()).method == METHOD


def _identify_help_shows() -> bool:
    """``robid identify --help`` states the request layer's default."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser().parse_args(["identify", "--help"])
    return "default 0.123" in " ".join(out.getvalue().split())


def test_a_campaign_file_takes_the_request_layers_defaults(changed_defaults, tmp_path: Path):
    spec = campaign_from_dict(dict(CAMPAIGN), tmp_path / "c.yaml")
    assert _base_processing(spec).min_speed == MIN_SPEED and spec.method == METHOD
    assert screening_request(spec.screening, Where.file(spec.source, "screening")).max_gap_factor == MAX_GAP
    # a campaign's own value wins over the default
    own = campaign_from_dict({**CAMPAIGN, "processing": {"min_speed": 0.0}}, tmp_path / "c.yaml")
    assert _base_processing(own).min_speed == 0.0


def test_the_python_campaign_api_takes_the_request_layers_defaults(changed_defaults, tmp_path: Path):
    campaign = robid.Campaign("ur10e", measurements={"run": {"file": "run.csv"}},
                              identification={"measurements": ["run"]}, report=False, base=tmp_path)
    assert _base_processing(campaign.spec).min_speed == MIN_SPEED and campaign.spec.method == METHOD


def test_a_fleet_takes_the_request_layers_defaults(changed_defaults, tmp_path: Path):
    fleet = fleet_from_dict({"robid_fleet": 1, "robots": [{"serial": "A1", "robot": "ur10e", "identifications": [
        {"date": "2026-01-05", "campaign": {k: v for k, v in CAMPAIGN.items() if k not in ("robid_campaign", "robot")}}
    ]}]}, tmp_path / "fleet.yaml")
    (job,) = fleet.jobs
    assert job.campaign is not None, job
    assert _base_processing(job.campaign).min_speed == MIN_SPEED and job.campaign.method == METHOD


def test_a_wrong_value_is_named_in_each_front_ends_words(tmp_path: Path):
    (tmp_path / "run.csv").write_text("t,q1\n")
    with pytest.raises(RobidInputError, match=r"^--min-speed: expected a finite number"):
        processing_request({"min_speed": "fast"}, Where.command_line())
    with pytest.raises(RobidInputError, match=r"^--snr: "):
        processing_request({"snr_threshold": "x"}, Where.command_line())
    with pytest.raises(RobidInputError, match=r"c\.yaml: processing: min_speed: expected a finite number"):
        campaign_from_dict({**CAMPAIGN, "processing": {"min_speed": "fast"}}, tmp_path / "c.yaml")
    with pytest.raises(RobidInputError, match=r"^--max-gap: more than 1 median step"):
        screening_request({"max_gap_factor": 0.5}, Where.command_line())
    with pytest.raises(RobidInputError, match=r"^--max-drop: "):
        screening_request({"max_drop_fraction": 2.0}, Where.command_line())
    with pytest.raises(RobidInputError, match=r"^--friction-models: expected at least two of"):
        estimator_request({"friction_models": "stribeck"}, Where.command_line())
    with pytest.raises(RobidInputError, match=r"c\.yaml: identification\.friction_models: expected at least two"):
        campaign_from_dict({**CAMPAIGN, "identification": {"measurements": ["run"], "friction_models": ["coulomb"]}},
                           tmp_path / "c.yaml")
    with pytest.raises(RobidInputError, match=r"c\.yaml: identification\.method: expected one of"):
        campaign_from_dict({**CAMPAIGN, "identification": {"measurements": ["run"], "method": "magic"}},
                           tmp_path / "c.yaml")
    assert estimator_request({"friction_models": "none"}, Where.command_line()).friction_models == ()
    assert estimator_request({"compare_methods": "wls, didim"}, Where.command_line()).compare_methods == ("wls",
                                                                                                          "didim")


def test_the_librarys_option_errors_are_worded_by_each_front_end():
    """The library names an option by its field (robid.errors.RobidOptionError); the command line words it as its
    flag, a campaign file as its block and key, the library alone as the field."""
    from robid.errors import RobidOptionError

    error = RobidOptionError("method", "didim: not with {motor_encoders_only}")
    assert str(error) == "method: didim: not with motor_encoders_only"
    assert Where.command_line().words(error) == "--method: didim: not with --motor-encoders-only"
    assert Where.campaign("c.yaml").words(error) == ("c.yaml: identification.method: didim: not with "
                                                     "motor_encoders_only:")


def test_no_library_message_names_a_command_line_flag():
    """Every flag in an error the library raises is a {field} placeholder that the front end words (RobidOptionError):
    only robid/cli (the command line itself) and robid/requests spell flags. AST scan of every raise."""
    import ast
    import re

    root = Path(robid.__file__).parent
    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("cli/") or rel == "requests.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                found += [f"{rel}:{c.lineno} {flag.findall(c.value)}" for c in ast.walk(node.exc)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str) and flag.search(c.value)]
    assert found == [], found
