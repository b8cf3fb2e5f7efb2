"""Core benchmarks (issue 2): cold derivation, warm load, base-regressor evaluation, operation counts.

Run: ``python benchmarks/bench_core.py`` (or ``python benchmarks/run_all.py``). Prints a Markdown section to
paste into benchmarks/RESULTS.md. Cold and warm timings run in fresh subprocesses with empty / filled caches.
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


def evaluation_speed() -> list[str]:
    import robid

    path = TESTS_DATA / "ur10e_like.urdf"
    robot = robid.load_robot(path)
    base = robot.base_parameters()
    n = 10_000
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-2, 2, (n, 6)) for _ in range(3))
    buffer = base.regressor(q, qd, qdd)  # the evaluator owns its output buffer, as pinocchio's Data does
    wall, cpu = [], []
    for _ in range(7):
        t0, c0 = time.perf_counter(), time.process_time()
        base.regressor(q, qd, qdd, out=buffer)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    robid_us = min(wall) / n * 1e6
    rows = [
        f"Base regressor ({len(base.names)} columns, terms {', '.join(robot.terms)}), UR10e-like URDF, N = {n}:",
        f"- robid generated code ({'C backend' if base._c is not None else 'numpy'}): **{robid_us:.2f} us/sample**"
        f" wall (best of 7; median {np.median(wall) / n * 1e6:.2f}, CPU {min(cpu) / n * 1e6:.2f})",
    ]
    t_np = []
    for _ in range(7):
        t0 = time.perf_counter()
        base._module.base_regressor(q, qd, qdd)
        t_np.append(time.perf_counter() - t0)
    rows.append(f"- robid generated numpy code alone: {min(t_np) / n * 1e6:.2f} us/sample wall (best of 7)")
    try:
        import pinocchio as pin
    except ImportError:
        rows.append("- pinocchio not installed: comparison skipped")
        return rows
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    m = 2000
    t0 = time.perf_counter()
    for k in range(m):
        pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])
    pin_us = (time.perf_counter() - t0) / m * 1e6
    rows.append(
        f"- pinocchio computeJointTorqueRegressor called per sample from Python (rigid part only, 60 columns):"
        f" {pin_us:.2f} us/sample -> robid is **{pin_us / robid_us:.1f}x** faster per sample"
    )
    return rows


def operation_counts() -> list[str]:
    import robid
    from robid.symbolic.derive import customised_operation_counts

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
    print("### Derivation + base parameters + code generation (fresh process; cold = empty cache)\n")
    print("\n".join(derivation_times()))
    print("\n### Evaluation speed\n")
    print("\n".join(evaluation_speed()))
    print("\n### Operation counts (rigid bodies only, after CSE)\n")
    print("\n".join(operation_counts()))


if __name__ == "__main__":
    main()
