"""Command-line basics that every subcommand shares."""

import subprocess
import sys

import robid


def test_version_is_printed_and_matches_the_package():
    out = subprocess.run([sys.executable, "-m", "robid", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"robid {robid.__version__}"


def test_min_speed_help_states_its_unit_and_defaults(capsys):
    from robid.cli import build_parser

    parser = build_parser()
    for command in ("identify", "process"):
        try:
            parser.parse_args([command, "--help"])
        except SystemExit:
            pass
        text = " ".join(capsys.readouterr().out.split())
        assert "rad/s (m/s for prismatic joints)" in text, command
