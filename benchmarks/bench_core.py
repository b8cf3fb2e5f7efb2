"""Core benchmarks (issue 2): cold derivation, warm load, base-regressor evaluation, operation counts.

Run: ``python benchmarks/bench_core.py`` (or ``python benchmarks/run_all.py``; ``--evaluation``: the evaluation
speed alone, robid against pinocchio in one process). Prints a Markdown section to paste into
benchmarks/RESULTS.md. Cold and warm timings run in fresh subprocesses with empty / filled caches.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TESTS_DATA = ROOT / "tests" / "data"

COLD = """
import time, sys
t0 = time.perf_counter()
import robid
r = robid.load_robot({robot!r})
b = r.base_parameters()
print(time.perf_counter() - t0, len(r.parameter_names), len(b.names), b.exact)
"""


def run_timed(code: str, cache: str) -> list[str]:
    env = dict(os.environ, ROBID_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def derivation_times() -> list[str]:
    rows = ["| robot | dof | standard | base | exact | cold (s) | warm load (s) |", "|---|---|---|---|---|---|---|"]
    robots = [
        ("kr_heavy", 6),
        ("puma560", 6),
        ("ur10e", 6),
        (str(TESTS_DATA / "panda_gaz.urdf"), 7),
    ]
    for robot, dof in robots:
        with tempfile.TemporaryDirectory() as cache:
            cold = run_timed(COLD.format(robot=robot), cache)
            warm = min(float(run_timed(COLD.format(robot=robot), cache)[0]) for _ in range(3))
        name = Path(robot).name
        rows.append(f"| {name} | {dof} | {cold[1]} | {cold[2]} | {cold[3]} | {float(cold[0]):.2f} | {warm:.3f} |")
    return rows


def _best_us(fn, n: int, repeats: int = 15) -> tuple[float, float]:
    """Best and median wall time of ``fn()`` per sample (us) over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) / n * 1e6, float(np.median(times)) / n * 1e6


_STREAM_C = r"""
#include <immintrin.h>
void stream_zeros(double *y, long n) {
    long i = 0;
    for (; i < n && ((unsigned long)(y + i) & 31); ++i) y[i] = 0.0;
    for (; i + 4 <= n; i += 4) _mm256_stream_pd(y + i, _mm256_setzero_pd());
    for (; i < n; ++i) y[i] = 0.0;
    _mm_sfence();
}
"""


def _streaming_store():
    """``stream_zeros(y, n)``: zeros written with AVX non-temporal stores (x86 with AVX and a compiler only)."""
    import ctypes

    from robid.symbolic.cbuild import compiler

    cc = compiler()
    if cc is None or platform.machine() not in ("x86_64", "AMD64"):
        return None
    folder = Path(tempfile.mkdtemp(prefix="robid-bench-"))
    (folder / "s.c").write_text(_STREAM_C)
    try:
        subprocess.run(
            [cc, "-O2", "-mavx", "-fPIC", "-shared", "-o", str(folder / "s.so"), str(folder / "s.c")],
            check=True,
            capture_output=True,
        )
        fn = ctypes.CDLL(str(folder / "s.so")).stream_zeros
    except (OSError, subprocess.SubprocessError):
        return None
    fn.argtypes = [np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS"), ctypes.c_long]
    fn.restype = None
    return fn


def evaluation_speed() -> list[str]:
    """Base regressor per sample: robid's libraries (this processor's, portable) and numpy code, and pinocchio's
    ``computeJointTorqueRegressor`` called per sample from Python, in one process and one run; the ratio from
    rounds that time robid and pinocchio one after the other (:func:`_interleaved`), so that the machine's speed
    drift reaches both."""
    import robid
    from robid.dynamics.compiled import CRegressors, aligned_empty

    path = TESTS_DATA / "ur10e_like.urdf"
    robot = robid.load_robot(path)
    base = robot.base_parameters()
    n = 10_000
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-2, 2, (n, 6)) for _ in range(3))
    buffer = base.regressor(q, qd, qdd)  # the evaluator owns its output buffer, as pinocchio's Data does
    lib = base._c
    label = "numpy" if lib is None else ("C, built for this processor" if lib.native else "C, portable")
    robid_us, robid_med = _best_us(lambda: base.regressor(q, qd, qdd, out=buffer), n, 41)
    rows = [
        f"Base regressor ({len(base.names)} columns, terms {', '.join(robot.terms)}), UR10e-like URDF, N = {n},"
        f" output buffer reused ({buffer.nbytes / 1e6:.1f} MB):",
        f"- robid ({label}): **{robid_us:.3f} us/sample** wall (best of 41; median {robid_med:.3f})",
    ]
    if lib is not None:
        m = 128  # output of 0.33 MB: in the processor's cache (regular stores), the arithmetic alone
        fn, _ = lib._fns["base_regressor"]
        qs, qds, qdds = (np.ascontiguousarray(a[:m]) for a in (q, qd, qdd))
        small = aligned_empty((m, 6, len(base.names)))
        in_cache, _ = _best_us(lambda: fn(qs, qds, qdds, m, small), m, 400)
        rows.append(
            f"- robid, same library called directly (ctypes), N = {m} (output stays in cache): {in_cache:.3f} us/sample"
        )
        if lib.native:
            folder = lib.path.parent
            from robid.symbolic.cache import compiled_library  # built on request (robid.symbolic.cbuild)

            portable_so = compiled_library(folder, folder.name, "portable")
            portable = CRegressors(portable_so, 6, len(robot.parameter_names), len(base.names))
            port_us, _ = _best_us(lambda: portable.evaluate("base_regressor", q, qd, qdd, out=buffer), n)
            rows.append(f"- robid portable library (no -march=native): {port_us:.3f} us/sample")
    np_us, _ = _best_us(lambda: base._module.base_regressor(q, qd, qdd), n, 7)
    rows.append(f"- robid generated numpy code alone: {np_us:.2f} us/sample wall (best of 7)")
    fill_us, _ = _best_us(lambda: buffer.fill(0.0), n)
    rows.append(
        f"- writing the output buffer alone, numpy fill (cached stores): {fill_us:.3f} us/sample"
        f" = {buffer.nbytes / (fill_us * n * 1e-6) / 1e9:.1f} GB/s"
    )
    stream = _streaming_store()
    if stream is not None:
        nt_us, _ = _best_us(lambda: stream(buffer.reshape(-1), buffer.size), n)
        rows.append(
            f"- writing the output buffer alone, non-temporal stores (the floor of any evaluator writing this"
            f" output): {nt_us:.3f} us/sample = {buffer.nbytes / (nt_us * n * 1e-6) / 1e9:.1f} GB/s"
        )
    try:
        import pinocchio as pin
    except ImportError:
        rows.append("- pinocchio not installed: comparison skipped")
        return rows
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    m = 1000

    def pinocchio_loop():
        for k in range(m):
            pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])

    rounds = 30
    robid_t, pin_t = _interleaved(lambda: base.regressor(q, qd, qdd, out=buffer), n, pinocchio_loop, m, rounds)
    ratios = pin_t / robid_t
    rows += [
        f"- interleaved, {rounds} rounds of robid (N = {n}, output reused) then pinocchio {pin.__version__}"
        f" computeJointTorqueRegressor called per sample from Python ({m} samples; rigid part only, 60 columns):",
        f"  robid best {robid_t.min():.3f} / median {np.median(robid_t):.3f} us/sample,"
        f" pinocchio best {pin_t.min():.2f} / median {np.median(pin_t):.2f} us/sample",
        f"- **ratio pinocchio / robid: {pin_t.min() / robid_t.min():.1f}x best to best, median of the rounds'"
        f" ratios {np.median(ratios):.1f}x** (range {ratios.min():.1f}-{ratios.max():.1f}; target >= 20x)",
    ]
    return rows


