"""One definition of each word set (robid/defaults.py): the JSON Schema of the campaign file, the command line's
choices and the library's checks all use it, so that a word added or renamed in one place is everywhere."""

import json
from pathlib import Path

import pytest

from robid import defaults
from robid.errors import RobidInputError

ROOT = Path(__file__).resolve().parents[1]


def _enums(node, path="") -> dict[str, list]:
    """Every ``enum`` of a JSON Schema, by the path of the property that holds it."""
    found = {}
    if isinstance(node, dict):
        if "enum" in node:
            found[path] = node["enum"]
        for key, value in node.items():
            found.update(_enums(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            found.update(_enums(value, f"{path}[{k}]"))
    return found


def _choices(command: str) -> dict[str, tuple]:
    """The choices of every option of ``robid COMMAND``, by option string."""
    import argparse

    from robid.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {s: tuple(a.choices) for a in sub._actions if a.choices for s in a.option_strings}


def test_the_campaign_schema_uses_the_vocabulary():
    enums = _enums(json.loads((ROOT / "schemas" / "campaign.schema.json").read_text()))
    measurement = "/properties/measurements/additionalProperties"
    expected = {
        "/properties/processing/properties/mode": defaults.PROCESSING_MODES,
        "/properties/processing/properties/torque_band": defaults.TORQUE_BANDS,
        f"{measurement}/properties/processing/properties/mode": defaults.PROCESSING_MODES,
        f"{measurement}/properties/processing/properties/torque_band": defaults.TORQUE_BANDS,
        "/properties/identification/properties/method": defaults.METHODS,
        "/properties/identification/properties/compare_methods/items": defaults.METHODS,
        "/properties/identification/properties/feedforward": defaults.FEEDFORWARD_KINDS,
    }
    for path, words in expected.items():
        assert enums[path] == list(words), path


def test_the_schema_generator_uses_the_vocabulary():
    """The JSON files are generated from robid.schemas (tests/test_schemas.py); its definitions are the vocabulary's
    own tuples, not copies."""
    from robid.schemas import campaign

    assert campaign.METHODS is defaults.METHODS
    assert campaign.FEEDFORWARD is defaults.FEEDFORWARD_KINDS


@pytest.mark.parametrize(
    "command, option, words",
    [
        ("process", "--mode", defaults.PROCESSING_MODES),
        ("process", "--torque-band", defaults.TORQUE_BANDS),
        ("identify", "--mode", defaults.PROCESSING_MODES),
        ("identify", "--torque-band", defaults.TORQUE_BANDS),
        ("identify", "--method", defaults.METHODS),
        ("identify", "--feedforward", defaults.FEEDFORWARD_KINDS),
        ("simulate", "--feedforward", defaults.FEEDFORWARD_KINDS),
    ],
)
def test_the_command_line_offers_the_vocabulary(command, option, words):
    assert _choices(command)[option] == tuple(words)


def test_the_library_checks_against_the_vocabulary():
    import importlib

    from robid.identification import closed_loop, closed_loop_estimation, coulomb
    from robid.signals import processing
    from robid.simulation import plant

    identify = importlib.import_module("robid.identification.identify")  # the package exports a function of that name

    assert processing.MODES is defaults.PROCESSING_MODES
    assert identify.METHODS is defaults.METHODS
    assert closed_loop_estimation.CLOSED_LOOP_METHODS is defaults.CLOSED_LOOP_METHODS
    assert closed_loop.FEEDFORWARD is defaults.FEEDFORWARD_KINDS
    assert coulomb.COULOMB_MODELS is defaults.COULOMB_MODELS
    assert plant.FEEDFORWARD_MODES is defaults.FEEDFORWARD_KINDS


def test_the_word_sets_are_consistent():
    assert set(defaults.CLOSED_LOOP_METHODS) <= set(defaults.METHODS)
    assert defaults.DEFAULT_METHOD in defaults.METHODS
    assert defaults.DEFAULT_TORQUE_BAND in defaults.TORQUE_BANDS
    assert defaults.DEFAULT_FEEDFORWARD in defaults.FEEDFORWARD_KINDS
    assert set(defaults.PROCESSING_MODES) - {"auto"} <= set(defaults.PROCESSED_MODES)


@pytest.mark.parametrize("field, word", [("mode", "periodical"), ("torque_band", "some")])
def test_processing_refuses_a_word_outside_the_vocabulary(field, word):
    from dataclasses import replace

    from robid.signals.processing import ProcessingOptions, _check_options

    with pytest.raises(RobidInputError, match=word):
        _check_options(replace(ProcessingOptions(), **{field: word}), "test")


def test_the_friction_candidates_are_one_word_set():
    from robid.defaults import FRICTION_CANDIDATES
    from robid.estimation import nonlinear_friction

    assert nonlinear_friction.FRICTION_CANDIDATES == FRICTION_CANDIDATES
#: the words outside robid/defaults.py that are not the vocabulary's, each with its reason
_NOT_THE_VOCABULARY = {
    # scipy's CubicSpline boundary condition, not a processing mode
    ("robid/identification/closed_loop.py", 'bc_type="periodic"'),
    ("robid/simulation/feedforward.py", 'bc_type="periodic"'),
    # the names of the estimator functions robid.estimation exports (``from robid.estimation import wls``)
    ("robid/estimation/__init__.py", '"wls",'),
    ("robid/estimation/estimators.py", '__all__ = ["EstimationResult", "estimate", "irls", "ols", "wls"]'),
}


def test_the_words_are_spelled_out_only_in_the_vocabulary():
    """Issue 35: ``grep -rn '"periodic"\\|"wls"\\|"eiv"' robid/`` finds only robid/defaults.py's definitions; the
    library compares against the named constants (robid.defaults.PERIODIC, WLS, EIV, ...)."""
    import re

    word = re.compile(r'"(periodic|wls|eiv)"')
    found = []
    for path in sorted((ROOT / "robid").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name == "robid/defaults.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if word.search(line) and not any(name == f and text in line for f, text in _NOT_THE_VOCABULARY):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []
    definitions = [line for line in (ROOT / "robid" / "defaults.py").read_text().splitlines() if word.search(line)]
    assert all(re.fullmatch(r'[A-Z_]+ = "(periodic|wls|eiv)"', line) for line in definitions), definitions


#: the only lines of robid/ and docs/ that may say "balancer" (robid's word is "compensator": docs/compensator.md),
#: each (file, text on the line) with its reason
_BALANCER_ALLOWED = {
    ("docs/compensator.md", "robid calls a gravity compensator (also called a balancer) a compensator everywhere"):
        "the one sentence that states the synonym",
    ("robid/schemas/robot.py", '"Gravity compensator (balancer) of the joint'):
        "the robot file's schema names the synonym for users who know the hardware as a balancer; "
        "schemas/robot.schema.json is generated from it and stays byte-identical",
    ("docs/robot-file.md", "Gravity compensator (balancer) of the joint"):
        "the field table generated from the same schema description (tests/test_schemas.py)",
    ("robid/record/__init__.py", "BalancerCollinearity = CompensatorReport"):
        "the old public name of the record's class (robid.record exported it), kept as an alias for scripts",
    ("robid/record/__init__.py", '    "BalancerCollinearity",  # the old name of CompensatorReport'):
        "the alias exported where the old name was",
}


def _balancer_lines() -> list[tuple[str, int, str]]:
    """(file, line number, line) of every line of robid/ (.py, .yaml, .json) and docs/ (.md) that says balancer."""
    files = [p for suffix in ("py", "yaml", "json") for p in (ROOT / "robid").rglob(f"*.{suffix}")]
    files += list((ROOT / "docs").rglob("*.md"))
    found = []
    for path in sorted(files):
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "balancer" in line.lower():
                found.append((name, number, line))
    return found


def test_one_name_for_the_gravity_compensator():
    """Issue 35, "one name per concept": robid says "compensator"; "balancer" (any case) appears in robid/ and
    docs/ only on the lines listed above, each once, and every listed line still exists."""
    found = _balancer_lines()
    unexpected = [f"{f}:{n}: {line.strip()}" for f, n, line in found
                  if not any(f == file and text in line for file, text in _BALANCER_ALLOWED)]
    assert unexpected == [], "say compensator (docs/compensator.md), not balancer"
    for file, text in _BALANCER_ALLOWED:
        assert sum(f == file and text in line for f, _, line in found) == 1, (file, text)


def test_the_old_public_name_of_the_compensator_record_still_imports():
    from robid import record

    assert record.BalancerCollinearity is record.CompensatorReport
    assert "BalancerCollinearity" in record.__all__
