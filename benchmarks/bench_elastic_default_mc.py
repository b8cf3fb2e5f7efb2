"""The default path on an elastic 6-axis robot over noise seeds (issue 29): the built-in demo campaign (kr_heavy,
springs and dampers on A1-A3, link and motor encoders; robid's defaults choose the elastic layout and eiv), its
identification run re-recorded with N noise seeds (the designs made once and reused by the campaign's fingerprints).

Run: ``python benchmarks/bench_elastic_default_mc.py [N]`` (default 20 seeds, about 30 s each). Printed per stiffness
and damping parameter: the truth, the mean estimate, the scatter over the seeds against the median reported std
(an honest std gives a ratio near 1), the largest |z|; and the rms of z over every base parameter per seed.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import yaml

from robid.campaign import run_campaign
from robid.campaign.campaign_file import campaign_from_dict
from robid.cli.demo_cmd import demo_campaign_path

NAMES = ("k_A1", "k_A2", "k_A3", "d_A1", "d_A2", "d_A3")


def main(n: int = 20) -> None:
    data = yaml.safe_load(demo_campaign_path().read_text())
    data["report"] = False
    data["export"] = []
    folder = Path(tempfile.mkdtemp(prefix="robid-elastic-mc-"))
    values, stds, rms_z, truth_of = [], [], [], {}
    t0 = time.time()
    for k in range(n):
        data["measurements"]["ident"]["simulate"]["seed"] = 1000 + k
        data["measurements"]["valid"]["simulate"]["seed"] = 2000 + k
        record = run_campaign(campaign_from_dict(data, folder / "demo.yaml"), folder, log=lambda m: None).record
        truth = dict(zip((p.name for p in record.base_parameters), record.references()["truth"], strict=True))
        z = [(p.value - truth[p.name]) / p.std for p in record.base_parameters]
        rms_z.append(float(np.sqrt(np.mean(np.square(z)))))
        values.append([record.value(name) for name in NAMES])
        stds.append([record.parameter(name).std for name in NAMES])
        truth_of = {name: truth[name] for name in NAMES}
        assert record.method == "eiv" and record.motor_joints == ("A1", "A2", "A3"), (record.method, record.choices)
        print(f"seed {k}: rms z {rms_z[-1]:.2f}", flush=True)
    values, stds = np.array(values), np.array(stds)
    print(f"\n### Elastic default path over {n} noise seeds ({date.today()}, {platform.machine()}, "
          f"{platform.python_version()}; {time.time() - t0:.0f} s)\n")
    print("| parameter | truth | mean estimate | error of the mean | scatter / median std | largest abs z |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for i, name in enumerate(NAMES):
        t = truth_of[name]
        scatter, std = float(np.std(values[:, i], ddof=1)), float(np.median(stds[:, i]))
        ratios.append(scatter / std)
        zmax = float(np.max(np.abs((values[:, i] - t) / stds[:, i])))
        print(f"| {name} | {t:.5g} | {values[:, i].mean():.5g} | {100 * (values[:, i].mean() / t - 1):+.2f} % | "
              f"{scatter / std:.2f} | {zmax:.2f} |")
    print(f"\nmedian scatter / std over k and d: {np.median(ratios):.2f}; rms z over every base parameter per seed: "
          f"median {np.median(rms_z):.2f}, range {min(rms_z):.2f}-{max(rms_z):.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