def _interleaved(fn_a, n_a: int, fn_b, n_b: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample wall times (us) of ``fn_a`` and ``fn_b`` timed alternately, one call each per round: the two see
    the same machine speed (this VM's drifts by up to twofold within minutes), so the rounds' ratios are the robust
    comparison."""
    a, b = np.empty(rounds), np.empty(rounds)
    for r in range(rounds):
        t0 = time.perf_counter()
        fn_a()
        t1 = time.perf_counter()
        fn_b()
        t2 = time.perf_counter()
        a[r], b[r] = (t1 - t0) / n_a * 1e6, (t2 - t1) / n_b * 1e6
    return a, b


def operation_counts() -> list[str]:
    import robid
    from robid.symbolic.operations import customised_operation_counts

    rows = [
        "| robot | inverse dynamics, numeric parameters folded (mult/add = total) | generic parameters (runtime input)"
        " | base inverse dynamics | base regressor | El-Rayyes NEDYN+CLEAR | SYMORO |",
        "|---|---|---|---|---|---|---|",
    ]
    published = {"puma560": ("204/154 = 358", "-"), "stanford": ("174/135 = 309", "142/99 = 241")}
    for name, robot in (("puma560", "puma560"), ("stanford", str(HERE / "robots" / "stanford.yaml"))):
        r = robid.load_robot(robot, terms=("rigid",))
        c = customised_operation_counts(r.model, r.terms, r.parameters)
        ops = r.meta["operation_counts"]

        def fmt(d):
            return f"{d['mul']}/{d['add']} = {d['mul'] + d['add']}"

        rows.append(
            f"| {name} | {fmt(c)} | {fmt(ops['inverse_dynamics'])} | {fmt(ops['base_inverse_dynamics'])} |"
            f" {fmt(ops['base_regressor'])} | {published[name][0]} | {published[name][1]} |"
        )
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def main() -> None:
    print(f"## Core (issue 2) — {time.strftime('%Y-%m-%d')} — {machine()}\n")
    if "--evaluation" in sys.argv[1:]:  # the evaluation speed alone (robid against pinocchio)
        print("\n".join(evaluation_speed()))
        return
    print("### Derivation + base parameters + code generation (fresh process; cold = empty cache)\n")
    print("\n".join(derivation_times()))
    print("\n### Evaluation speed\n")
    print("\n".join(evaluation_speed()))
    print("\n### Operation counts (rigid bodies only, after CSE)\n")
    print("\n".join(operation_counts()))


if __name__ == "__main__":
    main()
