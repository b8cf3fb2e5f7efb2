"""Fuzzing robid's readers at scale (issue 30, docs/security.md): 10 000 mutated measurement CSVs, mapping, robot
(YAML, URDF), RESULT, TRAJ, campaign, fleet and SPEC files (tests/fuzzing.py), each read by its reader; counts of
read / refused (one line) / tracebacks, and the process's peak memory (max RSS). Then large inputs, each in a
process of its own so that its own peak is measured: files just under and above the size limits, a YAML alias
bomb, JSON and YAML nested 200 000 deep, a 20 MB binary file named .csv.

    python benchmarks/bench_fuzz.py [N]          # N mutated inputs (default 10 000), seed 0

Acceptance (issue 30): 0 tracebacks; peak memory under 500 MB for inputs under 1 MB; a bounded figure for large
ones.
"""

from __future__ import annotations

import collections
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fuzz(n: int, seed: int = 0) -> dict:
    import fuzzing

    seeds, readers = fuzzing.seeds(), fuzzing.readers()
    kinds = sorted(seeds)
    counts: dict[str, collections.Counter] = {k: collections.Counter() for k in kinds}
    bugs: list[str] = []
    largest = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for i in range(n):
            rnd = random.Random(seed * 1_000_003 + i)
            kind = kinds[i % len(kinds)]
            try:
                counts[kind][fuzzing.run_one(rnd, kind, seeds, readers[kind], Path(folder))] += 1
            except Exception as exc:  # a traceback: the bug is reported, the run goes on
                counts[kind]["traceback"] += 1
                bugs.append(f"input {i} ({kind}): {type(exc).__name__}: {str(exc)[:200]}")
            largest = max(largest, *(p.stat().st_size for p in Path(folder).glob("fuzz-*")))
    return {"n": n, "seconds": time.perf_counter() - t0, "counts": counts, "bugs": bugs,
            "largest_input_bytes": largest, "peak_mb": _max_rss_mb()}


_LARGE = {
    "CSV of sparse zeros just under the 1024 MB table limit": ("csv", "sparse", 1_000_000_000),
    "CSV of 1.1 GB, sparse (above the table limit)": ("csv", "sparse", 1_100_000_000),
    "CSV of 60 MB, 1.2 million valid rows": ("csv", "rows", 1_200_000),
    "JSON of 70 MB (above the 64 MB document limit)": ("json", "sparse", 70_000_000),
    "YAML of 7.9 MB, one long list (just under the 8 MB YAML limit)": ("yaml", "list", 870_000),
    "YAML of 60 MB, one long list (above the YAML limit)": ("yaml", "list", 7_500_000),
    "YAML alias bomb, 9^8 = 43 million nodes": ("yaml", "bomb", 0),
    "JSON nested 200 000 deep": ("json", "deep", 200_000),
    "YAML nested 200 000 deep": ("yaml", "deep", 200_000),
    "binary file named .csv, 20 MB of random bytes": ("csv", "random", 20_000_000),
}

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
import fuzzing
from robid.errors import RobidInputError
kind, path = sys.argv[1], Path(sys.argv[2])
reader = {{"csv": fuzzing.readers()["csv"], "json": fuzzing.readers()["trajectory"],
          "yaml": fuzzing.readers()["campaign"]}}[kind]
def status(key):  # kB figures of /proc/self/status, in MB
    line = next(l for l in open("/proc/self/status") if l.startswith(key + ":"))
    return int(line.split()[1]) / 1024
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) restarts here: not the parent's, not the imports'
before = status("VmRSS")
t0 = time.perf_counter()
try:
    reader(path)
    outcome = "read"
except RobidInputError as exc:
    outcome = "refused: " + str(exc).split(": ", 1)[-1][:110]
print(json.dumps({{"outcome": outcome, "seconds": time.perf_counter() - t0, "before_mb": before,
                  "peak_mb": status("VmHWM")}}))
"""


def _write_large(path: Path, how: str, size: int) -> None:
    import numpy as np

    if how == "sparse":
        with open(path, "wb") as f:
            f.truncate(size)
    elif how == "rows":
        t = np.arange(size) * 0.001
        data = np.column_stack([t, np.sin(t), np.cos(t), np.sin(2 * t), np.cos(3 * t)])
        with open(path, "w") as f:
            f.write("t,q1,q2,tau1,tau2\n")
            np.savetxt(f, data, delimiter=",", fmt="%.9g")
    elif how == "list":
        path.write_text("robid_campaign: 1\nname: big\nrobot: do_2r_elastic\ndescription: [" +
                        ", ".join("1234567" for _ in range(size)) + "]\n")
    elif how == "bomb":
        import fuzzing

        path.write_text("robid_campaign: 1\nname: b\nrobot: do_2r_elastic\n" + fuzzing.BOMB + "report: {title: *b7}\n")
    elif how == "deep":
        path.write_text("[" * size + "]" * size)
    else:
        path.write_bytes(random.Random(0).randbytes(size))


def large_inputs() -> list[tuple[str, dict, int]]:
    code = _CHILD.format(tests=str(HERE.parent / "tests"))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, (kind, how, size) in _LARGE.items():
            path = Path(folder) / f"large.{kind}"
            _write_large(path, how, size)
            done = subprocess.run([sys.executable, "-c", code, kind, str(path)], capture_output=True, text=True)
            if done.returncode != 0:
                result = {"outcome": "TRACEBACK: " + done.stderr.strip().splitlines()[-1][:200], "seconds": 0,
                          "before_mb": 0, "peak_mb": 0}
            else:
                result = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append((label, result, path.stat().st_size))
            path.unlink()
    return rows


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    result = fuzz(n)
    print(f"## Fuzzing the readers (issue 30) — {time.strftime('%Y-%m-%d')}, {platform.node()}, "
          f"{platform.machine()}, Python {platform.python_version()} (`benchmarks/bench_fuzz.py`)\n")
    total = collections.Counter()
    print("| reader | inputs | read | refused (one line) | tracebacks |\n|---|---|---|---|---|")
    for kind, c in result["counts"].items():
        total.update(c)
        print(f"| {kind} | {sum(c.values())} | {c['ok']} | {c['refused']} | {c['traceback']} |")
    print(f"| **all** | **{sum(total.values())}** | {total['ok']} | {total['refused']} | **{total['traceback']}** |\n")
    print(f"{n} inputs in {result['seconds']:.1f} s; largest input {result['largest_input_bytes'] / 1e3:.0f} kB; "
          f"peak memory of the whole run (max RSS, imports included) **{result['peak_mb']:.0f} MB**.\n")
    for bug in result["bugs"][:20]:
        print(f"- {bug}")
    print("\n| large input | outcome | time | peak memory of its process (VmHWM; before reading: VmRSS) |\n"
          "|---|---|---|---|")
    for label, r, size in large_inputs():
        print(f"| {label} ({size / 1e6:.0f} MB on disk) | {r['outcome']} | {r['seconds']:.2f} s | "
              f"{r['peak_mb']:.0f} MB ({r['before_mb']:.0f}) |")


if __name__ == "__main__":
    main()
