"""Run a campaign: design -> export -> measure (virtual robot or files) -> identify (+validate) -> report.

Each step has a fingerprint: the hash of its own settings, of the files it reads, of the robot (file
content and terms) and of robid's own source code. Fingerprints of the last successful run are kept in
``<root>/.robid-campaign/<name>.json``; a step whose fingerprint and outputs are unchanged is skipped and says
so. Every artefact is written atomically by the library function that makes it; a failed step names itself
and the reason, and the artefacts of the earlier steps stay.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from robid.campaign.schema import CampaignSpec
from robid.errors import RobidInputError


@dataclass(frozen=True)
class StepOutcome:
    name: str
    status: str  # "ran" | "up to date"
    outputs: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class CampaignRun:
    spec: CampaignSpec
    root: Path
    steps: tuple[StepOutcome, ...]
    result_path: Path
    report_path: Path | None
    summary: dict = field(default_factory=dict)

    @property
    def recomputed(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps if s.status == "ran")


def _file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def code_fingerprint() -> str:
    """Hash of robid's own source: a step computed by other code is not up to date."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")) + sorted(root.rglob("*.yaml")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _fingerprint(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class _State:
    def __init__(self, root: Path, name: str):
        self.path = root / ".robid-campaign" / f"{name}.json"
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError):
            self.data = {}

    def fresh(self, step: str, fp: str, outputs: list[Path]) -> bool:
        return self.data.get(step) == fp and all(p.exists() for p in outputs)

    def record(self, step: str, fp: str) -> None:
        from robid.io.files import write_atomic

        self.data[step] = fp
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(self.data, indent=1, sort_keys=True))


def run_campaign(
    spec: CampaignSpec, root: str | Path = ".", *, force: bool = False, log: Callable[[str], None] = print
) -> CampaignRun:
    import robid
    from robid.model.loader import builtin_robot_names, builtin_robot_path

    root = Path(root)
    dirs = {k: root / k / spec.name for k in ("trajectories", "measurements", "reports")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    state = _State(root, spec.name)
    robot = robid.load_robot(spec.robot, terms=spec.terms)
    robot_path = builtin_robot_path(spec.robot) if spec.robot in builtin_robot_names() else Path(spec.robot)
    code_fp = code_fingerprint()
    robot_fp = _fingerprint(_file_hash(robot_path), robot.terms, robid.__version__, code_fp)
    outcomes: list[StepOutcome] = []

    def step(name: str, fp: str, outputs: list[Path], action: Callable[[], None]) -> None:
        if not force and state.fresh(name, fp, outputs):
            outcomes.append(StepOutcome(name, "up to date", tuple(map(str, outputs)), 0.0))
            log(f"[{name}] up to date")
            return
        log(f"[{name}] running ...")
        t0 = time.perf_counter()
        try:
            action()
        except RobidInputError as exc:
            raise RobidInputError(f"campaign {spec.name}, step {name}: {exc}") from None
        seconds = time.perf_counter() - t0
        state.record(name, fp)
        outcomes.append(StepOutcome(name, "ran", tuple(map(str, outputs)), seconds))
        log(f"[{name}] done in {seconds:.1f} s -> {', '.join(map(str, outputs))}")

    # 1. excitation designs
    traj_paths: dict[str, Path] = {}
    for t in spec.trajectories:
        if t.file is not None:
            traj_paths[t.name] = t.file
            continue
        out = dirs["trajectories"] / f"{t.name}.json"
        traj_paths[t.name] = out
        step(f"design {t.name}", _fingerprint("design", robot_fp, t.spec), [out], lambda t=t, out=out: _design(
            robot, spec, t, out))

    # 2. controller programs
    for e in spec.exports:
        ext = {"csv": "csv", "krl": "src", "rapid": "mod", "urscript": "script"}[e.format]
        out = dirs["trajectories"] / f"{e.trajectory}.{ext}"
        fp = _fingerprint("export", code_fp, _file_hash_later(traj_paths[e.trajectory]), e.format, e.periods, e.rate)
        step(f"export {e.trajectory} {e.format}", fp, [out], lambda e=e, out=out: _export(traj_paths[e.trajectory],
                                                                                            e, out))

    # 3. measurements
    meas_paths: dict[str, Path] = {}
    truths: dict[str, Path] = {}
    for m in spec.measurements:
        if m.file is not None:
            meas_paths[m.name] = m.file
            continue
        out = dirs["measurements"] / f"{m.name}.csv"
        truth = dirs["measurements"] / f"{m.name}.truth.json"
        meas_paths[m.name], truths[m.name] = out, truth
        fp = _fingerprint("simulate", robot_fp, _file_hash_later(traj_paths[m.trajectory]), m.simulate)
        step(f"simulate {m.name}", fp, [out, truth], lambda m=m, out=out, truth=truth: _simulate(
            robot, traj_paths[m.trajectory], m.simulate, out, truth))

    # 4. identification and validation
    result_path = dirs["reports"] / "result.json"
    used = list(spec.identify) + list(spec.validate)
    fp = _fingerprint(
        "identify",
        robot_fp,
        spec.method,
        spec.processing,
        [(n, _file_hash_later(meas_paths[n])) for n in used],
        [(n, _file_hash_later(traj_paths[_traj_of(spec, n)]) if _traj_of(spec, n) else None) for n in used],
        [str(_mapping_of(spec, n)) for n in used],
    )
    holder: dict = {}
    step("identify", fp, [result_path], lambda: holder.update(
        result=_identify(robot, spec, meas_paths, traj_paths, truths, result_path)))

    # 5. report
    report_path = None
    if spec.report is not None:
        report_path = dirs["reports"] / "report.html"
        first_traj = _traj_of(spec, spec.identify[0])
        fp = _fingerprint("report", code_fp, _file_hash(result_path), spec.report,
                          _file_hash_later(traj_paths[first_traj]) if first_traj else None)
        step("report", fp, [report_path], lambda: _report(
            robot, spec, holder.get("result"), result_path, report_path, traj_paths.get(first_traj), truths))
    summary = json.loads(result_path.read_text())
    if all(s.status == "up to date" for s in outcomes):
        log(f"campaign {spec.name}: nothing to recompute, all {len(outcomes)} steps up to date")
    return CampaignRun(spec, root, tuple(outcomes), result_path, report_path, summary)


def _file_hash_later(path: Path) -> str:
    """Hash of an input that an earlier step may just have written (it exists by the time it is needed)."""
    return _file_hash(path) if path.exists() else "missing"


def _traj_of(spec: CampaignSpec, name: str) -> str | None:
    return next(m.trajectory for m in spec.measurements if m.name == name)


def _mapping_of(spec: CampaignSpec, name: str):
    return next(m.mapping for m in spec.measurements if m.name == name)


def _design(robot, spec: CampaignSpec, t, out: Path) -> None:
    from robid.excitation.design import design_from_spec
    from robid.excitation.spec import spec_from_dict
    from robid.excitation.trajectory_file import save_trajectory

    design_spec = spec_from_dict(t.spec, f"{spec.source}: trajectories.{t.name}.spec")
    _, tf = design_from_spec(robot, design_spec, robot_label=spec.robot)
    save_trajectory(out, tf)


def _export(traj: Path, e, out: Path) -> None:
    from robid.excitation.programs import export_program
    from robid.excitation.programs.common import ProgramOptions
    from robid.excitation.trajectory_file import load_trajectory

    export_program(load_trajectory(traj), e.format, out, ProgramOptions(periods=e.periods, rate=e.rate))


def _simulate(robot, traj: Path, settings: dict, out: Path, truth: Path) -> None:
    from robid.io.files import write_atomic
    from robid.simulation import SensorSettings, simulate

    kwargs = {}
    if settings.get("rate") is not None:
        kwargs["rate"] = float(settings["rate"])
    if settings.get("q_noise") is not None or settings.get("tau_noise") is not None:
        sensors = SensorSettings(
            q_noise=float(settings.get("q_noise", 0.0)), tau_noise_relative=float(settings.get("tau_noise", 0.0)),
            **kwargs,
        )
    else:
        sensors = SensorSettings.with_noise_level(settings.get("noise", "realistic"), **kwargs)
    res = simulate(robot.model, traj, periods=settings.get("periods", 2), sensors=sensors,
                   seed=int(settings.get("seed", 0)))
    res.write_csv(out)
    write_atomic(truth, json.dumps({"label": "truth (virtual robot)", "parameters": res.truth}, indent=1))


def _processing_for(spec: CampaignSpec, traj_paths, name: str):
    from robid.io.measurement_file import read_trajectory_timing
    from robid.signals import ProcessingOptions

    base = ProcessingOptions(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec.processing.items()})
    traj = _traj_of(spec, name)
    if traj is None:
        return base
    period, excited = read_trajectory_timing(traj_paths[traj])
    import dataclasses

    return dataclasses.replace(base, period=period, period_source="trajectory", excited_harmonics=excited)


