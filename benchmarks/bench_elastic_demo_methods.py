"""The demo's elastic axes (issue 12): WLS, errors-in-variables (eiv) and motor-encoders-only on the same runs.

Run: ``python benchmarks/bench_elastic_demo_methods.py [SEED ...]`` (default 11 21 31 41; 11 is the demo's). For
each seed, the built-in demo campaign (robid/campaign/demo.yaml: kr_heavy, realistic noise, link and motor
encoders) simulates its identification run with that seed; the run is identified three ways:

* ``wls``: the elastic layout (terms ... stiffness, damping), WLS with its independent-row covariance;
* ``eiv``: the same rows, corrected least squares with the encoders' noise in the regressor and the covariance of
  rows correlated within the period (the demo's default);
* ``meo``: the motor encoders alone (theta written in place of q), terms ... stiffness (no damping: not
  determined from motor data), robid.elastic.motor_encoders_only.

Prints, per seed and method, |estimate - truth| / std over all base parameters (mean, rms, max, and the worst
ones), the springs with their std, and the time of the identification (the machine's load is not controlled).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

import robid
from robid.campaign import run_campaign
from robid.campaign.campaign_file import campaign_from_dict
from robid.campaign.runner import truth_base_values
from robid.cli.demo_cmd import demo_campaign_path
from robid.identification.identify import IdentificationOptions, run_identification
from robid.io.design_file import design_processing
from robid.signals import ProcessingOptions

RIGID = ["rigid", "rotor", "viscous", "coulomb", "offset", "compensator"]
TRUTH = {"k_A1": 4.5778e6, "k_A2": 7.5189e6, "k_A3": 4.0999e6, "d_A1": 3200.0, "d_A2": 4800.0, "d_A3": 2700.0}


def runs(seed: int, root: Path) -> Path:
    """The demo campaign's designs and its identification run simulated with ``seed`` (no identification)."""
    data = yaml.safe_load(demo_campaign_path().read_text())
    data["measurements"]["ident"]["simulate"]["seed"] = seed
    data["report"] = False
    data["identification"]["validation"] = []
    data["measurements"].pop("valid")
    data["trajectories"].pop("valid")
    data["identification"]["method"] = "wls"
    run_campaign(campaign_from_dict(data, root / "demo.yaml"), root, log=lambda m: None)
    return root


def motor_only_file(ident: Path) -> Path:
    """The run as a robot without link encoders records it: the motor positions in the position columns."""
    import pandas as pd

    frame = pd.read_csv(ident)
    for j in range(1, 7):
        frame[f"q{j}"] = frame[f"theta{j}"]
    out = ident.with_name("ident_motor_only.csv")
    frame.drop(columns=[f"theta{j}" for j in range(1, 7)]).to_csv(out, index=False, float_format="%.12g")
    return out


def score(root: Path, method: str) -> dict:
    meas = root / "measurements" / "demo"
    period, excited, design = design_processing(root / "trajectories" / "demo" / "ident.json")
    proc = ProcessingOptions(min_speed=0.2, period=period, period_source="trajectory", excited_harmonics=excited,
                             design=design)
    if method == "meo":
        file = motor_only_file(meas / "ident.csv")
        robot = robid.load_robot("kr_heavy", terms=[*RIGID, "stiffness"])
        options = IdentificationOptions(method="wls", processing=proc, motor_encoders_only=True)
    else:
        file = meas / "ident.csv"
        robot = robid.load_robot("kr_heavy", terms=[*RIGID, "stiffness", "damping"])
        options = IdentificationOptions(method=method, processing=proc)
    t0 = time.perf_counter()
    est = run_identification(robot, [file], options).estimate
    seconds = time.perf_counter() - t0
    names = list(robot.base_parameters().names)
    z = (est.values - truth_base_values(robot, [meas / "ident.truth.json"])) / est.std
    springs = {n: (float(est.values[names.index(n)]), float(est.std[names.index(n)])) for n in TRUTH if n in names}
    order = np.argsort(-np.abs(z))[:3]
    return {"method": method, "seconds": round(seconds, 1), "parameters": len(names),
            "mean": float(np.abs(z).mean()), "rms": float(np.sqrt(np.mean(z**2))), "max": float(np.abs(z).max()),
            "worst": [(names[i], round(float(z[i]), 2)) for i in order], "springs": springs}


def main(seeds: list[int]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            root = runs(seed, Path(tmp) / f"seed{seed}")
            for method in ("wls", "eiv", "meo"):
                rows.append({"seed": seed, **score(root, method)})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"## Demo's elastic axes: wls / eiv / motor encoders only (issue 12) — {time.strftime('%Y-%m-%d')}, "
          f"{platform.node()}, {os.cpu_count()} cores\n")
    print("| seed | method | base parameters | mean / rms / max abs z | worst | k_A1 / k_A2 / k_A3 [1e6 N m/rad] "
          "(truth 4.578 / 7.519 / 4.100) | d_A1 / d_A2 / d_A3 [N m s/rad] (truth 3200 / 4800 / 2700) | time |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        k = " / ".join(f"{r['springs'][n][0] / 1e6:.4g} +- {r['springs'][n][1] / 1e6:.2g}" for n in TRUTH
                       if n.startswith("k_"))
        d = " / ".join(f"{r['springs'][n][0]:.0f} +- {r['springs'][n][1]:.0f}" for n in TRUTH
                       if n.startswith("d_") and n in r["springs"]) or "-"
        worst = ", ".join(f"{n} {v:+.1f}" for n, v in r["worst"])
        print(f"| {r['seed']} | {r['method']} | {r['parameters']} | {r['mean']:.2f} / {r['rms']:.2f} / "
              f"{r['max']:.2f} | {worst} | {k} | {d} | {r['seconds']:.0f} s |")


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [11, 21, 31, 41])
