"""What a report is made from, gathered once: the robot, the RESULT.json content, the parameter values with
their covariance, and one :class:`Run` per measurement (processed signals and filtered regressor).

Two ways in: :func:`from_result` (in-process, an :class:`~robid.identification.IdentificationResult`) and
:func:`from_result_file` (RESULT.json + robot + measurement files; the measurements are processed again with the
processing options and mapping stored in RESULT.json, the parameter values are those of RESULT.json).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_json
from robid.robot import Robot

#: RESULT.json base-parameter keys that are not reference columns
_KNOWN_KEYS = {
    "name",
    "expression",
    "value",
    "std",
    "relative_std_percent",
    "class",
    "nominal",
    "correlated_with",
    "unconstrained_value",
}


@dataclass(frozen=True)
class Thresholds:
    """Verdict thresholds (percent of the measured RMS torque per joint, and truth deviation in std)."""

    nrmse_good_percent: float = 5.0
    nrmse_acceptable_percent: float = 10.0
    reference_sigma: float = 3.0


@dataclass(frozen=True, eq=False)
class Run:
    """One measurement as the report sees it. ``dataset`` is None when the data could not be (re)loaded;
    ``missing`` then says why, and ``summary``/``metrics`` come from RESULT.json when it has them."""

    role: str  # "identification" | "validation"
    source: str
    summary: dict | None
    metrics: dict | None
    dataset: object | None = None  # robid.identification.DataSet
    missing: str | None = None

    @property
    def label(self) -> str:
        return f"{self.role}: {Path(self.source).name}"


@dataclass(frozen=True, eq=False)
class ReportData:
    title: str
    subtitle: str
    robot: Robot
    result: dict
    values: np.ndarray
    covariance: np.ndarray
    sigma: np.ndarray
    runs: tuple[Run, ...]
    trajectory: object | None = None  # robid.excitation.trajectory_file.TrajectoryFile
    trajectory_source: str | None = None
    references: dict[str, np.ndarray] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [p["name"] for p in self.result["base_parameters"]]

    @property
    def nominal(self) -> np.ndarray:
        """Nominal base values: RESULT.json's where stored, else from the robot file's parameters."""
        from_robot = self.robot.base_parameters().values(self.robot.parameters)
        stored = [p.get("nominal") for p in self.result["base_parameters"]]
        return np.array([r if v is None else v for v, r in zip(stored, from_robot, strict=True)], dtype=float)

    @property
    def identification_runs(self) -> tuple[Run, ...]:
        return tuple(r for r in self.runs if r.role == "identification")

    @property
    def validation_runs(self) -> tuple[Run, ...]:
        return tuple(r for r in self.runs if r.role == "validation")


# ---- shared helpers ----------------------------------------------------------------------------------------


def metrics_dict(dataset, values: np.ndarray, joint_names) -> dict:
    from robid.estimation import validation_metrics

    return validation_metrics(dataset.tau, dataset.W @ values, joint_names).to_dict()


def dataset_summary(dataset) -> dict:
    from robid.io.processed_files import summary

    s = summary(dataset.processed)
    s["file"] = dataset.source
    s["rows_used"] = dataset.rows_used
    s["notes"] = list(dataset.notes)
    return s


def normalise_references(reference, names: Sequence[str], where: str = "reference") -> dict[str, np.ndarray]:
    """``{label: base values}`` with each value a sequence aligned with ``names`` or a mapping name -> value
    (missing names become NaN). Also accepted: ``{"label": ..., "base_values": [...]}`` (RESULT.json style)."""
    if reference is None:
        return {}
    if not isinstance(reference, Mapping):
        raise RobidInputError(f"{where}: expected a mapping label -> base values")
    if "base_values" in reference and "label" in reference:
        reference = {str(reference["label"]): reference["base_values"]}
    out: dict[str, np.ndarray] = {}
    for label, values in reference.items():
        if isinstance(values, Mapping):
            unknown = sorted(set(values) - set(names))
            if unknown:
                raise RobidInputError(f"{where}: {label}: not base parameters of this result: {', '.join(unknown[:5])}")
            arr = np.array([_float(values.get(n), f"{where}: {label}: {n}") for n in names], dtype=float)
        else:
            try:
                arr = np.array([np.nan if v is None else v for v in values], dtype=float).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise RobidInputError(f"{where}: {label}: expected numbers ({exc})") from None
            if arr.shape[0] != len(names):
                raise RobidInputError(f"{where}: {label}: {arr.shape[0]} values for {len(names)} base parameters")
        out[str(label)] = arr
    return out


def _float(v, where: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise RobidInputError(f"{where}: expected a number, got {v!r}")
    return float(v)


def references_in_result(data: dict) -> dict[str, np.ndarray]:
    """Reference columns stored in RESULT.json's base_parameters (e.g. ``truth`` written with a reference)."""
    params = data.get("base_parameters") or []
    labels: list[str] = []
    for p in params:
        for k, v in p.items():
            if k not in _KNOWN_KEYS and k not in labels and (v is None or isinstance(v, int | float)):
                labels.append(k)
    out = {}
    for label in labels:
        vals = [p.get(label) for p in params]
        if all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in vals):
            out[label] = np.array([np.nan if v is None else v for v in vals], dtype=float)
    return out


