"""Run a campaign: design -> export -> measure (virtual robot or files) -> identify (+validate) -> report.

Each step has a fingerprint: the hash of its own settings, of the files it reads, of the robot (file
content and terms) and of robid's own source code. Fingerprints of the last successful run are kept in
``<root>/.robid-campaign/<name>.json`` with the SHA-256 of every output the step wrote; a step whose fingerprint
and outputs are unchanged is skipped and says so, and one whose output was changed or truncated since is
recomputed with a warning. Every artefact is written atomically by the library function that makes it; a failed
step names itself and the reason, and the artefacts of the earlier steps stay.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from robid import progress
from robid.campaign.campaign_file import CampaignSpec
from robid.defaults import CLOSED_LOOP_METHODS
from robid.errors import RobidInputError
from robid.io.files import content_hash, ensure_folder
from robid.record import IdentificationRecord

_log = logging.getLogger(__name__)


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
    record: IdentificationRecord

    @property
    def recomputed(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps if s.status == "ran")


def _file_hash(path: Path) -> str:
    """Hash of a file's bytes, or of a folder's files (robid.io.files.content_hash)."""
    return content_hash(path)


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
    """The fingerprint of every step's last successful run and the SHA-256 of each output it wrote: a step is up
    to date only when both still hold, so an output edited, truncated or replaced since is recomputed (with a
    warning that says which), never trusted."""

    def __init__(self, root: Path, name: str):
        self.path = root / ".robid-campaign" / f"{name}.json"
        try:  # a missing or damaged state file only means that every step runs again
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError, RecursionError):
            self.data = {}
        if not isinstance(self.data, dict):
            self.data = {}

    def fresh(self, step: str, fp: str, outputs: list[Path]) -> bool:
        entry = self.data.get(step)
        if not isinstance(entry, dict) or entry.get("fingerprint") != fp or not all(p.exists() for p in outputs):
            return False
        hashes = entry.get("outputs") or {}
        changed = [p for p in outputs if hashes.get(str(p)) != content_hash(p)]
        if changed:
            _log.warning(f"[{step}] {', '.join(map(str, changed))}: changed since the step wrote it (its SHA-256 "
                         "differs): recomputed")
        return not changed

    def record(self, step: str, fp: str, outputs: list[Path]) -> None:
        from robid.io.files import write_json

        self.data[step] = {"fingerprint": fp, "outputs": {str(p): content_hash(p) for p in outputs if p.exists()}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, dict(sorted(self.data.items())))


def run_campaign(
    spec: CampaignSpec, root: str | Path = ".", *, force: bool = False, log: Callable[[str], None] | None = None
) -> CampaignRun:
    """Run every step of ``spec`` under ``root`` (module docstring); steps whose fingerprint and outputs are
    unchanged are skipped (``force``: run them all). The step lines go to ``log``, by default to the logger
    ``robid.campaign.runner`` (silent unless logging is configured, robid.progress)."""
    from robid.errors import RobidOptionError
    from robid.requests import Where

    log = log or _log.info
    c = _Campaign(spec, Path(root), force, log)
    try:
        with progress.bar(c.step_count(), f"campaign {spec.name}", "steps") as c.bar:
            traj_paths = c.designs()
            c.exports(traj_paths)
            meas_paths, truths = c.measurements(traj_paths)
            result_path, record = c.identification(traj_paths, meas_paths, truths)
            report_path = c.report(traj_paths, result_path, record)
    except RobidOptionError as exc:  # the library names the option's field: the campaign file's words for it
        raise RobidInputError(Where.campaign(spec.source).words(exc)) from None
    if all(s.status == "up to date" for s in c.outcomes):
        log(f"campaign {spec.name}: nothing to recompute, all {len(c.outcomes)} steps up to date")
    if record is None:
        from robid.io.result_file import read_result

        record = read_result(result_path)
    return CampaignRun(spec, c.root, tuple(c.outcomes), result_path, report_path, record)


class _Campaign:
    """The steps of one campaign run, each cached by its fingerprint (module docstring)."""

    def __init__(self, spec: CampaignSpec, root: Path, force: bool, log: Callable[[str], None]):
        from robid.model.loader import builtin_robot_names, builtin_robot_path
        from robid.robot import load_robot
        from robid.version import __version__

        self.spec, self.root, self.force, self.log = spec, root, force, log
        self.dirs = {k: root / k / spec.name for k in ("trajectories", "measurements", "reports")}
        for d in self.dirs.values():
            ensure_folder(d, "campaign's output folder")
        self.state = _State(root, spec.name)
        self.robot = load_robot(spec.robot, terms=spec.terms)
        #: the robot identification and the report use: other terms when the campaign's identification names them
        self.ident_robot = (load_robot(spec.robot, terms=spec.identification_terms)
                            if spec.identification_terms else self.robot)
        robot_path = builtin_robot_path(spec.robot) if spec.robot in builtin_robot_names() else Path(spec.robot)
        self.code_fp = code_fingerprint()
        self.robot_fp = _fingerprint(_file_hash(robot_path), self.robot.terms, __version__, self.code_fp)
        self.outcomes: list[StepOutcome] = []
        self.bar: progress.Bar | None = None  # set while the steps run

    def step_count(self) -> int:
        """Steps of a run: designs, exports, virtual-robot runs, identification and the report."""
        s = self.spec
        return (sum(t.file is None for t in s.trajectories) + len(s.exports)
                + sum(m.file is None for m in s.measurements) + 1 + (s.report is not None))

    def step(self, name: str, fp: str, outputs: list[Path], action: Callable[[], object]):
        """Run ``action`` unless the step is up to date; its return value (None when skipped)."""
        if not self.force and self.state.fresh(name, fp, outputs):
            self.outcomes.append(StepOutcome(name, "up to date", tuple(map(str, outputs)), 0.0))
            self.log(f"[{name}] up to date")
            self._advance()
            return None
        self.log(f"[{name}] running ...")
        t0 = time.perf_counter()
        try:
            value = action()
        except RobidInputError as exc:
            raise RobidInputError(f"campaign {self.spec.name}, step {name}: {exc}") from None
        seconds = time.perf_counter() - t0
        self.state.record(name, fp, outputs)
        self.outcomes.append(StepOutcome(name, "ran", tuple(map(str, outputs)), seconds))
        self.log(f"[{name}] done in {seconds:.1f} s -> {', '.join(map(str, outputs))}")
        self._advance()
        return value

    def _advance(self) -> None:
        if self.bar is not None:
            self.bar.update()

    def designs(self) -> dict[str, Path]:
        """1. excitation designs (or the given trajectory files)."""
        paths = {t.name: t.file for t in self.spec.trajectories if t.file is not None}
        for t in (t for t in self.spec.trajectories if t.file is None):
            out = paths[t.name] = self.dirs["trajectories"] / f"{t.name}.json"
            fp = _fingerprint("design", self.robot_fp, t.spec)
            self.step(f"design {t.name}", fp, [out], lambda t=t, out=out: _design(self.robot, self.spec, t, out))
        return paths

    def exports(self, traj_paths: dict[str, Path]) -> None:
        """2. controller programs."""
        for e in self.spec.exports:
            ext = {"csv": "csv", "krl": "src", "rapid": "mod", "urscript": "script"}[e.format]
            out = self.dirs["trajectories"] / f"{e.trajectory}.{ext}"
            traj = traj_paths[e.trajectory]
            fp = _fingerprint("export", self.code_fp, _file_hash_later(traj), e.format, e.periods, e.rate)
            self.step(f"export {e.trajectory} {e.format}", fp, [out], lambda e=e, t=traj, o=out: _export(t, e, o))

    def measurements(self, traj_paths: dict[str, Path]) -> tuple[dict[str, Path], dict[str, Path]]:
        """3. measurements: the given files, or runs of the virtual robot with their truth files."""
        paths = {m.name: m.file for m in self.spec.measurements if m.file is not None}
        truths: dict[str, Path] = {}
        for m in (m for m in self.spec.measurements if m.file is None):
            out = paths[m.name] = self.dirs["measurements"] / f"{m.name}.csv"
            truth = truths[m.name] = self.dirs["measurements"] / f"{m.name}.truth.json"
            traj = traj_paths[m.trajectory]
            fp = _fingerprint("simulate", self.robot_fp, _file_hash_later(traj), m.simulate)
            self.step(f"simulate {m.name}", fp, [out, truth], lambda m=m, t=traj, o=out, tr=truth: _simulate(
                self.robot, t, m.simulate, o, tr))
        return paths, truths

    def identification(self, traj_paths, meas_paths, truths) -> tuple[Path, IdentificationRecord | None]:
        """4. identification and validation: RESULT.json (the record, with the truth when simulated)."""
        spec = self.spec
        result_path = self.dirs["reports"] / "result.json"
        used = list(spec.identify) + list(spec.validate)
        trajectories = [_traj_of(spec, n) for n in used]
        fp = _fingerprint(
            "identify",
            self.robot_fp,
            list(self.ident_robot.terms),
            spec.method,
            spec.feedforward,
            spec.friction_models,
            spec.compare_methods,
            spec.processing,
            [(n, _file_hash_later(meas_paths[n])) for n in used],
            [(n, _file_hash_later(traj_paths[t]) if t else None) for n, t in zip(used, trajectories, strict=True)],
            [_mapping_fingerprint(_mapping_of(spec, n)) for n in used],
            [_measurement(spec, n).processing for n in used],
            spec.screening,
            [(r.label, r.robot, _file_hash_later(Path(r.robot)) if Path(r.robot).is_file() else None,
              _file_hash_later(r.parameters) if r.parameters else None, r.armature, r.terms, r.sigmoid_friction)
             for r in spec.references],
        )
        record = self.step("identify", fp, [result_path], lambda: _identify(
            self.ident_robot, spec, meas_paths, traj_paths, truths, result_path))
        return result_path, record

    def report(self, traj_paths, result_path: Path, record: IdentificationRecord | None) -> Path | None:
        """5. the HTML report of RESULT.json."""
        if self.spec.report is None:
            return None
        out = self.dirs["reports"] / "report.html"
        first_traj = _traj_of(self.spec, self.spec.identify[0])
        traj = traj_paths.get(first_traj)
        fp = _fingerprint("report", self.code_fp, _file_hash(result_path), self.spec.report,
                          _file_hash_later(traj) if traj else None)
        self.step("report", fp, [out], lambda: _report(self.ident_robot, self.spec, record, result_path, out, traj))
        return out


def _file_hash_later(path: Path) -> str:
    """Hash of an input that an earlier step may just have written (it exists by the time it is needed)."""
    return _file_hash(path) if path.exists() else "missing"


def _measurement(spec: CampaignSpec, name: str):
    return next(m for m in spec.measurements if m.name == name)


def _traj_of(spec: CampaignSpec, name: str) -> str | None:
    return _measurement(spec, name).trajectory


def _mapping_of(spec: CampaignSpec, name: str):
    return _measurement(spec, name).mapping


def _mapping_fingerprint(mapping) -> list | None:
    """The mapping's path, content and the content of the drive-gain file it points to (currents.gain_scale):
    editing either changes the torques, so the identification runs again."""
    if mapping is None or not Path(mapping).is_file():
        return None if mapping is None else [str(mapping)]
    out = [str(mapping), _file_hash(Path(mapping))]
    try:
        from robid.io.mapping import read_mapping

        currents = read_mapping(mapping).groups.get("currents")
    except RobidInputError:
        return out  # the identification step says what is wrong with it
    if currents is not None and currents.gain_scale:
        out.append(_file_hash(Path(currents.gain_scale)))
    return out


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
    from robid.io.files import write_json
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
    write_json(truth, {"label": "truth (virtual robot)", "parameters": res.truth})


def _base_processing(spec: CampaignSpec, name: str | None = None):
    """The campaign's ``processing`` block as ProcessingOptions, with measurement ``name``'s own block over it
    (both checked when the campaign file was read)."""
    from robid.requests import Where, processing_request

    fields = dict(spec.processing)  # over the defaults every front end shares (robid.requests)
    block = "processing"
    if name is not None and _measurement(spec, name).processing:
        fields.update(_measurement(spec, name).processing)
        block = f"processing (and measurements.{name}.processing)"
    return processing_request(fields, Where.file(spec.source, block))


def _processing_for(spec: CampaignSpec, traj_paths, name: str):
    """A measurement's options: the campaign's, with its trajectory's period and excited harmonics (and, for a
    published design run once, the design whose executed period processing cuts)."""
    import dataclasses

    from robid.io.design_file import design_processing

    traj = _traj_of(spec, name)
    if traj is None:
        return _base_processing(spec, name)
    period, excited, design = design_processing(traj_paths[traj])
    return dataclasses.replace(_base_processing(spec, name), period=period, period_source="trajectory",
                               excited_harmonics=excited, design=design)


def truth_base_values(robot, truth_files: list[Path]):
    """Base values of the virtual robot's true parameters (None unless every file agrees)."""
    import numpy as np

    from robid.io.files import read_json
    from robid.simulation.truth import parameters_for

    vectors = [parameters_for(robot.parameter_names, read_json(f)["parameters"]) for f in truth_files]
    if not vectors or any(not np.allclose(v, vectors[0]) for v in vectors):
        return None
    return robot.base_parameters().values(vectors[0])


