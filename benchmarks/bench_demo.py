"""Demo benchmark (issue 6): `robid demo` cold (empty derivation cache, empty output folder).

Run: ``python benchmarks/bench_demo.py``. Prints wall and CPU time of the whole campaign and its results.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ROBID_CACHE_DIR=str(Path(tmp) / "cache"))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "robid", "demo", "--out", str(Path(tmp) / "demo")], env=env,
                       check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads((Path(tmp) / "demo" / "reports" / "demo" / "result.json").read_text())
    validation = [m["nrmse_percent"] for m in result["validation"][0]["per_joint"]]
    z = max(abs(p["value"] - p["truth"]) / p["std"] for p in result["base_parameters"])
    print(f"## Demo (issue 6) — {time.strftime('%Y-%m-%d')}\n")
    print(f"- `robid demo`, cold: **{wall:.0f} s wall**, {usage.ru_utime + usage.ru_stime:.0f} s CPU "
          f"(peak RSS {usage.ru_maxrss / 1024:.0f} MB)")
    print(f"- validation NRMSE per joint [%]: {', '.join(f'{v:.2f}' for v in validation)}")
    print(f"- {len(result['base_parameters'])} base parameters, largest |estimate - truth| / std = {z:.2f}")


if __name__ == "__main__":
    main()
