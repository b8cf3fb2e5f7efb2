"""The suite's tiers and orders name tests that exist (tests/conftest.py): a renamed file or test would otherwise
leave the slow tier silently (the fast tier would grow past its budget) or the xdist order silently stale."""

import re
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent


def test_slow_files_exist():
    missing = [name for name in conftest.SLOW_FILES if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py SLOW_FILES names files that do not exist: {missing}"


def test_slow_tests_exist():
    missing = []
    for entry in conftest.SLOW_TESTS:
        file, _, name = entry.partition("::")
        path = TESTS / file
        if not path.is_file() or not re.search(rf"^def {re.escape(name)}\(", path.read_text(), re.MULTILINE):
            missing.append(entry)
    assert not missing, f"tests/conftest.py SLOW_TESTS names tests that do not exist: {missing}"


def test_slowest_files_first_exist():
    missing = [name for name in conftest.SLOWEST_FILES_FIRST if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py SLOWEST_FILES_FIRST names files that do not exist: {missing}"


def test_a_test_asking_for_the_real_data_is_slow():
    """The `shared` fixture (../shared, the real data sets) puts a test in the slow tier, whatever its file."""

    class Item:
        path = TESTS / "test_anything.py"
        fixturenames = ("tmp_path", "shared")
        originalname = name = "test_x"

    assert conftest.is_slow(Item())
    Item.fixturenames = ("tmp_path",)
    assert not conftest.is_slow(Item())
