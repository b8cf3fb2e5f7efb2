"""UR10e static poses p1..p5 (Mamedov et al. 2020, validation_data/): ``robid predict`` as a user runs it -- the
plain command with the campaign's mapping (measurements/ur10e/mapping.yaml), no screening or processing option --
on a RESULT.json identified from the campaign's four identification runs with the campaign's settings
(``robid identify ur10e ... --method wls --min-speed 0 --drop-bad-rows``, no --allow-constant: a joint at rest
needs none since issue 31). Per pose and joint: the mean measured torque (K i) over the samples robid compares,
and the error of the mean predicted torque, robid's and the authors' published model's (UR10E_parameters.txt on
their URDF, their processing: benchmarks/ur10e_crossvalidation.py) on the same samples.

At a static pose the torque is gravity plus the friction the joint holds at rest; both models predict gravity
only there (sign(0) = 0, viscous 0; the authors' offset f0 is kept). Prints the Markdown table of
docs/validation.md; exit status 1 when a pose is not predicted.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

IDENTIFY = (
    "ur-20_02_10-30sec_12harm", "ur-20_02_12-40sec_12harm", "ur-20_02_05-20sec_8harm", "ur-20_02_19_14harm50sec",
)
POSES = tuple(f"ur-20_01_17-p{k}" for k in range(1, 6))
MAPPING = ROOT / "measurements" / "ur10e" / "mapping.yaml"


def _harness():
    spec = importlib.util.spec_from_file_location("ur10e_crossvalidation", ROOT / "benchmarks" /
                                                  "ur10e_crossvalidation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _robid(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "robid", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"robid {' '.join(args[:1])} failed: {done.stderr.strip()}")
    return done.stdout


def static_poses(folder: Path, work: Path) -> list[dict]:
    """Per pose: samples compared, mean measured torque and the mean-torque errors of robid and the authors."""
    import robid
    from robid.io.measurement_file import read_measurement

    harness = _harness()
    data = folder / "dataset_ur10e"
    result = work / "RESULT.json"
    _robid("identify", "ur10e", *(str(data / "identification_data" / f"{n}.csv") for n in IDENTIFY),
           "--mapping", str(MAPPING), "--out", str(result), "--method", "wls", "--min-speed", "0",
           "--drop-bad-rows", "-q")
    urdf = robid.load_robot(folder / "URe" / "urdf" / "ur10e.urdf")
    params, rotor = harness.authors_parameters(folder, urdf)
    rows = []
    for pose in POSES:
        path = data / "validation_data" / f"{pose}.csv"
        out = work / f"{pose}.csv"
        _robid("predict", "ur10e", str(result), str(path), "--mapping", str(MAPPING), "--out", str(out))
        table = np.genfromtxt(out, delimiter=",", skip_header=1)
        pred, meas, mark = table[:, 1:7], table[:, 7:13], table[:, 19:25]
        used = np.all(mark == 0, axis=1)
        m = read_measurement(path, mapping=MAPPING, dof=6)
        theirs = harness.authors_prediction(urdf, params, rotor, m)
        rows.append({
            "pose": pose.rsplit("-", 1)[1],
            "samples": int(used.sum()),
            "measured": meas[used].mean(axis=0),
            "robid": pred[used].mean(axis=0) - meas[used].mean(axis=0),
            "authors": theirs[used].mean(axis=0) - meas[used].mean(axis=0),
        })
    return rows


def markdown(rows: list[dict]) -> str:
    fmt = " / ".join
    lines = ["| pose | samples compared | mean measured torque N m, q1..q6 | robid: mean predicted - measured | "
             "authors: mean predicted - measured |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['pose']} | {r['samples']} | {fmt(f'{v:.2f}' for v in r['measured'])} | "
                     f"{fmt(f'{v:+.2f}' for v in r['robid'])} | {fmt(f'{v:+.2f}' for v in r['authors'])} |")
    robid_abs = np.abs(np.array([r["robid"] for r in rows]))
    authors_abs = np.abs(np.array([r["authors"] for r in rows]))
    lines.append(f"| mean \\|error\\| over p1-p5 | | | {fmt(f'{v:.2f}' for v in robid_abs.mean(axis=0))} | "
                 f"{fmt(f'{v:.2f}' for v in authors_abs.mean(axis=0))} |")
    return "\n".join(lines)


def main() -> int:
    harness = _harness()
    folder = harness.shared_data()
    if folder is None:
        print("../shared (real data sets) not present")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        rows = static_poses(folder, Path(tmp))
    print(markdown(rows))
    return 0 if all(r["samples"] > 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
