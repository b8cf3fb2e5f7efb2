"""Identification at scale: ``robid identify --mode nonperiodic --decimate auto`` on long 1 kHz records of a
7-axis robot, from the CSV to RESULT.json, wall time and peak memory of the command (a child process:
``ru_maxrss`` of ``RUSAGE_CHILDREN``).

Run: ``python benchmarks/bench_identify_scale.py [--decimate R|auto] [SAMPLES ...]`` (default: auto, 60 000 and
600 000 samples). ``--decimate auto`` keeps every r-th row of the low-passed torques and regressor, the largest r
that keeps the rate at or above 5 times the cut-off (parallel decimation, docs/signals.md section 7); ``1`` keeps
every row.

The record (deterministic, seed 14): the Franka Panda of ``measurements/franka_panda/panda.yaml`` (7 axes, 64 base
parameters) moving along a non-periodic sum of 12 sines per joint at incommensurate frequencies (0.05-1.2 Hz,
scaled into 60 % of the position range and the velocity and acceleration limits), sampled at 1 kHz; the torques
are the robot file's **nominal inverse dynamics** (rigid bodies, viscous and Coulomb friction) plus 1 % white
noise, the positions carry 1e-5 rad white encoder noise. The virtual robot (closed-loop simulation) would take far
longer than the identification for 10 minutes at 1 kHz, so the torque file is the nominal model's; the
identification's numerics do not know the difference. The identified values are checked against the nominal base
parameters (largest deviation in standard deviations).
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

ROOT = Path(__file__).resolve().parents[1]
ROBOT = ROOT / "measurements" / "franka_panda" / "panda.yaml"
RATE = 1000.0
SEED = 14
SINES = 12
#: joint limits of the Panda's datasheet (Franka Emika, "Robot and interface specifications": rad, rad/s, rad/s^2);
#: the robot file has none
PANDA_POSITION = [(-2.8973, 2.8973), (-1.7628, 1.7628), (-2.8973, 2.8973), (-3.0718, -0.0698), (-2.8973, 2.8973),
                  (-0.0175, 3.7525), (-2.8973, 2.8973)]
PANDA_VELOCITY = [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]
PANDA_ACCELERATION = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]


def write_record(path: Path, samples: int, seed: int = SEED, chunk: int = 50_000) -> None:
    """The benchmark's measurement CSV (module docstring), written in chunks of ``chunk`` samples."""
    import numpy as np

    import robid

    robot = robid.load_robot(str(ROBOT))
    rng = np.random.default_rng(seed)
    dof = robot.dof
    lo, hi = np.array(PANDA_POSITION).T
    center = 0.5 * (lo + hi)
    freq = rng.uniform(0.05, 1.2, size=(SINES, dof))
    phase = rng.uniform(0.0, 2.0 * np.pi, size=(SINES, dof))
    amp = rng.uniform(0.2, 1.0, size=(SINES, dof)) / freq  # flatter spectrum in velocity
    w = 2.0 * np.pi * freq
    # bounds of |q - center|, |qd|, |qdd| over all time (sum of amplitudes), scaled into the limits
    bound = [np.sum(amp, axis=0), np.sum(amp * w, axis=0), np.sum(amp * w**2, axis=0)]
    vel, acc = np.array(PANDA_VELOCITY), np.array(PANDA_ACCELERATION)
    scale = np.min([0.3 * (hi - lo) / bound[0], 0.6 * vel / bound[1], 0.6 * acc / bound[2]], axis=0)
    amp = amp * scale
    tau_std = None
    header = ",".join(["t"] + [f"q{j + 1}" for j in range(dof)] + [f"tau{j + 1}" for j in range(dof)])
    with open(path, "w") as f:
        f.write(header + "\n")
        for start in range(0, samples, chunk):
            t = np.arange(start, min(start + chunk, samples)) / RATE
            arg = w[None] * t[:, None, None] + phase[None]
            q = center + np.sum(amp * np.sin(arg), axis=1)
            qd = np.sum(amp * w * np.cos(arg), axis=1)
            qdd = -np.sum(amp * w**2 * np.sin(arg), axis=1)
            tau = robot.inverse_dynamics(q, qd, qdd)
            if tau_std is None:  # the noise level from the first chunk, then fixed
                tau_std = 0.01 * np.std(tau, axis=0)
            tau = tau + rng.normal(size=tau.shape) * tau_std
            q = q + rng.normal(size=q.shape) * 1e-5
            np.savetxt(f, np.column_stack([t, q, tau]), delimiter=",", fmt="%.12g")


