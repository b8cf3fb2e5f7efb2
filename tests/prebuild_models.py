"""Derive and compile the built-in robots' models into ``$ROBID_CACHE_DIR`` before the test suite runs.

``.ci/run`` calls it once, before pytest: the models most test files share are then derived in parallel, one
process per core, instead of inside the first test that needs each of them while the other worker waits on the
cache entry's lock (robid/symbolic/cache.py). A test never depends on it: a model missing here is derived by the
first test that needs it, as before. Each built-in robot with its default terms (robid.model.terms.default_terms)
and with the rigid bodies alone, the two sets the tests ask for, and the test robots of tests/data that the
dynamics oracles derive with the rigid bodies alone (tests/test_dynamics_oracles.py). A request that fails is
reported and left to the tests (which derive it again and fail with the whole message).

    python tests/prebuild_models.py [--jobs N] [ROBOT ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
#: test robots derived with the rigid bodies alone by several tests (measured: tests/test_dynamics_oracles.py and
#: the closed-chain tests)
DATA_ROBOTS = ("panda_gaz.urdf", "panda_gaz.yaml", "ur10e_like.urdf", "ur10e_like_wall.urdf", "merge_fixed.urdf",
               "rpr_prismatic.urdf", "rrr_mdh.yaml", "rpr_dh.yaml", "planar_2r.yaml")


def model_requests(only: list[str] | None = None) -> list[tuple[str, tuple[str, ...] | None]]:
    """(robot, terms) pairs; None: the robot's default terms."""
    from robid.model.loader import builtin_robot_names

    requests = [(name, terms) for name in builtin_robot_names() for terms in (None, ("rigid",))]
    requests += [(str(DATA / name), ("rigid",)) for name in DATA_ROBOTS]
    if only:
        requests = [r for r in requests if Path(r[0]).stem in only or Path(r[0]).name in only]
    return requests


def derive(request: tuple[str, tuple[str, ...] | None]) -> str:
    """Derive (or find) one model and load its C library (which builds this processor's library); one line saying
    what and how long, or why it failed."""
    from robid.robot import load_robot

    name, terms = request
    label = f"{Path(name).name} {'+'.join(terms) if terms else 'default terms'}"
    t0 = time.perf_counter()
    try:
        robot = load_robot(name, terms)
        robot.meta  # noqa: B018 -- derives, writes the cache entry, loads the compiled backend
    except Exception as e:  # noqa: BLE001 -- reported; the tests that need the model derive it and fail in full
        return f"{label}: FAILED ({type(e).__name__}: {e}); the tests will derive it"
    return f"{label}: {time.perf_counter() - t0:.1f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: the cores)")
    parser.add_argument("robots", nargs="*", help="only these (file stem or built-in name; default: all)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for line in pool.map(derive, model_requests(args.robots)):
            print(f"prebuild_models: {line}", flush=True)
    print(f"prebuild_models: done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