def _identify(robot, spec: CampaignSpec, meas_paths, traj_paths, truths, out: Path) -> IdentificationRecord:
    from robid.identification import IdentificationOptions, identify
    from robid.identification.references import load_reference
    from robid.io.result_file import write_result
    from robid.requests import Where, screening_request

    names = (*spec.identify, *spec.validate)
    meas_paths = _named_sources(meas_paths, names)
    references = tuple(
        load_reference(r.label, r.robot, parameters=r.parameters, armature=r.armature, terms=r.terms,
                       sigmoid_friction=r.sigmoid_friction, where=f"{spec.source}: references.{r.name}")
        for r in spec.references
    )
    options = IdentificationOptions(
        method=spec.method,
        processing=_base_processing(spec),
        file_processing={str(meas_paths[n]): _processing_for(spec, traj_paths, n) for n in names},
        file_mapping={str(meas_paths[n]): _mapping_of(spec, n) for n in names if _mapping_of(spec, n)},
        references=references,
        policy=screening_request(spec.screening, Where.file(spec.source, "screening")),
        closed_loop=_closed_loop(spec, meas_paths, traj_paths),
        friction_models=spec.friction_models,
        compare_methods=spec.compare_methods,
    )
    record = identify(robot, [meas_paths[n] for n in spec.identify], options,
                      validation_files=[meas_paths[n] for n in spec.validate])
    truth_files = [truths[n] for n in spec.identify if n in truths]
    if tuple(robot.terms) != tuple(record.terms):  # identification chose the layout (robid.identification.choices)
        robot = _with_terms(robot, record.terms)
    if truth_files and len(truth_files) == len(spec.identify):
        values = truth_base_values(robot, truth_files)
        if values is not None:
            record = record.with_references("truth", values)
    write_result(out, record)
    return record


