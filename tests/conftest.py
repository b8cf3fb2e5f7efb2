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
    "test_identification_nonperiodic.py",
    "test_compensator_identification.py",
    "test_elastic_kr300.py",
    "test_report_html.py",
)


def pytest_collection_modifyitems(config, items):
    """Slowest files first, under xdist only (a plain run keeps pytest's order); the sort is stable, so the tests
    of one file keep their order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: k for k, name in enumerate(SLOWEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
