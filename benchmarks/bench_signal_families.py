"""The signal stage on the motions robots make (issue 31): per joint, robid's rms qdd error against the plain
recipe (zero-phase Butterworth of order 4 at the automatic cut-off, numpy.gradient twice) and against the
Butterworth of least error in hindsight, on records drawn at random from the families of
tests/oracles/signal_families.py (closed-form accelerations; a quarter with jittered stamps, a third logged
with 4 or 5 decimals, 100 Hz - 5 kHz, encoder noise 1e-6 - 3e-4 rad), robid at its defaults.

Prints the Markdown section of benchmarks/RESULTS.md: per family the distribution (median, 95th percentile,
worst) of robid / plain and robid / best, and the acceptance counts of issue 31. ``--cases N`` records per
family (default 50: 250 records, 750 joints), ``--seed S`` the first seed (default 1000: the guard's margin was
set on seeds 0-29 and 100-129).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robid.signals import process  # noqa: E402
from tests.oracles import signal_families as sf  # noqa: E402

#: errors below this (rad/s^2) are rounding: a joint at rest logged as a constant has 0 either way (a constant
#: through sosfiltfilt and two differences at 5 kHz: eps |q| / h^2 ~ 1e-8)
TINY = 1e-8


def run_family(family: str, seeds: range) -> dict:
    ratios_plain, ratios_best, periodic_gain, modes, kept_plain, seconds = [], [], [], {}, 0, 0.0
    worst = (0.0, "")
    for seed in seeds:
        record = sf.draw(family, seed)
        start = time.perf_counter()
        p = process(record.measurement)
        seconds += time.perf_counter() - start
        e = sf.errors(record, p)
        robid, plain, best = (np.maximum(e[k], TINY) for k in ("robid", "plain", "best"))
        rp, rb = robid / plain, robid / best
        ratios_plain.append(rp)
        ratios_best.append(rb)
        modes[p.mode] = modes.get(p.mode, 0) + 1
        kept_plain += p.guard.kept.count("plain")
        if p.mode == "periodic" and p.n_periods >= 2:
            periodic_gain.append(rp)
        if rp.max() > worst[0]:
            worst = (float(rp.max()), f"seed {seed}: {record.description} ({p.mode})")
    rp, rb = np.concatenate(ratios_plain), np.concatenate(ratios_best)
    gain = np.array([g.max() for g in periodic_gain]) if periodic_gain else np.array([])
    return {"plain": rp, "best": rb, "gain": gain, "modes": modes, "kept_plain": kept_plain, "worst": worst,
            "seconds": seconds, "records": len(seeds)}


def quantiles(x: np.ndarray) -> str:
    return f"{np.median(x):.3g}, {np.quantile(x, 0.95):.3g}, {x.max():.4g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--families", default=",".join(sf.FAMILIES), help="comma-separated (default: all)")
    args = ap.parse_args()
    seeds = range(args.seed, args.seed + args.cases)
    results = {family: run_family(family, seeds) for family in args.families.split(",")}
    print(f"\n## Signal stage on the motions robots make (issue 31) -- {datetime.date.today()}, "
          f"{platform.machine()} {platform.processor() or ''}".rstrip() + f", {platform.python_version()}\n")
    print(f"`python benchmarks/bench_signal_families.py --cases {args.cases} --seed {args.seed}`: per family "
          f"{args.cases} records of 3 joints drawn from tests/oracles/signal_families.py, robid at its defaults; "
          "per joint the rms qdd error over the samples robid's output stands for.\n")
    print("| family | paths taken | robid / plain: median, 95 %, worst | robid / best Butterworth: median, 95 %, "
          "worst | joints on the plain recipe | s per record |")
    print("|---|---|---|---|---|---|")
    for family, r in results.items():
        modes = ", ".join(f"{k} {v}" for k, v in sorted(r["modes"].items()))
        print(f"| {family} | {modes} | {quantiles(r['plain'])} | {quantiles(r['best'])} | "
              f"{r['kept_plain']} of {r['plain'].size} | {r['seconds'] / r['records']:.2f} |")
    every = np.concatenate([r["plain"] for r in results.values()])
    best = np.concatenate([r["best"] for r in results.values()])
    gain = np.concatenate([r["gain"] for r in results.values() if r["gain"].size])
    print(f"\nAcceptance (issue 31), over {every.size} joints of {sum(r['records'] for r in results.values())} "
          f"records: robid <= plain on {np.sum(every <= 1.0 + 1e-9)} ({100 * np.mean(every <= 1.0 + 1e-9):.1f} %); "
          f"within 1.3 x the best Butterworth on {100 * np.mean(best <= 1.3):.1f} %; periodic records with >= 2 "
          f"whole periods (averaged path), worst joint >= 100 x better than plain on {np.sum(gain <= 0.01)} of "
          f"{gain.size} ({100 * np.mean(gain <= 0.01):.1f} %).")
    for family, r in results.items():
        if r["gain"].size:
            print(f"- {family}: worst joint >= 100 x better than plain on {np.sum(r['gain'] <= 0.01)} of "
                  f"{r['gain'].size} records with >= 2 whole periods; >= 10 x on {np.sum(r['gain'] <= 0.1)}")
    for family, r in results.items():
        if r["plain"].max() > 1.0 + 1e-9:
            print(f"- {family}: worst robid / plain {r['worst'][0]:.3g} at {r['worst'][1]}")


if __name__ == "__main__":
    main()