def _closed_loop(spec: CampaignSpec, meas_paths, traj_paths):
    """Methods idim-iv and didim: each identification run's trajectory and the feed-forward; else None."""
    if not {spec.method, *spec.compare_methods} & set(CLOSED_LOOP_METHODS):
        return None
    from robid.identification.closed_loop_estimation import ClosedLoopOptions

    return ClosedLoopOptions(file_trajectory={str(meas_paths[n]): traj_paths[_traj_of(spec, n)] for n in spec.identify},
                             feedforward=spec.feedforward)


def _named_sources(paths: dict, names) -> dict:
    """The measurements' files, those given by more than one measurement (e.g. two time windows of one record)
    as RunSource named ``"<file> [<measurement>]"`` so that each keeps its own options."""
    from robid.identification.identify import RunSource

    counts: dict[str, int] = {}
    for n in names:
        counts[str(paths[n])] = counts.get(str(paths[n]), 0) + 1
    return {n: RunSource(Path(p), f"{p} [{n}]") if n in names and counts[str(p)] > 1 else p for n, p in paths.items()}


def _report(robot, spec: CampaignSpec, record, result_path: Path, out: Path, traj: Path | None) -> None:
    from robid.io.result_file import read_result
    from robid.report import write_report

    title = spec.report.get("title", f"robid campaign {spec.name}")
    record = record if record is not None else read_result(result_path)
    if tuple(robot.terms) != tuple(record.terms):  # identification chose the layout (robid.identification.choices)
        robot = _with_terms(robot, record.terms)
    write_report(out, record, robot, trajectory=traj, title=title, source=str(result_path))


def _with_terms(robot, terms):
    """The robot with the terms a record was identified with (identification may choose the elastic layout)."""
    from robid.robot import load_robot

    return load_robot(robot.model, terms=tuple(terms))
