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
