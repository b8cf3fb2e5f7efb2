"""Derive and compile the built-in robots' models into ``$ROBID_CACHE_DIR`` before the test suite runs.

``.ci/run`` calls it once, before pytest: the models most test files share are then derived in parallel, one
process per core, instead of inside the first test that needs each of them while the other worker waits on the
cache entry's lock (robid/symbolic/cache.py). A test never depends on it: a model missing here is derived by the
first test that needs it, as before. Each built-in robot with its default terms (robid.model.terms.default_terms)
and with the rigid bodies alone, the two sets the tests ask for, and the test robots of tests/data that the
dynamics oracles derive with the rigid bodies alone (tests/test_dynamics_oracles.py). A request that fails is
reported and left to the tests (which derive it again and fail with the whole message). Besides, the (robot,
terms) pairs that fast-tier tests derived themselves (:data:`FAST_TIER_REQUESTS`, measured by logging every
derivation of a fast-tier run): other term sets of built-in robots and of the robot files of tests/data and
benchmarks/robots. The models are submitted largest first (by joints, then terms), so that no long derivation
starts last and runs alone on one core.

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
ROOT = DATA.parents[1]
#: test robots derived with the rigid bodies alone by several tests (measured: tests/test_dynamics_oracles.py and
#: the closed-chain tests)
DATA_ROBOTS = ("panda_gaz.urdf", "panda_gaz.yaml", "ur10e_like.urdf", "ur10e_like_wall.urdf", "merge_fixed.urdf",
               "rpr_prismatic.urdf", "rrr_mdh.yaml", "rpr_dh.yaml", "planar_2r.yaml")
_DRIVES = ("rigid", "rotor", "viscous", "coulomb")
_DEFAULT6 = (*_DRIVES, "offset")
#: (robot, terms) derived inside fast-tier tests with the cache of the run (measured 2026-11-29: every derivation of
#: a fast-tier run logged with its test; models the tests build in their own folders or caches are not here).
#: A robot path is relative to the repository; None: the robot's default terms. A stale entry costs prebuild time,
#: never a test.
FAST_TIER_REQUESTS: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("puma560", _DRIVES),  # test_identification_nonperiodic.py
    ("tests/data/mjcf/ur10e_arm.xml", None),  # test_mjcf_acceptance.py
    ("tests/data/mjcf/features.xml", None),  # test_mjcf_reader.py
    ("benchmarks/robots/stanford.yaml", ("rigid",)),  # test_operations.py
    ("kr_heavy", ("rigid", "compensator")),  # test_elastic_static_deflection.py
    ("kr90_elastic", ("rigid", "compensator")),  # test_elastic_assadi.py
    ("tx200_elastic", ("rigid", "compensator")),  # test_elastic_assadi.py
    ("tx200_3axis", ("rigid", "rotor")),  # test_dynamics_oracles.py
    ("tx200_3axis", _DEFAULT6),  # test_excitation_gradient.py
    ("tx200_3axis", (*_DRIVES, "compensator")),  # test_fleet_drift.py
    ("tests/data/ur10e_like.urdf", _DEFAULT6),  # test_console_lines.py
    ("tests/data/arm3_urdf.yaml", _DEFAULT6),  # test_export_model.py
    ("tests/data/arm3_urdf.yaml", None),  # test_urdf_robot_file.py (with drive_coupling)
    ("tests/data/parallelogram_2r.yaml", None),  # test_closed_chain_model.py
    ("tests/data/fourbar_planar.yaml", None),  # test_closed_chain_model.py
)


def model_requests(only: list[str] | None = None) -> list[tuple[str, tuple[str, ...] | None]]:
    """(robot, terms) pairs; None: the robot's default terms."""
    from robid.model.loader import builtin_robot_names

    requests = [(name, terms) for name in builtin_robot_names() for terms in (None, ("rigid",))]
    requests += [(str(DATA / name), ("rigid",)) for name in DATA_ROBOTS]
    requests += [(name if name in builtin_robot_names() else str(ROOT / name), terms)
                 for name, terms in FAST_TIER_REQUESTS]
    if only:
        requests = [r for r in requests if Path(r[0]).stem in only or Path(r[0]).name in only]
    return sorted(requests, key=_size, reverse=True)  # stable: equal sizes keep their order


def _size(request: tuple[str, tuple[str, ...] | None]) -> tuple[int, int]:
    """(joints, terms) of a request: the order of the submissions, largest first (0 for a file that does not read:
    its derivation fails quickly and is reported)."""
    from robid.model.loader import read_robot
    from robid.model.terms import default_terms

    try:
        model = read_robot(request[0])
        return model.dof, len(request[1] if request[1] is not None else default_terms(model))
    except Exception:  # noqa: BLE001 -- reported by derive()
        return 0, 0


def derive(request: tuple[str, tuple[str, ...] | None]) -> str:
    """Derive (or find) one model and, for a robot's default terms (the models campaigns and identifications
    evaluate on large batches), build and load this processor's C library; one line saying what and how long, or
    why it failed. The other term sets are derived only: the tests that use them evaluate small batches, which run
    the numpy code (robid.dynamics.compiled.C_MIN_SAMPLES), and a test that needs a library builds it once."""
    from robid.robot import load_robot

    name, terms = request
    label = f"{Path(name).name} {'+'.join(terms) if terms else 'default terms'}"
    t0 = time.perf_counter()
    try:
        robot = load_robot(name, terms)
        robot.meta  # noqa: B018 -- derives and writes the cache entry
        if terms is None:
            robot._c  # noqa: B018 -- builds and loads this processor's C library
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
