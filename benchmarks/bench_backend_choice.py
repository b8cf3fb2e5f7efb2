"""What a model costs to derive and to evaluate, and why robid chooses its backend per call (docs/model.md "When the
library is used"; robid.dynamics.compiled).

Run: ``python benchmarks/bench_backend_choice.py``. On the UR10e with its default terms, in a fresh cache:

* derivation split: the whole symbolic derivation, its exact base grouping (sympy's rationals: gmpy2's GMP numbers
  where installed), and compiling this processor's C library (built when first needed, not with the derivation);
* per call: the numpy code against the C library for 1 to 10 000 samples (best of repeated calls), the base
  regressor; and the design's nominal torques (``inverse_dynamics`` against ``inverse_dynamics_for_many_calls``).
"""

from __future__ import annotations

import os
import platform
import tempfile
import time


def _best_ms(fn, states, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*states)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    os.environ["ROBID_CACHE_DIR"] = tempfile.mkdtemp(prefix="robid-bench-backend-")
    import numpy as np
    from sympy.external.gmpy import GROUND_TYPES

    import robid
    from robid.symbolic import base_parameters

    grouping = []
    exact = base_parameters.exact_grouping

    def timed(*args, **kwargs):
        t = time.perf_counter()
        out = exact(*args, **kwargs)
        grouping.append(time.perf_counter() - t)
        return out

    base_parameters.exact_grouping = timed
    robot = robid.load_robot("ur10e")
    t = time.perf_counter()
    robot.meta  # noqa: B018 -- derives
    derive_s = time.perf_counter() - t
    t = time.perf_counter()
    library = robot._c  # builds this processor's library
    compile_s = time.perf_counter() - t
    base = robot.base_parameters()
    print(f"## Backend choice (`benchmarks/bench_backend_choice.py`) -- {time.strftime('%Y-%m-%d')}, "
          f"{platform.node()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"sympy ground types {GROUND_TYPES}\n")
    print(f"- UR10e, default terms ({len(base.names)} base parameters): derivation {derive_s:.1f} s (exact base "
          f"grouping {sum(grouping):.1f} s), C library {compile_s:.1f} s "
          f"({'built' if library is not None else 'no compiler'})")
    if library is None:
        return
    print("\n| samples per call | numpy [ms] | C library [ms] | torques: inverse_dynamics [ms] | "
          "inverse_dynamics_for_many_calls [ms] |")
    print("|---|---|---|---|---|")
    for n in (1, 10, 100, 1000, 10000):
        rng = np.random.default_rng(n)
        states = tuple(rng.uniform(-2, 2, (n, robot.dof)) for _ in range(3))
        repeats = max(5, 20000 // n)
        numpy_ms = _best_ms(base._module.base_regressor, states, repeats)
        c_ms = _best_ms(lambda *x: library.evaluate("base_regressor", *x), states, repeats)
        id_ms = _best_ms(robot.inverse_dynamics, states, repeats)
        many_ms = _best_ms(robot.inverse_dynamics_for_many_calls, states, repeats)
        print(f"| {n} | {numpy_ms:.3f} | {c_ms:.3f} | {id_ms:.3f} | {many_ms:.3f} |")


if __name__ == "__main__":
    main()
