"""Fleet benchmark: wall time of the virtual demo fleet (``robid fleet --demo``: 6 robots, 2 dates, 12 campaigns)
serially (``--workers 0``) and on a local Dask cluster of 2 worker processes, both with the derivation cache
already filled (the two robot types derived once, first) and fresh output folders.

Run: ``python benchmarks/bench_fleet.py``. Prints a Markdown section for RESULTS.md.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(out: Path, workers: int, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "robid", "-q", "fleet", "--demo", "--out", str(out), "--workers",
                    str(workers)], env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ROBID_CACHE_DIR=str(Path(tmp) / "cache"), OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1", MPLBACKEND="Agg")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import robid; [robid.load_robot(n, terms=t).base_parameters() "
                        "for n, t in (('do_2r_elastic', ('rigid', 'rotor', 'viscous', 'coulomb')), "
                        "('tx200_3axis', None))]"],
                       env=env, check=True)
        derive = time.perf_counter() - t0
        serial = _run(Path(tmp) / "serial", 0, env)
        dask2 = _run(Path(tmp) / "dask2", 2, env)
        again = _run(Path(tmp) / "dask2", 2, env)
    print(f"## Fleet (robid fleet --demo) — {time.strftime('%Y-%m-%d')}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores\n")
    print("12 campaigns (6 virtual robots x 2 dates; design, 2 simulated runs, identification each), derivation "
          f"cache filled first ({derive:.1f} s for both robot types), wall time of the whole command:\n")
    print("| run | wall [s] | speed-up |")
    print("|---|---|---|")
    print(f"| serial (`--workers 0`) | {serial:.1f} | 1.00 |")
    print(f"| local Dask cluster, 2 workers | {dask2:.1f} | {serial / dask2:.2f} |")
    print(f"| the same again, 2 workers (nothing recomputed) | {again:.1f} | |")


if __name__ == "__main__":
    main()
