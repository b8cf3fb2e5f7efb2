"""Closed-loop estimators (issue 16): OLS, WLS, IDIM-IV and DIDIM on the virtual robot over 10 seeds.

The 3-joint RRR arm of tests/test_closed_loop_estimators.py (drives, viscous + Coulomb + offset friction, PD gains
in the robot file), 3 periods of a 5-harmonic Fourier trajectory (T = 5 s) at 250 Hz, PD + feed-forward with
friction, encoder noise 2e-4 rad, torque noise 0.05 N m, non-periodic processing with a 20 Hz low-pass and
|qd| >= 0.1 rad/s. Per method: mean and max |z| = |estimate - truth| / reported std over all base parameters and
seeds, the largest |z| among well-identified parameters, how many are well-identified, median relative std, and
the wall time per run. A second table uses the rigid feed-forward (the PD loop overcomes the friction: steps in
the acceleration at reversals) and the automatic periodic band, where the bias of least squares is the band's
distortion rather than noise.

Run: ``python benchmarks/bench_closed_loop_estimators.py [seeds]`` (about 8 min for 10 seeds on 2 cores).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METHODS = ("ols", "wls", "idim-iv", "didim")


def run(seeds: int, feedforward: str, processing) -> dict:
    import robid
    from robid.identification.closed_loop_estimation import ClosedLoopOptions
    from robid.identification.identify import IdentificationOptions, run_identification
    from robid.simulation import ControllerSettings, SensorSettings, simulate
    from tests.test_closed_loop_estimators import _arm, _trajectory

    tmp = Path(tempfile.mkdtemp())
    path, traj = _arm(tmp), _trajectory()
    robot = robid.load_robot(path)
    truth = robot.base_parameters().values(robot.parameters)
    out = {m: {"z": [], "good_z": [], "good": [], "rel": [], "time": []} for m in METHODS}
    for seed in range(seeds):
        sim = simulate(path, traj, periods=3, seed=seed, controller=ControllerSettings(feedforward=feedforward),
                       sensors=SensorSettings(q_noise=2e-4, tau_noise=0.05, encoder_counts=None))
        csv = tmp / f"run{seed}.csv"
        sim.write_csv(csv)
        for method in METHODS:
            start = time.perf_counter()
            options = IdentificationOptions(method=method, processing=processing,
                                            closed_loop=ClosedLoopOptions(trajectory=traj, feedforward=feedforward))
            result = run_identification(robot, [csv], options)
            out[method]["time"].append(time.perf_counter() - start)
            est = result.estimate
            z = (est.values - truth) / est.std
            good = np.array([p.identifiability == "well-identified" for p in result.record.base_parameters])
            out[method]["z"].extend(np.abs(z))
            out[method]["good_z"].extend(np.abs(z[good]))
            out[method]["good"].append(int(good.sum()))
            out[method]["rel"].append(float(np.median(est.relative_std_percent)))
    return out


def table(title: str, out: dict, seeds: int) -> None:
    print(f"\n{title} ({seeds} seeds)\n")
    print("| method | mean abs z | max abs z | max abs z, well-identified | well-identified (of 26) | "
          "median rel. std | s per run |")
    print("|---|---|---|---|---|---|---|")
    for method in METHODS:
        o = out[method]
        good_max = max(o["good_z"]) if o["good_z"] else float("nan")
        print(f"| {method} | {np.mean(o['z']):.2f} | {np.max(o['z']):.2f} | {good_max:.2f} | "
              f"{min(o['good'])}-{max(o['good'])} | {np.median(o['rel']):.2g} % | {np.mean(o['time']):.1f} |")


if __name__ == "__main__":
    from robid.signals import ProcessingOptions

    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print("## Closed-loop estimators (issue 16) — `benchmarks/bench_closed_loop_estimators.py`")
    table("Feed-forward with friction, encoder noise 2e-4 rad, non-periodic, 20 Hz low-pass",
          run(seeds, "full", ProcessingOptions(mode="nonperiodic", cutoff_hz=20.0, min_speed=0.1)), seeds)
    table("Rigid feed-forward (friction steps), same noise, periodic path, automatic band",
          run(seeds, "rigid", ProcessingOptions(period=5.0, min_speed=0.1)), seeds)