def read_truth_file(path: str | Path, robot: Robot) -> dict[str, np.ndarray]:
    """A reference file for the parameter table, label ``truth``. Accepted layouts (JSON):

    * the virtual robot's truth (``robid simulate --truth``): ``{"parameters": {standard name: value}}`` --
      converted to base values with the robot's grouping;
    * ``{"base_parameters": {base name: value}}`` or ``[{"name": ..., "value": ...}]``;
    * ``{"label": ..., "base_values": [...]}`` aligned with the base parameters.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise RobidInputError(f"{path}: expected a JSON object")
    base = robot.base_parameters()
    label = str(data.get("label") or "truth")
    if label.startswith("truth"):
        label = "truth"
    if "base_values" in data:
        return normalise_references({label: data["base_values"]}, base.names, str(path))
    if "base_parameters" in data:
        bp = data["base_parameters"]
        if isinstance(bp, list):
            try:
                bp = {p["name"]: p["value"] for p in bp}
            except (KeyError, TypeError):
                raise RobidInputError(f"{path}: base_parameters: expected entries with name and value") from None
        return normalise_references({label: bp}, base.names, str(path))
    if isinstance(data.get("parameters"), dict):
        from robid.simulation.truth import parameters_for

        truth = data["parameters"]
        for k, v in truth.items():
            _float(v, f"{path}: parameters: {k}")
        try:
            standard = parameters_for(robot.parameter_names, truth)
        except KeyError as exc:
            raise RobidInputError(f"{path}: parameters: {exc.args[0]}") from None
        return {label: base.values(standard)}
    raise RobidInputError(f"{path}: no parameters, base_parameters or base_values: not a truth/reference file")


def load_trajectory_arg(trajectory):
    """(TrajectoryFile | None, source label) from a path, a TrajectoryFile or None."""
    if trajectory is None:
        return None, None
    from robid.excitation.trajectory_file import TrajectoryFile, load_trajectory

    if isinstance(trajectory, TrajectoryFile):
        return trajectory, "trajectory (in memory)"
    return load_trajectory(trajectory), str(trajectory)


def _subtitle(robot: Robot, result: dict, source: str) -> str:
    return (
        f"robot {robot.name} ({robot.dof} joints), estimator {result.get('method', '?')}, "
        f"{len(result.get('base_parameters', []))} base parameters; result: {source}"
    )


def _check_dof(trajectory, robot: Robot, where: str) -> None:
    if trajectory is not None and trajectory.trajectory.dof != robot.dof:
        raise RobidInputError(
            f"{where}: the trajectory has {trajectory.trajectory.dof} joints, robot {robot.name} has {robot.dof}"
        )


# ---- in-process ------------------------------------------------------------------------------------------


def from_result(
    result,
    *,
    trajectory=None,
    reference=None,
    title: str | None = None,
    thresholds: Thresholds | None = None,
) -> ReportData:
    """Report data from an in-process :class:`~robid.identification.IdentificationResult`."""
    from robid.identification.result_file import result_dict

    robot = result.robot
    data = result_dict(result)
    values = np.asarray(result.values, dtype=float)
    names = list(result.base.names)
    runs = [
        Run("identification", d.source, dataset_summary(d), metrics_dict(d, values, robot.joint_names), d)
        for d in result.datasets
    ]
    runs += [
        Run("validation", d.source, dataset_summary(d), metrics_dict(d, values, robot.joint_names), d)
        for d in result.validation_sets
    ]
    traj, traj_source = load_trajectory_arg(trajectory)
    _check_dof(traj, robot, traj_source or "trajectory")
    refs = references_in_result(data)
    refs.update(normalise_references(reference, names))
    return ReportData(
        title=title or f"robid identification report: {robot.name}",
        subtitle=_subtitle(robot, data, "in-process identification"),
        robot=robot,
        result=data,
        values=values,
        covariance=np.asarray(result.estimate.covariance, dtype=float),
        sigma=np.asarray(result.estimate.sigma, dtype=float),
        runs=tuple(runs),
        trajectory=traj,
        trajectory_source=traj_source,
        references=refs,
        thresholds=thresholds or Thresholds(),
        notes=tuple(result.notes),
    )


# ---- from RESULT.json ------------------------------------------------------------------------------------


def resolve_robot(robot, data: dict, result_path: Path) -> Robot:
    """--robot if given, else RESULT.json's robot_source if that file exists, else the built-in robot name."""
    from robid.robot import load_robot

    terms = tuple(data.get("terms") or ()) or None
    if isinstance(robot, Robot):
        return robot
    if robot is not None:
        return load_robot(robot, terms=terms)
    source = data.get("robot_source")
    if source:
        for candidate in (Path(source), result_path.parent / source):
            if candidate.is_file():
                return load_robot(candidate, terms=terms)
    name = str(data.get("robot") or "")
    # a robot file's name field may spell a built-in robot with dashes (tx200-3axis for tx200_3axis)
    for candidate in dict.fromkeys((name, name.replace("-", "_"))):
        if not candidate:
            continue
        try:
            return load_robot(candidate, terms=terms)
        except RobidInputError:
            pass
    raise RobidInputError(
        f"{result_path}: robot: {name!r} is not a built-in robot and robot_source {source!r} does not exist;"
        " give the robot file with --robot"
    )


