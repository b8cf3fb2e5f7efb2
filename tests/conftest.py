import os

# one BLAS thread (before numpy is imported): many small SVDs, where threads only add contention
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# Every test run derives into its own cache unless the caller chose one (CI sets ROBID_CACHE_DIR).
os.environ.setdefault("ROBID_CACHE_DIR", tempfile.mkdtemp(prefix="robid-test-cache-"))
os.environ.setdefault("MPLBACKEND", "Agg")
# every robid command a test runs checks that the options its output names are its own (robid.cli.option_audit)
os.environ.setdefault("ROBID_CHECK_OPTIONS", "1")

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path | None:
    env = os.environ.get("ROBID_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared", ROOT.parents[1] / "shared"]
    for c in candidates:
        if (c / "anchors" / "data").is_dir():
            return c
    return None


@pytest.fixture
def shared():
    path = shared_dir()
    if path is None:
        pytest.skip("../shared (real data sets) not present")
    return path


# Under pytest-xdist (CI: `-n 2 --dist loadfile --no-loadscope-reorder`) the workers take whole files in collection
# order, a new one as each finishes. The slowest files go first, so that no long file starts last and runs alone
# on one core while the other waits (longest-processing-time-first). The list is only an order: a file missing
# from it, or a stale entry, costs wall time, never a test. Wall times of the whole file on 2 cores, measured
# 2026-11-27 (the slowest steps of .ci/run's --durations output); the rest keep their alphabetical order.
SLOWEST_FILES_FIRST = (
    "test_dynamics_oracles.py",
    "test_closed_chain_simulation.py",
    "test_palletizer_campaign.py",
    "test_closed_loop_estimators.py",
    "test_ur10e_campaign.py",
    "test_campaign.py",
    "test_excitation_collision.py",  # (these two: 2026-11-29, under load)
    "test_identification_nonperiodic.py",
    "test_export_model.py",
    "test_compiled_backend.py",
    "test_signals_cutoff.py",
    "test_urdf_robot_file.py",
    "test_cache_safety.py",
    "test_demo.py",
    "test_fleet.py",
    "test_panda_campaign.py",
    "test_nonlinear_friction.py",
    "test_estimation_campaign.py",
    "test_kr300_campaign.py",
    "test_tx40_realdata.py",
    "test_compensator_identification.py",
    "test_elastic_kr300.py",
    "test_report_html.py",
)


# The slow tier (`pytest -m slow`): closed-loop simulations, real-data campaigns and the few tests that take tens of
# seconds each on 2 cores even with the models cached. `.ci/run` runs both tiers; the inner loop runs the fast one
# (`pytest -m "not slow"`, README.md). A tier is only where a test runs, never whether: nothing is skipped by it.
# Every test that asks for the real data sets (the `shared` fixture) is slow as well; tests/test_suite_tiers.py
# checks that each entry below names a test that exists; tests/slow_tests.txt adds the tests measured heavy. The
# times below are the wall times of .ci/run's --durations (2 cores, 2026-11-27/28, benchmarks/RESULTS.md).
SLOW_FILES = (
    "test_closed_loop_estimators.py",  # closed-loop integration in Python, 60-80 s per test
    "test_closed_chain_simulation.py",  # constrained dynamics of closed chains, ~80 s (11-13 s since 2026-11-29)
    "test_ur10e_campaign.py",  # UR10e campaign on the virtual robot, ~110 s of setup
    "test_palletizer_campaign.py",  # closed-chain campaign, ~55 s (11-12 s since 2026-11-29)
    "test_tx40_realdata.py",  # real data (../shared)
    "test_elastic_kr300.py",  # real data (../shared)
    "test_ur10e_crossvalidation.py",  # real data (../shared)
    # real data read from ../shared by path (not through the `shared` fixture), skipped where it is absent; where it
    # is present (next to the repository, as on the project's machine) they ran in the fast tier: 92 s of Panda
    # campaign and 32 s of KR300 campaign in fixtures (2026-11-29, load average 4-10)
    "test_panda_campaign.py",
    "test_kr300_campaign.py",
    "test_payload_ur10e.py",
    # virtual-robot simulations in module fixtures, shared by the file's tests, one of which was already slow (so
    # the fixture ran in both tiers); wall times of the fast tier of 2026-11-29 under a load average of 5-7 (about
    # 2.5x the idle times), models prebuilt (tests/prebuild_models.py)
    "test_identification_nonperiodic.py",  # `runs`: ~50 s of simulation
    "test_nonlinear_friction.py",  # `stribeck_runs`, `sigmoid_runs`: ~70 s
    "test_identified_model.py",  # `plain`: ~47 s, and a 18 s export
    "test_friction_models_record.py",  # `stribeck_runs`: ~28 s
    "test_mjcf_acceptance.py",  # `case`: the MJCF arm's campaign, ~10 s with its model prebuilt, and 6-18 s tests
    "test_payload.py",  # `virtual_runs`: ~29 s
    "test_closed_chain_export.py",  # `identified`: ~23 s
    "test_closed_chain_excitation.py",  # `palletizer_design`: ~18 s
    "test_excitation_collision.py",  # collision-constrained designs: 42 s, 40 s (`tool_table`), 30 s, 10 s
)
#: single tests of otherwise fast files: ``file.py::test_name`` (every parametrisation of it)
SLOW_TESTS: tuple[str, ...] = (
    # FIGAROH's TX40 URDF from ../shared (the tx40 fixture), ~70 s
    "test_urdf_robot_file.py::test_tx40_from_the_urdf_has_the_hand_written_files_base_parameters",
    "test_urdf_robot_file.py::test_tx40_from_the_urdf_with_the_hand_written_links_has_the_same_inverse_dynamics",
    "test_demo.py::test_shortened_demo_meets_its_promises",  # the built-in campaign end to end, ~50 s
    "test_fleet.py::test_the_demo_fleet_flags_exactly_the_two_injected_faults",  # the fleet demo, ~55 s
    "test_signals_cutoff.py::test_virtual_robot_record",  # a virtual-robot record processed, ~55 s
    # wall times in the fast tier of 2026-11-29 (load average 4-10, models prebuilt): a fleet of virtual robots,
    # 26 s; a campaign of a robot the test writes (its model derived in the test), 22 s; a simulated run of a robot
    # the test writes, to be refused, 13 s
    "test_fleet.py::test_a_failed_robot_is_reported_with_its_reason_and_the_others_finish",
    "test_campaign.py::test_the_campaign_command_says_what_identification_chose",
    "test_errors_in_variables.py::test_eiv_refuses_a_filtered_regressor",
)


def _measured_slow_tests() -> tuple[str, ...]:
    """``file.py::test_function`` of tests/slow_tests.txt (the tests measured heavy; its header says how)."""
    text = (Path(__file__).resolve().parent / "slow_tests.txt").read_text()
    return tuple(line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#"))


SLOW_TESTS = SLOW_TESTS + _measured_slow_tests()


def is_slow(item) -> bool:
    """Whether a collected test belongs to the slow tier (the lists above, or the real data sets)."""
    if item.path.name in SLOW_FILES or "shared" in getattr(item, "fixturenames", ()):
        return True
    name = getattr(item, "originalname", None) or item.name.split("[")[0]
    return f"{item.path.name}::{name}" in SLOW_TESTS


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the marker must be there when it does
def pytest_collection_modifyitems(config, items):
    """Mark the slow tier; under xdist, order the slowest files first (a plain run keeps pytest's order; the sort
    is stable, so the tests of one file keep their order)."""
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: k for k, name in enumerate(SLOWEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