def truth_base_values(robot, truth_files: list[Path]):
    """Base values of the virtual robot's true parameters (None unless every file agrees)."""
    import numpy as np

    from robid.simulation.truth import parameters_for

    vectors = []
    for f in truth_files:
        truth = json.loads(Path(f).read_text())["parameters"]
        vectors.append(parameters_for(robot.parameter_names, truth))
    if not vectors or any(not np.allclose(v, vectors[0]) for v in vectors):
        return None
    return robot.base_parameters().values(vectors[0])


def _identify(robot, spec: CampaignSpec, meas_paths, traj_paths, truths, out: Path):
    from robid.identification import IdentificationOptions, identify, write_result

    names = (*spec.identify, *spec.validate)
    options = IdentificationOptions(
        method=spec.method,
        file_processing={str(meas_paths[n]): _processing_for(spec, traj_paths, n) for n in names},
        file_mapping={str(meas_paths[n]): _mapping_of(spec, n) for n in names if _mapping_of(spec, n)},
    )
    result = identify(robot, [meas_paths[n] for n in spec.identify], options,
                      validation_files=[meas_paths[n] for n in spec.validate])
    reference = None
    truth_files = [truths[n] for n in spec.identify if n in truths]
    if truth_files and len(truth_files) == len(spec.identify):
        values = truth_base_values(robot, truth_files)
        if values is not None:
            reference = {"label": "truth", "base_values": values}
    write_result(out, result, reference)
    return result


def _report(robot, spec: CampaignSpec, result, result_path: Path, out: Path, traj: Path | None, truths) -> None:
    from robid.report import write_report, write_report_from_file

    title = spec.report.get("title", f"robid campaign {spec.name}")
    truth_files = [truths[n] for n in spec.identify if n in truths]
    reference = None
    if truth_files and len(truth_files) == len(spec.identify):
        values = truth_base_values(robot, truth_files)
        if values is not None:
            reference = {"truth": values}
    if result is not None:
        write_report(out, result, trajectory=traj, reference=reference, title=title)
    else:
        write_report_from_file(out, result_path, robot=robot, trajectory=traj, reference=reference, title=title)
