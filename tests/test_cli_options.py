"""Every option a message suggests exists on the command that prints it (issue 29, "Consistent commands").

Two checks:

* **Every command a test runs is audited** (robid.cli.option_audit): tests/conftest.py sets
  ``ROBID_CHECK_OPTIONS``, so a command whose output -- its errors, notes and summaries -- names an option it does
  not accept exits with status 1 and fails the test that ran it. Here: the audit itself, on the case that
  motivated it (a screening error suggesting ``--allow-constant``) and on a message that sends the user to another
  command.
* **Every option named anywhere in robid's messages exists**: the ``--option`` words of every string in robid's
  source (command-line help excepted, which describes the options themselves) are listed, and each must be an
  option of some command; the words that are not options (CSS custom properties of the HTML report) are named.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

from robid.cli import build_parser, main
from robid.cli.option_audit import accepted, commands, unknown_options

ROOT = Path(__file__).resolve().parents[1] / "robid"
#: modules with a command line of their own (``python -m robid.schemas``), not robid's
OWN_COMMAND_LINE = {"schemas/__main__.py"}
#: ``--word`` strings that are not options: CSS custom properties of the report's style sheet
NOT_OPTIONS = {"accent", "bad", "bad-bg", "fg", "good", "good-bg", "info", "info-bg", "line", "muted", "warn",
               "warn-bg", "zebra"}


def test_the_audit_finds_an_option_the_command_does_not_accept():
    parser = build_parser()
    message = "robid: error: run.csv: rows 1-100, qd1: constant at 0 (...); if that is right, allow it with " \
              "--allow-constant qd1"
    assert unknown_options(message, "process", parser) == []  # process has --allow-constant
    assert unknown_options(message, "export", parser) == ["--allow-constant (robid export)"]
    # a message may send the user to another command: checked against that one
    other = "export the motor-side reference with 'robid export --motor-side'"
    assert unknown_options(other, "export-model", parser) == []
    assert unknown_options("use 'robid export --no-such-flag'", "export-model", parser) == [
        "--no-such-flag (robid export)"]


def test_an_audited_command_that_names_an_unknown_option_fails(tmp_path, capsys, monkeypatch):
    """The audit is on in the suite: a screening error of ``robid process`` on a constant channel names
    --allow-constant, which process accepts (exit 2, the error); the same text from a command without it is an
    internal error (exit 1)."""
    t = np.arange(0, 4, 0.004)
    rows = np.column_stack([t, np.sin(t), np.zeros_like(t), np.cos(t), np.ones_like(t)])
    path = tmp_path / "run.csv"
    np.savetxt(path, rows, delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    code = main(["process", "zollo_2dof_elastic", str(path), "--out", str(tmp_path / "p.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "--allow-constant tau2" in err and "internal" not in err  # q2 at rest is data
    import robid.cli.process_cmd as process_cmd

    def run(args):  # a command that prints a suggestion it cannot take
        print("note: raise it with --no-such-option")
        return 0

    monkeypatch.setattr(process_cmd, "run", run)  # main registers the commands anew: the patched run is bound
    code = main(["process", "zollo_2dof_elastic", str(path), "--out", str(tmp_path / "p.csv")])
    assert code == 1 and "--no-such-option" in capsys.readouterr().err


def _message_options() -> dict[str, list[str]]:
    """``--option`` words of robid's strings, help texts excepted: option -> 'module:line' where it appears."""
    found: dict[str, list[str]] = {}
    for path in ROOT.rglob("*.py"):
        if path.relative_to(ROOT).as_posix() in OWN_COMMAND_LINE:
            continue
        tree = ast.parse(path.read_text())
        skip = set()
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                skip.add(id(body[0].value))  # a docstring describes, it does not tell the user what to type
            if isinstance(node, ast.keyword) and node.arg in ("help", "description", "metavar", "epilog"):
                skip.update(id(sub) for sub in ast.walk(node.value))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("add_argument", "add_parser"):
                for arg in node.args:
                    skip.update(id(sub) for sub in ast.walk(arg))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                for m in re.finditer(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)", node.value):
                    found.setdefault(m.group(1), []).append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


def test_every_option_a_message_names_is_an_option_of_some_command():
    parser = build_parser()
    every = accepted(parser) | {"help", "version"}
    for sub in commands(parser).values():
        every |= accepted(sub)
    found = _message_options()
    print(f"{len(found)} option words in robid's messages:", ", ".join(sorted(found)))
    missing = {o: where for o, where in found.items() if o not in every and o not in NOT_OPTIONS}
    assert not missing, missing
    assert "allow-constant" in found and "method" in found  # the scan sees messages


def test_identify_process_predict_and_payload_share_one_set_of_processing_options():
    """One set, documented once (docs/signals.md): the signal-stage, data-selection and screening options of
    identify, process, predict and payload identify are the same; predict's default is what RESULT.json stores."""
    import argparse

    from robid.cli.process_cmd import add_processing_arguments

    reference = argparse.ArgumentParser()
    add_processing_arguments(reference)
    shared = accepted(reference)
    subs = commands(build_parser())
    payload = commands(subs["payload"])["identify"]
    for name, parser in (("identify", subs["identify"]), ("process", subs["process"]), ("predict", subs["predict"]),
                         ("payload identify", payload)):
        assert shared <= accepted(parser), (name, sorted(shared - accepted(parser)))
    args = subs["predict"].parse_args(["ROBOT", "RESULT.json", "MEAS.csv", "--out", "p.csv", "--cutoff", "4"])
    assert args.cutoff == 4.0 and not hasattr(args, "min_speed")  # left out: as stored
