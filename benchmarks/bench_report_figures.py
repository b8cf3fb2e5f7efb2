"""Report figures benchmark: the time of rendering a report's HTML from its data (the figures are nearly all of
it) and, with ``--dump DIR``, every figure's PNG written to ``DIR/<case>/NNN.png`` so that two versions of the
figure code can be compared byte for byte and pixel for pixel (``--compare DIR_A DIR_B``).

Run: ``python benchmarks/bench_report_figures.py [CASE=RESULT.json[:TRAJ.json] ...] [--repeat N] [--dump DIR]``
with, e.g., the demo campaign's and the UR10e campaign's RESULT.json (``robid demo --out D``; ``robid campaign
measurements/ur10e/campaign.yaml --out D``); without a case, the built-in demo's (``robid demo`` run in a
temporary folder first). The report data (record read, robot loaded, bands) is built once
per case and not timed; ``build_report`` is timed ``N`` times with robid's figure_png and ``N`` times with the
route it replaced (savefig, PNG decoded and quantised, figure cleared), alternately in one process so that a
shared machine's load falls on both alike (CPU time, median and best, and wall time)."""

from __future__ import annotations

import argparse
import base64
import io
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PNG = re.compile(r'src="data:image/png;base64,([^"]+)"')


def _data(result: str, traj: str | None):
    from robid.report import from_result_file

    return from_result_file(result, trajectory=traj)


def savefig_route(fig) -> bytes:
    """The figures' PNG as robid made it before figure_png: savefig, the 32-bit PNG decoded and quantised, and
    the figure cleared."""
    from robid.report import _figures as F

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=F.DPI, metadata={"Software": None})
    fig.clear()
    return F.compact_png(buf.getvalue())


def _timed(build, data) -> tuple[float, float, str]:
    t0, c0 = time.perf_counter(), time.process_time()
    html = build(data)
    return time.perf_counter() - t0, time.process_time() - c0, html


def run(cases: dict, repeat: int, dump: Path | None) -> None:
    """Each case's report built ``repeat`` times with figure_png and with :func:`savefig_route`, alternately (the
    same load on both); the two reports must be equal."""
    from robid.report import _figures as F
    from robid.report import build_report

    fast = F.figure_png
    for name, (result, traj) in cases.items():
        data = _data(result, traj)
        cpu = {"figure_png": [], "savefig": []}
        wall = {"figure_png": [], "savefig": []}
        html = {}
        for i in range(repeat):
            for route in (("figure_png", "savefig") if i % 2 else ("savefig", "figure_png")):
                F.figure_png = fast if route == "figure_png" else savefig_route
                w, c, html[route] = _timed(build_report, data)
                wall[route].append(w)
                cpu[route].append(c)
        F.figure_png = fast
        pngs = PNG.findall(html["figure_png"])
        same = "equal" if html["figure_png"] == html["savefig"] else "DIFFERENT"
        print(f"{name}: {len(pngs)} figures, reports {same}, html {len(html['savefig']) / 1e6:.2f} MB; build_report "
              f"CPU median over {repeat} (best; wall median): " + ", ".join(
                  f"{k} {statistics.median(v):.2f} s ({min(v):.2f}; {statistics.median(wall[k]):.2f})"
                  for k, v in cpu.items()), flush=True)
        if dump is not None:
            folder = dump / name
            folder.mkdir(parents=True, exist_ok=True)
            for i, b64 in enumerate(pngs):
                (folder / f"{i:03d}.png").write_bytes(base64.b64decode(b64))


def compare(a: Path, b: Path) -> int:
    """Number of figures that differ (bytes or decoded pixels) between two dumps."""
    import numpy as np
    from PIL import Image

    bad = 0
    files_a = sorted(p.relative_to(a) for p in a.rglob("*.png"))
    files_b = sorted(p.relative_to(b) for p in b.rglob("*.png"))
    if files_a != files_b:
        print(f"different figure sets: {len(files_a)} vs {len(files_b)}")
        return max(len(files_a), len(files_b))
    same_bytes = 0
    for rel in files_a:
        x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
        px = [np.asarray(Image.open(io.BytesIO(v)).convert("RGBA")) for v in (x, y)]
        if x == y:
            same_bytes += 1
        elif px[0].shape != px[1].shape or not np.array_equal(*px):
            bad += 1
            print(f"{rel}: pixels differ")
        else:
            print(f"{rel}: same pixels, other bytes")
    print(f"{len(files_a)} figures: {same_bytes} byte-identical, {bad} with other pixels")
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="NAME=RESULT.json[:TRAJ.json]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        sys.exit(1 if compare(*args.compare) else 0)
    cases = {}
    for spec in args.cases:
        name, _, paths = spec.partition("=")
        result, _, traj = paths.partition(":")
        cases[name] = (result, traj or None)
    if cases:
        run(cases, args.repeat, args.dump)
        return
    with tempfile.TemporaryDirectory() as tmp:  # no case given (run_all.py): the built-in demo's report
        subprocess.run([sys.executable, "-m", "robid", "demo", "--out", tmp, "-q"], check=True)
        demo = Path(tmp)
        run({"demo": (str(demo / "reports/demo/result.json"), str(demo / "trajectories/demo/ident.json"))},
            args.repeat, args.dump)


if __name__ == "__main__":
    main()