def _candidates(name: str, result_path: Path) -> list[Path]:
    """Existing files a stored (possibly relative) path may mean: relative to the working folder, then to the
    folder of RESULT.json (identify stores the paths as given on its command line)."""
    p = Path(name)
    out: list[Path] = []
    for c in [p] if p.is_absolute() else [p, result_path.parent / p]:
        if c.is_file() and all(c.resolve() != o.resolve() for o in out):
            out.append(c)
    return out


def from_result_file(
    result_path: str | Path,
    *,
    robot=None,
    validate: Sequence[str | Path] | None = None,
    trajectory=None,
    reference=None,
    truth: str | Path | None = None,
    title: str | None = None,
    mapping: str | Path | None = None,
    policy=None,
    thresholds: Thresholds | None = None,
) -> ReportData:
    """Report data from RESULT.json. The identification files listed in it (and the validation files: those of
    ``validate`` if given, else those listed in RESULT.json) are processed again with the stored processing
    options and mapping; a file that cannot be found or read is reported as missing, not fatal (except the
    files given in ``validate``). The parameter values, covariance and noise levels are those of RESULT.json."""
    from robid import progress
    from robid.identification import load_dataset, read_result
    from robid.identification.predict import check_result_matches
    from robid.identification.result_file import processing_options_from
    from robid.io.screening import ScreeningPolicy

    result_path = Path(result_path)
    rf = read_result(result_path)
    data = rf.data
    robot = resolve_robot(robot, data, result_path)
    check_result_matches(robot, rf)
    nb = len(rf.names)
    cov = rf.covariance
    if cov.shape != (nb, nb):
        raise RobidInputError(f"{result_path}: covariance: expected {nb} x {nb}, got {cov.shape}")
    sigma = rf.sigma if rf.sigma.shape == (robot.dof,) else np.zeros(robot.dof)
    stored_mapping = (data.get("processing") or {}).get("mapping")
    mapping = mapping if mapping is not None else stored_mapping
    notes: list[str] = list(data.get("notes") or [])
    if "processing" not in data and (data.get("data") or data.get("validation_data") or validate):
        notes.append(
            f"{result_path} stores no processing options: the measurements were processed again with the defaults"
        )

    def load(role: str, name: str, stored: dict | None, required: bool) -> Run:
        stored_metrics = None
        if role == "identification" and len(data.get("data") or []) == 1:
            stored_metrics = data.get("metrics")
        elif role == "validation":
            stored_metrics = next((v for v in data.get("validation") or [] if v.get("file") == name), None)
        if required:
            paths = [Path(name)] if Path(name).is_file() else []
        else:
            paths = _candidates(name, result_path)
        if not paths:
            if required:
                raise RobidInputError(f"{name}: validation file not found")
            why = f"{name}: not found (looked relative to the working folder and to {result_path.parent})"
            return Run(role, name, stored, stored_metrics, None, why)
        pol = policy
        if pol is None:
            pol = ScreeningPolicy(drop_bad_rows=bool(stored and stored.get("dropped_rows")))
        failed = None
        loaded: list[tuple[float, Run]] = []
        for path in paths:
            progress.report(f"report: processing {role} data {path} again")
            try:
                ds = load_dataset(robot, path, mapping=mapping, options=processing_options_from(data, name), policy=pol)
            except RobidInputError as exc:
                if required:
                    raise
                failed = failed or Run(role, name, stored, stored_metrics, None, f"could not be processed again: {exc}")
                continue
            metrics = metrics_dict(ds, rf.values, robot.joint_names)
            run = Run(role, str(path), dataset_summary(ds), metrics, ds)
            if stored_metrics is None or _same_metrics(stored_metrics, metrics):
                return run
            # the stored path may be ambiguous (working folder and result folder both hold a file of that name):
            # keep the one whose metrics come closest to the stored ones
            loaded.append((_metrics_distance(stored_metrics, metrics), run))
        if not loaded:
            return failed
        run = min(loaded, key=lambda item: item[0])[1]
        notes.append(
            f"{run.source}: processed again, its torque NRMSE differs from the one stored in {result_path.name}"
            " (changed file, processing options or robid version?); the report shows the re-processed data"
        )
        return run

    runs = [load("identification", str(d.get("file")), d, False) for d in data.get("data") or []]
    if validate is not None and len(validate) > 0:
        stored_val = {str(d.get("file")): d for d in data.get("validation_data") or []}
        runs += [load("validation", str(v), stored_val.get(str(v)), True) for v in validate]
    else:
        runs += [load("validation", str(d.get("file")), d, False) for d in data.get("validation_data") or []]
    for r in runs:
        if r.missing:
            notes.append(f"{r.role} data {r.missing}; plots of that run are omitted")
    traj, traj_source = load_trajectory_arg(trajectory)
    _check_dof(traj, robot, traj_source or "trajectory")
    refs = references_in_result(data)
    if truth is not None:
        refs.update(read_truth_file(truth, robot))
    refs.update(normalise_references(reference, list(rf.names)))
    return ReportData(
        title=title or f"robid identification report: {robot.name}",
        subtitle=_subtitle(robot, data, str(result_path)),
        robot=robot,
        result=data,
        values=rf.values,
        covariance=cov,
        sigma=sigma,
        runs=tuple(runs),
        trajectory=traj,
        trajectory_source=traj_source,
        references=refs,
        thresholds=thresholds or Thresholds(),
        notes=tuple(notes),
    )


def _metrics_distance(stored: dict, computed: dict) -> float:
    a = [m.get("nrmse_percent") for m in stored.get("per_joint") or []]
    b = [m.get("nrmse_percent") for m in computed.get("per_joint") or []]
    if len(a) != len(b):
        return math.inf
    return sum(abs(x - y) for x, y in zip(a, b, strict=True) if x is not None and y is not None)


def _same_metrics(stored: dict, computed: dict) -> bool:
    a = [m.get("nrmse_percent") for m in stored.get("per_joint") or []]
    b = [m.get("nrmse_percent") for m in computed.get("per_joint") or []]
    if len(a) != len(b):
        return False
    return all(x is None or y is None or abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))
