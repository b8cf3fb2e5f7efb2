"""One identified model, end to end (issue 29): a robot with Stribeck friction on two of its three axes, identified
with the plain command (defaults only), predicted on a held-out run and exported.

* The default identification compares the friction models, chooses Stribeck where it was simulated, adopts it
  (the record's values are the joint fit's) and says so in its choices.
* ``robid predict`` on a held-out run evaluates the adopted model: NRMSE within 1.5x of an ideal fit that knows
  the friction's form (the same joint fit told which joints are Stribeck), on every joint; the linear model a
  plain least-squares fit gives is worse on the Stribeck joints (a peer's recipe: linear friction).
* The exported YAML, JSON, Python and C models carry the chosen friction and reproduce ``predict`` to 1e-9 of the
  torque's RMS, on the processed states predict compares (every joint faster than the minimum speed, 0.05 rad/s:
  nearer to a velocity reversal predict's Coulomb sign is the expected sign erf(v / (sqrt 2 s_v)) given the
  velocity noise s_v (2e-4 to 3e-4 rad/s here), the exported code's the plain sign(qd); beyond 8 s_v they agree
  to 1e-15).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import subprocess

import numpy as np
import pytest
import yaml

import robid
from robid.cli import main
from robid.identification.datasets import load_dataset
from robid.identification.friction_fit import fit_friction
from robid.identification.identified_model import AdoptedFriction, IdentifiedModel
from robid.identification.identify import IdentificationOptions, run_identification
from robid.identification.predict import predict_file
from robid.identification.stored_options import options_for_file
from robid.identification.stored_options import stored_processing_options as processing_options
from robid.io.result_file import read_result
from tests.test_friction_models_record import STRIBECK, stribeck_runs  # noqa: F401 (fixture)


def _nrmse(model, robot, dataset) -> np.ndarray:
    mean, _ = model.dataset_torque(robot, dataset)
    d = dataset.drive_view()
    used = np.asarray(d.processed.keep, dtype=bool)
    err = np.where(used, d.tau - mean, 0.0)
    ref = np.where(used, d.tau, 0.0)
    return 100.0 * np.sqrt(np.sum(err**2, axis=0) / np.sum(ref**2, axis=0))


@pytest.fixture(scope="module")
def plain(stribeck_runs, tmp_path_factory):  # noqa: F811
    """``robid identify ROBOT ident.csv --validate valid.csv --out RESULT.json`` with nothing else."""
    path, files = stribeck_runs
    out = tmp_path_factory.mktemp("plain") / "result.json"
    assert main(["identify", str(path), str(files["ident"]), "--validate", str(files["valid"]),
                 "--out", str(out), "-q"]) == 0
    return path, files, out


def test_the_plain_command_adopts_the_stribeck_joints_and_says_so(plain, capsys):
    path, files, out = plain
    record = read_result(out)
    assert record.method == "wls"
    assert record.choices[0].startswith("method: wls (auto)")
    assert record.choices[1].startswith("friction models: linear, stribeck, sigmoid compared per joint")
    fm = record.friction_models
    assert fm.adopted and fm.chosen == ("linear", "stribeck", "stribeck")
    truth = {f"{p}_{robid.load_robot(path).joint_names[k]}": v for k, vals in STRIBECK.items()
             for p, v in zip(("fv", "fc", "fs", "vs"), vals, strict=True)}
    fit = dict(zip(fm.fit.names, fm.fit.values, strict=True))
    for name, true in truth.items():
        assert fit[name] == pytest.approx(true, rel=0.05), name
        if name in record.names:  # the record's base value is the joint fit's
            assert record.value(name) == fit[name]
    frame = record.to_frame("friction")
    assert set(frame[frame.joint == "K2"].name) == {"fv_K2", "fc_K2", "f0_K2", "fs_K2", "vs_K2"}
    assert set(frame[frame.joint == "K2"].model) == {"stribeck"} and set(frame[frame.joint == "K1"].model) == {"linear"}
    assert frame.set_index("name").value["vs_K3"] == pytest.approx(STRIBECK[2][3], rel=0.05)


def test_predict_evaluates_the_adopted_model_within_1_5x_of_an_ideal_fit(plain, tmp_path, capsys):
    path, files, out = plain
    robot = robid.load_robot(path)
    record = read_result(out)
    # a second held-out run: another motion than both runs identification saw
    held_out = files["held_out"]
    assert main(["predict", str(path), str(out), str(held_out), "--out", str(tmp_path / "p.csv")]) == 0
    printed = capsys.readouterr().out
    # the ideal fit: the same data processed the same way, told the friction's form
    same = IdentificationOptions(friction_models=(), processing=processing_options(record.processing))
    linear = run_identification(robot, [files["ident"]], same)
    ideal = fit_friction(robot, linear.datasets, {robot.joint_names[k]: "stribeck" for k in STRIBECK})
    ideal_model = IdentifiedModel(tuple(robot.base_parameters().names),
                                  np.array([dict(zip(ideal.names, ideal.values, strict=True))[n]
                                            for n in robot.base_parameters().names]),
                                  np.zeros((1, 1)), AdoptedFriction.of_result(ideal))
    options, mapping, _ = options_for_file(record, str(held_out))
    dataset = load_dataset(robot, held_out, mapping=mapping, options=options)
    robid_nrmse = _nrmse(IdentifiedModel.of_record(record), robot, dataset)
    ideal_nrmse = _nrmse(ideal_model, robot, dataset)
    linear_nrmse = _nrmse(IdentifiedModel.of_record(linear.record), robot, dataset)
    print("held-out NRMSE %: robid", robid_nrmse, "ideal", ideal_nrmse, "linear", linear_nrmse)
    assert np.all(robid_nrmse <= 1.5 * ideal_nrmse)
    assert np.all(linear_nrmse[1:] > 1.5 * ideal_nrmse[1:])  # the linear model misses the Stribeck joints
    # robid predict's own figures are the adopted model's (its NRMSE table and the note naming the models)
    pred = predict_file(robot, record, held_out)
    assert any("friction: K2 stribeck, K3 stribeck" in m for m in pred.method)
    for j, name in enumerate(robot.joint_names):
        assert f"{pred.processed.per_joint[j].nrmse_percent:.3f}" in printed.split(name, 1)[1].splitlines()[0]


def _reversal_free(pred, record) -> np.ndarray:
    """Processed-grid samples where every joint moves faster than the minimum speed (module docstring)."""
    min_speed = record.processing.options["min_speed"]
    assert min_speed >= 100 * max(max(run.noise.qd_std_processed) for run in record.data)
    return np.all(np.abs(pred.grid[2]) > min_speed, axis=1)


def test_exports_carry_the_friction_and_reproduce_predict(plain, tmp_path):
    path, files, out = plain
    robot = robid.load_robot(path)
    record = read_result(out)
    pred = predict_file(robot, record, files["held_out"])
    pick = _reversal_free(pred, record)
    assert pick.sum() > 200
    _, q, qd, qdd, tau = (g[pick] if g.ndim else g for g in pred.grid)
    scale = np.sqrt(np.mean(tau**2, axis=0))
    for fmt, ext in (("yaml", "yaml"), ("json", "json"), ("python", "py"), ("c", "c")):
        assert main(["export-model", str(out), "--format", fmt, "--out", str(tmp_path / f"m.{ext}"),
                     "--base", str(path)]) == 0
    # YAML: a robot file whose joints K2, K3 have the Stribeck model; robid reads it back and its nominal model
    # (grouping of the exported standard set, friction excess of the robot file's Friction) gives predict's torque
    doc = yaml.safe_load((tmp_path / "m.yaml").read_text())
    assert [j["friction"].get("model", "linear") for j in doc["joints"]] == ["linear", "stribeck", "stribeck"]
    exported = robid.load_robot(tmp_path / "m.yaml")
    base = exported.base_parameters()
    model_tau = base.regressor(q, qd, qdd) @ base.values(exported.parameters)
    model_tau += np.column_stack([j.friction.excess(qd[:, k], q[:, k]) for k, j in enumerate(exported.model.joints)])
    assert np.max(np.abs(model_tau - tau) / scale) < 1e-9
    # JSON: the same blocks
    js = json.loads((tmp_path / "m.json").read_text())
    assert js["joints"][1]["friction"]["model"] == "stribeck" and "stribeck_velocity" in js["joints"][2]["friction"]
    # Python: the standalone module
    spec = importlib.util.spec_from_file_location("exported_model", tmp_path / "m.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert np.max(np.abs(module.inverse_dynamics(q, qd, qdd) - tau) / scale) < 1e-9
    linear_part = module.base_regressor(q, qd, qdd) @ module.BASE_VALUES + module.friction_excess(q, qd)
    assert np.max(np.abs(linear_part - tau) / scale) < 1e-9
    # C: compiled and called
    lib_path = tmp_path / "m.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-x", "c", str(tmp_path / "m.c"), "-o", str(lib_path), "-lm"],
                   check=True)
    lib = ctypes.CDLL(str(lib_path))
    n, dof = q.shape
    c_tau = np.zeros((n, dof))
    arrays = [np.ascontiguousarray(a) for a in (q, qd, qdd)]
    ptr = ctypes.POINTER(ctypes.c_double)
    lib.robid_inverse_dynamics(*(a.ctypes.data_as(ptr) for a in arrays), ctypes.c_long(n), c_tau.ctypes.data_as(ptr))
    assert np.max(np.abs(c_tau - tau) / scale) < 1e-9
