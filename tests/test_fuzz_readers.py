"""Property-based fuzzing of the readers (issue 30; tests/fuzzing.py has the mutations and the contract): for any
mutation of a valid measurement CSV, mapping, robot (YAML, URDF), RESULT, TRAJ, campaign, fleet or SPEC file, the
reader returns or refuses with one line (RobidInputError), never a traceback. A fast, derandomised subset
(hypothesis); benchmarks/bench_fuzz.py runs 10 000 inputs with their peak memory (benchmarks/RESULTS.md)."""

from __future__ import annotations

import random

import pytest

hypothesis = pytest.importorskip("hypothesis")
import fuzzing  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SEEDS = fuzzing.seeds()
KINDS = sorted(SEEDS)


@pytest.fixture(scope="module")
def readers():
    return fuzzing.readers()


def test_every_seed_file_is_read():
    """The fuzzing starts from valid files: each seed is read without a refusal."""
    import tempfile
    from pathlib import Path

    reader = fuzzing.readers()
    with tempfile.TemporaryDirectory() as folder:
        for kind, (suffix, raw) in SEEDS.items():
            path = Path(folder) / f"seed-{kind}{suffix}"
            path.write_bytes(raw)
            assert fuzzing.outcome(reader[kind], path) == "ok", kind


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**32 - 1))
def test_a_mutated_file_is_read_or_refused_with_one_line(kind, seed, readers, tmp_path):
    fuzzing.run_one(random.Random(seed), kind, SEEDS, readers[kind], tmp_path)
