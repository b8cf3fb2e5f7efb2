"""Identification record and report benchmark: what building the record (fit, bands, series, spectra of every
run), writing and reading RESULT.json and rendering the report from it cost, and how large the files are.

Run: ``python benchmarks/bench_record.py``. Each case runs in its own process (peak memory per case). Cases,
6-axis puma560 with torques from its nominal inverse dynamics plus 1 % noise and 1e-5 rad encoder noise:

* periodic: identification and validation runs of 5 periods x 10 s at 200 Hz (10 000 samples each);
* non-periodic: identification and validation runs of 60 s at 1 kHz (60 000 samples each), ``mode=nonperiodic``.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "periodic, 2 x 10 000 samples": {"period": 10.0, "periods": 5, "rate": 200.0, "mode": "auto"},
    "non-periodic, 2 x 60 000 samples": {"period": 60.0, "periods": 1, "rate": 1000.0, "mode": "nonperiodic"},
}


def _measurement(robot, seed: int, period: float, periods: int, rate: float, path: Path) -> None:
    import numpy as np

    from robid.excitation.fourier import FourierTrajectory

    rng = np.random.default_rng(seed)
    lim = [j.limits for j in robot.model.joints]
    center = np.array([0.5 * (li.position[0] + li.position[1]) for li in lim])
    traj = FourierTrajectory(period, center, rng.normal(size=(6, 6)), rng.normal(size=(6, 6)), 4,
                             tuple(robot.joint_names)).project_rest()
    q, qd, qdd = traj.evaluate(np.linspace(0.0, period, 2000, endpoint=False))
    scale = min(min(0.3 * (li.position[1] - li.position[0]) / np.max(np.abs(q[:, j] - center[j])),
                    0.6 * li.velocity / np.max(np.abs(qd[:, j])), 0.6 * li.acceleration / np.max(np.abs(qdd[:, j])))
                for j, li in enumerate(lim))
    traj = FourierTrajectory(period, center, traj.a * scale, traj.b * scale, 4, traj.joint_names)
    t = np.arange(0.0, periods * period, 1.0 / rate)
    q, qd, qdd = traj.evaluate(t)
    tau = robot.inverse_dynamics(q, qd, qdd)
    tau = tau + rng.normal(size=tau.shape) * 0.01 * np.std(tau, axis=0)
    q = q + rng.normal(size=q.shape) * 1e-5
    header = ["t"] + [f"q{j + 1}" for j in range(6)] + [f"tau{j + 1}" for j in range(6)]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(header), comments="", fmt="%.12g")


def run_case(name: str, folder: Path) -> dict:
    import robid
    from robid.identification import IdentificationOptions, recording, run_identification
    from robid.io.result_file import read_result, write_result
    from robid.report import write_report_from_file
    from robid.signals import ProcessingOptions

    c = CASES[name]
    robot = robid.load_robot("puma560")
    for seed, stem in ((1, "id"), (2, "val")):
        _measurement(robot, seed, c["period"], c["periods"], c["rate"], folder / f"{stem}.csv")
    options = IdentificationOptions(processing=ProcessingOptions(mode=c["mode"], min_speed=0.05))
    t0 = time.perf_counter()
    building = []
    original = recording.identification_record

    def timed(work):
        s = time.perf_counter()
        out = original(work)
        building.append(time.perf_counter() - s)
        return out

    recording.identification_record = timed  # run_identification imports it when called
    ident = run_identification(robot, [folder / "id.csv"], options, validation_files=[folder / "val.csv"])
    total = time.perf_counter() - t0
    t1 = time.perf_counter()
    write_result(folder / "RESULT.json", ident.record)
    t_write = time.perf_counter() - t1
    t2 = time.perf_counter()
    back = read_result(folder / "RESULT.json")
    t_read = time.perf_counter() - t2
    t3 = time.perf_counter()
    write_report_from_file(folder / "report.html", folder / "RESULT.json", robot=robot)
    t_report = time.perf_counter() - t3
    return {
        "identify_s": total,
        "record_s": sum(building),
        "write_s": t_write,
        "read_s": t_read,
        "round_trip": back == ident.record,
        "result_mb": (folder / "RESULT.json").stat().st_size / 1e6,
        "report_s": t_report,
        "report_mb": (folder / "report.html").stat().st_size / 1e6,
        "samples": [r.samples for r in ident.record.runs],
        "validation_nrmse": [round(x, 3) for x in ident.record.validation_data[0].fit.nrmse_percent()],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run_case(sys.argv[2], Path(tmp))))
        return
    print(f"## Identification record and report — {time.strftime('%Y-%m-%d')}, {platform.node()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} (`benchmarks/bench_record.py`)\n")
    print("| case | identify (of which: record) | write / read RESULT.json | RESULT.json | report from RESULT.json "
          "| report.html | peak RSS | round trip |")
    print("|---|---|---|---|---|---|---|---|")
    for name in CASES:
        env = dict(os.environ, MPLBACKEND="Agg")
        out = subprocess.run([sys.executable, __file__, "--case", name], env=env, check=True, capture_output=True,
                             text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {name} | {r['identify_s']:.1f} s ({r['record_s']:.1f} s) | {r['write_s']:.2f} / {r['read_s']:.2f} s "
              f"| {r['result_mb']:.2f} MB | {r['report_s']:.1f} s | {r['report_mb']:.2f} MB "
              f"| {r['peak_rss_mb']:.0f} MB | {'equal' if r['round_trip'] else 'DIFFERS'} |")


if __name__ == "__main__":
    main()