def run_case(samples: int, folder: Path, decimate: str = "auto") -> dict:
    path = folder / f"panda_{samples}.csv"
    t0 = time.perf_counter()
    write_record(path, samples)
    t_write = time.perf_counter() - t0
    out = folder / "RESULT.json"
    cmd = [str(Path(sys.executable).with_name("robid")), "identify", str(ROBOT), str(path), "--mode", "nonperiodic",
           "--out", str(out), "-q", "--decimate", decimate]
    t1 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t1
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command is this process's only child
    deviation = _deviation(out)
    processed = json.loads(out.read_text())["data"][0]
    return {
        "rows": processed["samples"],
        "rate_hz": processed["sample_rate_hz"],
        "cutoff_hz": processed["cutoff_hz"],
        "samples": samples,
        "csv_mb": path.stat().st_size / 1e6,
        "write_csv_s": t_write,
        "identify_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "max_deviation_std": deviation,
    }


def _deviation(path: Path) -> float:
    """Largest |identified - nominal| / std over the base parameters the record identifies (finite std)."""
    import numpy as np

    import robid
    from robid.io.result_file import read_result

    robot = robid.load_robot(str(ROBOT))
    record = read_result(path)
    nominal = robot.base_parameters().values(robot.parameters)
    std = np.asarray(record.std, dtype=float)
    ok = np.isfinite(std) & (std > 0)
    return float(np.max(np.abs(np.asarray(record.values)[ok] - nominal[ok]) / std[ok]))


def main() -> None:
    args = sys.argv[1:]
    decimate = "auto"
    if args[:1] == ["--decimate"]:
        decimate, args = args[1], args[2:]
    if args[:1] == ["--case"]:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run_case(int(args[1]), Path(tmp), decimate)))
        return
    sizes = [int(a) for a in args] or [60_000, 600_000]
    print(f"## Identification at scale — {time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f} (`benchmarks/bench_identify_scale.py`)\n")
    print(f"7-axis Franka Panda, 1 kHz, `robid identify --mode nonperiodic --decimate {decimate}` from CSV to "
          "RESULT.json (nominal-model torques plus 1 % noise; target for 600 000 samples: <= 20 s, <= 2 GB)\n")
    from robid.identification.datasets import QR_WORKERS
    from robid.signals.streamed_filter import WORKERS

    print(f"Threads: OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1 (BLAS and LAPACK on one thread); robid's own: "
          f"{WORKERS} for the streamed filter's channel groups, {QR_WORKERS} for the joints' streaming QR, 1 "
          "evaluating the next regressor block (results the same as on one thread)\n")
    print("| samples | CSV | cut-off | rows kept (rate) | identify wall time (CPU time) | peak RSS "
          "| max abs(identified - nominal) / std |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        env = dict(os.environ, MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        out = subprocess.run([sys.executable, __file__, "--decimate", decimate, "--case", str(n)], env=env,
                             check=True, capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {r['samples']} | {r['csv_mb']:.0f} MB | {r['cutoff_hz']:.3g} Hz "
              f"| {r['rows']} ({r['rate_hz']:.4g} Hz) | {r['identify_s']:.1f} s ({r['cpu_s']:.1f} s) "
              f"| {r['peak_rss_mb']:.0f} MB "
              f"| {r['max_deviation_std']:.2f} |")


if __name__ == "__main__":
    main()
