"""Demo benchmark (issue 6): `robid demo` cold (empty derivation cache, empty output folder).

Run: ``python benchmarks/bench_demo.py``. Prints wall and CPU time of the whole campaign and its results.
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from robid.io.result_file import read_result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ROBID_CACHE_DIR=str(Path(tmp) / "cache"))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "robid", "demo", "--out", str(Path(tmp) / "demo")], env=env,
                       check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        reports = Path(tmp) / "demo" / "reports" / "demo"
        record = read_result(reports / "result.json")
        sizes = {name: (reports / name).stat().st_size / 1e6 for name in ("result.json", "report.html")}
    validation = record.validation_data[0].fit.nrmse_percent()
    truth = record.references()["truth"]
    z = max(abs(p.value - t) / p.std for p, t in zip(record.base_parameters, truth, strict=True))
    print(f"## Demo (issue 6) — {time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} cores\n")
    print(f"- `robid demo`, cold: **{wall:.0f} s wall**, {usage.ru_utime + usage.ru_stime:.0f} s CPU "
          f"(peak RSS {usage.ru_maxrss / 1024:.0f} MB)")
    print(f"- validation NRMSE per joint [%]: {', '.join(f'{v:.2f}' for v in validation)}")
    print(f"- {len(record.base_parameters)} base parameters, largest |estimate - truth| / std = {z:.2f}")
    print(f"- RESULT.json {sizes['result.json']:.2f} MB, report.html {sizes['report.html']:.2f} MB")


if __name__ == "__main__":
    main()
