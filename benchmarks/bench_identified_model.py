"""One identified model on a 6-axis robot with Stribeck friction on J1 and J2 (issue 29): what the plain
identification costs with the friction model comparison it now runs by default, and what it buys on a held-out
run.

Run: ``python benchmarks/bench_identified_model.py`` (about 1 min). The virtual UR10e-like robot (its own
Newton-Euler, Stribeck friction fs = 1.6 fc, vs = 0.1 rad/s on J1 and J2, linear elsewhere, PD control, sensor
noise) runs robid's default design (5 harmonics, 10 s, 4 periods at 250 Hz) for identification, another design
(4 harmonics, 8 s, 3 periods) for validation and a third motion for the held-out run. Printed: the wall time of
``identify`` with the default (``friction_models="auto"``) and with the comparison off (``()``), best of 3 each,
the share the comparison adds, and the held-out NRMSE per joint of the default model, of the linear model and of
the joint fit told the friction's form (the ideal).
"""

from __future__ import annotations

import platform
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
import yaml

import robid
from robid.excitation.design import design_from_spec
from robid.excitation.spec import spec_from_dict
from robid.identification import IdentificationOptions, run_identification
from robid.identification.datasets import load_dataset
from robid.identification.friction_fit import fit_friction
from robid.identification.identified_model import AdoptedFriction, IdentifiedModel
from robid.identification.stored_options import options_for_file
from robid.model.loader import builtin_robot_path
from robid.simulation import SensorSettings, simulate

STRIBECK_JOINTS = (0, 1)


def _robot_file(folder: Path) -> Path:
    doc = yaml.safe_load(builtin_robot_path("ur10e").read_text())
    for k in STRIBECK_JOINTS:
        f = doc["joints"][k]["friction"]
        doc["joints"][k]["friction"] = {"model": "stribeck", "viscous": f["viscous"], "coulomb": f["coulomb"],
                                        "static": 1.6 * f["coulomb"], "stribeck_velocity": 0.1, "offset": 0.0}
    path = folder / "ur_stribeck.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _nrmse(model, robot, dataset) -> np.ndarray:
    mean, _ = model.dataset_torque(robot, dataset)
    d = dataset.drive_view()
    used = np.asarray(d.processed.keep, dtype=bool)
    return 100.0 * np.sqrt(np.sum(np.where(used, d.tau - mean, 0.0) ** 2, axis=0)
                           / np.sum(np.where(used, d.tau, 0.0) ** 2, axis=0))


def _timed(robot, files, options, validation):
    best, result = np.inf, None
    for _ in range(3):
        t0 = time.perf_counter()
        result = run_identification(robot, files, options, validation_files=validation)
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="robid-bench-model-"))
    path = _robot_file(folder)
    robot = robid.load_robot(path)
    runs = {}
    for name, spec, periods, seed in (("ident", {"harmonics": 5, "period": 10, "seed": 1, "starts": 2}, 4, 11),
                                      ("valid", {"harmonics": 4, "period": 8, "seed": 2, "starts": 1}, 3, 12),
                                      ("held_out", {"harmonics": 4, "period": 8, "seed": 3, "starts": 1}, 3, 13)):
        _, traj = design_from_spec(robot, spec_from_dict(spec, name))
        sim = simulate(path, traj.trajectory, periods=periods, seed=seed,
                       sensors=SensorSettings.with_noise_level("realistic", rate=250.0))
        runs[name] = sim.write_csv(folder / f"{name}.csv")
    t_auto, auto = _timed(robot, [runs["ident"]], IdentificationOptions(), [runs["valid"]])
    t_none, none = _timed(robot, [runs["ident"]], IdentificationOptions(friction_models=()), [runs["valid"]])
    record = auto.record
    options, mapping, _ = options_for_file(record, str(runs["held_out"]))
    held = load_dataset(robot, runs["held_out"], mapping=mapping, options=options)
    ideal = fit_friction(robot, none.datasets, {robot.joint_names[k]: "stribeck" for k in STRIBECK_JOINTS})
    names = tuple(robot.base_parameters().names)
    table = dict(zip(ideal.names, ideal.values, strict=True))
    ideal_model = IdentifiedModel(names, np.array([table.get(n, 0.0) for n in names]), np.zeros((1, 1)),
                                  AdoptedFriction.of_result(ideal))
    rows = {"robid (default: friction models compared, adopted)": _nrmse(IdentifiedModel.of_record(record), robot,
                                                                         held),
            "linear friction (--friction-models none)": _nrmse(IdentifiedModel.of_record(none.record), robot, held),
            "ideal (joint fit told J1, J2 are Stribeck)": _nrmse(ideal_model, robot, held)}
    print(f"### One identified model: Stribeck friction on J1, J2 of a UR10e-like robot ({date.today()}, "
          f"{platform.machine()}, {platform.python_version()})\n")
    print(f"chosen: {', '.join(f'{j} {m}' for j, m in zip(record.joints, record.friction_models.chosen, strict=True))} "
          f"(by {record.friction_models.criterion}; adopted: {record.friction_models.adopted})\n")
    print(f"identify wall time, best of 3: {t_auto:.2f} s by default, {t_none:.2f} s with the comparison off "
          f"(+{100 * (t_auto / t_none - 1):.0f} %)\n")
    print("| held-out NRMSE [%] | " + " | ".join(robot.joint_names) + " |")
    print("|---|" + "---|" * robot.dof)
    for label, values in rows.items():
        print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    ratio = rows["robid (default: friction models compared, adopted)"] / rows[
        "ideal (joint fit told J1, J2 are Stribeck)"]
    print("\nrobid / ideal per joint: " + ", ".join(f"{r:.2f}" for r in ratio))


if __name__ == "__main__":
    main()
