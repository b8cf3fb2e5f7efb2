"""Derive and compile the built-in robots' models into ``$ROBID_CACHE_DIR`` before the test suite runs.

``.ci/run`` calls it once, before pytest: the models most test files share are then derived in parallel, one
process per core, instead of inside the first test that needs each of them while the other worker waits on the
cache entry's lock (robid/symbolic/cache.py). A test never depends on it: a model missing here is derived by the
first test that needs it, as before. Each built-in robot with its default terms (robid.model.terms.default_terms)
and with the rigid bodies alone, the two sets the tests ask for.

    python tests/prebuild_models.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def model_requests() -> list[tuple[str, tuple[str, ...] | None]]:
    """(built-in robot, terms) pairs; None: the robot's default terms."""
    from robid.model.loader import builtin_robot_names

    return [(name, terms) for name in builtin_robot_names() for terms in (None, ("rigid",))]


def derive(request: tuple[str, tuple[str, ...] | None]) -> tuple[str, float]:
    """Derive (or find) one model and load its C library (which builds this processor's library); its label and
    the seconds it took."""
    from robid.robot import load_robot

    name, terms = request
    t0 = time.perf_counter()
    robot = load_robot(name, terms)
    robot.meta  # noqa: B018 -- derives, writes the cache entry, loads the compiled backend
    return f"{name} {'+'.join(robot.terms)}", time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: the cores)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for label, seconds in pool.map(derive, model_requests()):
            print(f"prebuild_models: {label}: {seconds:.1f} s", flush=True)
    print(f"prebuild_models: done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
