"""Reading a campaign file (YAML, ``robid_campaign: 1``, docs/campaign.md); every error names the file and field.
The allowed keys come from the typed definition :mod:`robid.schemas.campaign` (``processing`` and ``screening``:
from the dataclasses ProcessingOptions and ScreeningPolicy, which that definition mirrors).

```yaml
robid_campaign: 1
name: kr-demo                       # artefacts go to trajectories/<name>/, measurements/<name>/, reports/<name>/
robot: kr_heavy                     # robot file (relative to the campaign file) or built-in name
terms: [rigid, rotor, viscous, coulomb, offset, compensator]   # optional (default: all that apply)
trajectories:                       # excitation designs (SPEC keys of docs/excitation.md), or existing files
  ident: {spec: {harmonics: 5, period: 10, seed: 1, starts: 2}}
  valid: {file: valid.json}         # a robid TRAJ.json, or a published design run once (.mat, docs/validation.md)
export:                             # controller programs, checked by parse-back
  - {trajectory: ident, format: krl, periods: 4}
measurements:                       # the virtual robot or real files
  ident: {simulate: {trajectory: ident, periods: 4, noise: realistic, seed: 1, rate: 250}}
  real1: {file: data/run1.csv, mapping: data/ur.yaml, trajectory: ident}
  real2: {file: data/run_dir, mapping: data/panda.yaml, processing: {start: 1.0, end: 14.0}}
screening: {drop_bad_rows: true}    # optional: ScreeningPolicy fields for reading every file (docs/signals.md)
processing: {snr_threshold: 20}     # ProcessingOptions fields (docs/signals.md); the period of a measurement
                                    # with a trajectory comes from that trajectory; a measurement's own
                                    # processing: block overrides these fields for that measurement
identification: {measurements: [ident], validation: [valid]}   # optional method (default auto: eiv in the
                                    # elastic layout, wls elsewhere); terms: [...] (default: the campaign's, with
                                    # stiffness and damping when the robot declares springs and the measurements
                                    # hold motor positions; design and simulation keep the campaign's);
                                    # methods idim-iv, didim simulate the closed loop along each measurement's
                                    # trajectory: optional feedforward: rigid|full|none (default rigid, the virtual
                                    # robot's); friction_models: auto (default: linear, stribeck, sigmoid
                                    # compared per joint where cheap), none, or a list such as [linear, stribeck]
                                    # (docs/estimation.md "Nonlinear friction"); compare_methods:
                                    # [wls, didim] scores other estimators on the validation runs
references:                         # optional: published or nominal models scored on the same samples
  published: {robot: published.yaml, parameters: values.yaml, armature: [0, 0], label: "Author 2020"}
report: {title: "KR demo"}          # optional; omit or false for no report
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robid.defaults import CLOSED_LOOP_METHODS, FRICTION_MODELS_AUTO
from robid.errors import RobidInputError
from robid.io.files import read_yaml
from robid.io.keys import check_field_types
from robid.io.keys import check_keys as _keys
from robid.requests import Where, estimator_request
from robid.schemas import campaign as schema

TOP_KEYS = schema.CAMPAIGN.keys()
REFERENCE_KEYS = schema.REFERENCE.keys()
SIMULATE_KEYS = schema.SIMULATE.keys()
EXPORT_KEYS = schema.EXPORT.keys()
IDENTIFICATION_KEYS = schema.IDENTIFICATION.keys()
REPORT_KEYS = schema.CAMPAIGN.child("report").keys()
TRAJECTORY_KEYS = schema.TRAJECTORY.keys()
#: the keys of a measurement: simulate (with processing) or file (with mapping, trajectory, processing)
MEASUREMENT_KEYS = {variant: schema.MEASUREMENT.keys(variant) for variant in schema.MEASUREMENT.keyed_variants}
_FORMATS = schema.FORMATS


@dataclass(frozen=True)
class TrajectorySource:
    name: str
    spec: dict | None = None  # design spec (inline)
    file: Path | None = None  # an existing TRAJ.json or published .mat design


@dataclass(frozen=True)
class ExportSpec:
    trajectory: str
    format: str
    periods: int = 1
    rate: float | None = None


@dataclass(frozen=True)
class MeasurementSource:
    name: str
    simulate: dict | None = None
    file: Path | None = None
    mapping: Path | None = None
    trajectory: str | None = None  # the trajectory it ran (period and excited harmonics for processing)
    #: this measurement's signal-stage options over the campaign's ``processing`` (e.g. start/end of a block)
    processing: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ReferenceSource:
    """A reference model (robid.identification.references): robot file (resolved) or built-in name, optional
    parameter file, armature and terms, and the label the record and report give it."""

    name: str
    label: str
    robot: str
    parameters: Path | None = None
    armature: tuple[float, ...] | None = None
    terms: tuple[str, ...] | None = None
    sigmoid_friction: dict | None = None  # {phi1: [...], phi2: [...], phi3: [...]} (checked when loaded)


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    robot: str
    source: Path
    terms: tuple[str, ...] | None
    trajectories: tuple[TrajectorySource, ...]
    exports: tuple[ExportSpec, ...]
    measurements: tuple[MeasurementSource, ...]
    processing: dict
    identify: tuple[str, ...]
    validate: tuple[str, ...]
    method: str
    report: dict | None
    #: terms of identification when they differ from the campaign's (e.g. the elastic layout: the design and the
    #: simulation use the robot's rigid terms, identification adds stiffness and damping)
    identification_terms: tuple[str, ...] | None = None
    #: reference models scored on every run next to the identified model
    references: tuple[ReferenceSource, ...] = ()
    #: ScreeningPolicy fields for reading every measurement (robid.io.screening; e.g. drop_bad_rows)
    screening: dict = field(default_factory=dict)
    #: methods idim-iv and didim: the controller's feed-forward (robid.identification.closed_loop)
    feedforward: str = "rigid"
    #: candidate friction models compared per joint (robid.identification.friction_selection), "auto" (compared
    #: where cheap, robid.identification.choices) or () for none
    friction_models: tuple[str, ...] | str = FRICTION_MODELS_AUTO
    #: other methods estimated on the same runs and scored on the validation runs
    compare_methods: tuple[str, ...] = ()
    raw: dict = field(default_factory=dict, compare=False)


def read_campaign(path: str | Path) -> CampaignSpec:
    path = Path(path)
    data = read_yaml(path)
    return campaign_from_dict(data, path)


def campaign_from_dict(data: Any, path: Path) -> CampaignSpec:
    w = str(path)
    if not isinstance(data, dict):
        raise RobidInputError(f"{w}: expected a mapping with robid_campaign, name, robot, ...")
    _keys(data, TOP_KEYS, w)
    check_field_types(data, schema.CAMPAIGN, w)
    if data.get("robid_campaign") != 1:
        raise RobidInputError(f"{w}: robid_campaign: schema version must be 1, got {data.get('robid_campaign')!r}")
    name = data.get("name")
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_." for c in name):
        raise RobidInputError(f"{w}: name: expected a folder-safe name (letters, digits, - _ .), got {name!r}")
    robot = data.get("robot")
    if not isinstance(robot, str) or not robot:
        raise RobidInputError(f"{w}: robot: expected a robot file or built-in name")
    if robot.endswith((".yaml", ".yml", ".urdf")):
        robot = str((path.parent / robot).resolve())
    terms = _term_list(data.get("terms"), f"{w}: terms")
    trajectories = _trajectories(data.get("trajectories") or {}, path)
    names = {t.name for t in trajectories}
    exports = _exports(data.get("export") or [], names, w)
    measurements = _measurements(data.get("measurements") or {}, names, path)
    identification = _identification(data.get("identification") or {}, measurements, w)
    processing = data.get("processing") or {}
    if not isinstance(processing, dict):
        raise RobidInputError(f"{w}: processing: expected a mapping of signal-stage options")
    _keys(processing, _processing_fields() - {"period"}, f"{w}: processing")
    _check_processing(processing, f"{w}: processing")
    report = data.get("report", {})
    if report is False or report is None:
        report = None
    elif not isinstance(report, dict):
        raise RobidInputError(f"{w}: report: expected a mapping (title: ...) or false")
    else:
        _keys(report, REPORT_KEYS, f"{w}: report")
    return CampaignSpec(
        name=name,
        robot=robot,
        source=path,
        terms=tuple(terms) if terms else None,
        trajectories=trajectories,
        exports=exports,
        measurements=measurements,
        processing=processing,
        report=report,
        references=_references(data.get("references") or {}, path),
        screening=_screening(data.get("screening") or {}, w),
        raw=data,
        **identification,
    )


def _identification(ident: Any, measurements, w: str) -> dict:
    """The ``identification`` block, checked, as CampaignSpec fields (identify, validate, method, terms, the
    closed-loop feed-forward, friction models and compared methods)."""
    mnames = {m.name for m in measurements}
    if not isinstance(ident, dict):
        raise RobidInputError(f"{w}: identification: expected a mapping")
    _keys(ident, IDENTIFICATION_KEYS, f"{w}: identification")
    chosen = estimator_request({k: ident[k] for k in ("method", "friction_models", "compare_methods", "feedforward")
                                if k in ident}, Where(lambda field: f"{w}: identification.{field}"))
    method, compare = chosen.method, chosen.compare_methods
    ident_terms = _term_list(ident.get("terms"), f"{w}: identification.terms")
    use = tuple(ident.get("measurements") or [])
    val = tuple(ident.get("validation") or [])
    for key, items in (("measurements", use), ("validation", val)):
        for m in items:
            if m not in mnames:
                raise RobidInputError(f"{w}: identification.{key}: unknown measurement {m!r} (have {sorted(mnames)})")
    if not use:
        raise RobidInputError(f"{w}: identification.measurements: name at least one measurement")
    if {method, *compare} & set(CLOSED_LOOP_METHODS):
        missing = [m.name for m in measurements if m.name in use and m.trajectory is None]
        if missing:
            raise RobidInputError(f"{w}: identification.method: {method} simulates the closed loop along the "
                                  f"trajectory each run followed; {', '.join(missing)} names none (trajectory: ...)")
    return {
        "identify": use,
        "validate": val,
        "method": method,
        "identification_terms": tuple(ident_terms) if ident_terms else None,
        "feedforward": chosen.feedforward,
        "friction_models": chosen.friction_models,
        "compare_methods": chosen.compare_methods,
    }


def _trajectories(data: Any, path: Path) -> tuple[TrajectorySource, ...]:
    w = f"{path}: trajectories"
    if not isinstance(data, dict):
        raise RobidInputError(f"{w}: expected a mapping name -> {{spec: ...}} or {{file: ...}}")
    out = []
    for name, item in data.items():
        iw = f"{w}.{name}"
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in TRAJECTORY_KEYS:
            raise RobidInputError(f"{iw}: expected exactly one of spec: {{...}} or file: TRAJ.json")
        if "spec" in item:
            if not isinstance(item["spec"], dict):
                raise RobidInputError(f"{iw}.spec: expected a mapping of design options (docs/excitation.md)")
            from robid.excitation.spec import spec_from_dict

            spec_from_dict(item["spec"], f"{iw}.spec")  # checked now, before any step runs
            out.append(TrajectorySource(str(name), spec=item["spec"]))
        else:
            f = (path.parent / str(item["file"])).resolve()
            if not f.exists():
                raise RobidInputError(f"{iw}.file: {f} does not exist")
            out.append(TrajectorySource(str(name), file=f))
    return tuple(out)


def _exports(data: Any, names: set[str], w: str) -> tuple[ExportSpec, ...]:
    if not isinstance(data, list):
        raise RobidInputError(f"{w}: export: expected a list of {{trajectory, format, periods}}")
    out = []
    for k, item in enumerate(data):
        iw = f"{w}: export[{k}]"
        if not isinstance(item, dict):
            raise RobidInputError(f"{iw}: expected a mapping")
        _keys(item, EXPORT_KEYS, iw)
        if item.get("trajectory") not in names:
            raise RobidInputError(f"{iw}.trajectory: unknown trajectory {item.get('trajectory')!r}")
        if item.get("format") not in _FORMATS:
            raise RobidInputError(f"{iw}.format: expected one of {', '.join(_FORMATS)}, got {item.get('format')!r}")
        periods = item.get("periods", 1)
        if not isinstance(periods, int) or periods < 1:
            raise RobidInputError(f"{iw}.periods: expected an integer >= 1")
        out.append(ExportSpec(item["trajectory"], item["format"], periods, item.get("rate")))
    return tuple(out)


def _measurements(data: Any, names: set[str], path: Path) -> tuple[MeasurementSource, ...]:
    w = f"{path}: measurements"
    if not isinstance(data, dict) or not data:
        raise RobidInputError(f"{w}: expected a mapping name -> {{simulate: ...}} or {{file: ...}}")
    out = []
    for name, item in data.items():
        iw = f"{w}.{name}"
        if not isinstance(item, dict):
            raise RobidInputError(f"{iw}: expected a mapping")
        own = item.get("processing") or {}
        if not isinstance(own, dict):
            raise RobidInputError(f"{iw}.processing: expected a mapping of signal-stage options")
        _keys(own, _processing_fields(), f"{iw}.processing")
        _check_processing(own, f"{iw}.processing")
        if "simulate" in item:
            _keys(item, MEASUREMENT_KEYS["simulate"], iw)
            sim = item["simulate"]
            if not isinstance(sim, dict):
                raise RobidInputError(f"{iw}.simulate: expected a mapping")
            _keys(sim, SIMULATE_KEYS, f"{iw}.simulate")
            if sim.get("trajectory") not in names:
                raise RobidInputError(f"{iw}.simulate.trajectory: unknown trajectory {sim.get('trajectory')!r}")
            out.append(MeasurementSource(str(name), simulate=dict(sim), trajectory=sim["trajectory"],
                                         processing=dict(own)))
        elif "file" in item:
            _keys(item, MEASUREMENT_KEYS["file"], iw)
            f = (path.parent / str(item["file"])).resolve()
            if not f.exists():
                raise RobidInputError(f"{iw}.file: {f} does not exist")
            mapping = (path.parent / str(item["mapping"])).resolve() if item.get("mapping") else None
            if mapping is not None and not mapping.exists():
                raise RobidInputError(f"{iw}.mapping: {mapping} does not exist")
            traj = item.get("trajectory")
            if traj is not None and traj not in names:
                raise RobidInputError(f"{iw}.trajectory: unknown trajectory {traj!r}")
            out.append(MeasurementSource(str(name), file=f, mapping=mapping, trajectory=traj, processing=dict(own)))
        else:
            raise RobidInputError(f"{iw}: expected simulate: {{...}} or file: PATH")
    return tuple(out)


def _references(data: Any, path: Path) -> tuple[ReferenceSource, ...]:
    w = f"{path}: references"
    if not isinstance(data, dict):
        raise RobidInputError(f"{w}: expected a mapping name -> {{robot: ..., parameters: ..., label: ...}}")
    out = []
    for name, item in data.items():
        iw = f"{w}.{name}"
        if not isinstance(item, dict) or not isinstance(item.get("robot"), str):
            raise RobidInputError(f"{iw}: expected a mapping with robot: FILE (and parameters:, armature:, label:)")
        _keys(item, REFERENCE_KEYS, iw)
        robot = item["robot"]
        if robot.endswith((".yaml", ".yml", ".urdf")):
            robot = str((path.parent / robot).resolve())
            if not Path(robot).exists():
                raise RobidInputError(f"{iw}.robot: {robot} does not exist")
        params = None
        if item.get("parameters") is not None:
            params = (path.parent / str(item["parameters"])).resolve()
            if not params.exists():
                raise RobidInputError(f"{iw}.parameters: {params} does not exist")
        arm = item.get("armature")
        if arm is not None and (not isinstance(arm, list) or not all(
                isinstance(a, (int, float)) and not isinstance(a, bool) for a in arm)):
            raise RobidInputError(f"{iw}.armature: expected a list of numbers, one per joint")
        terms = _term_list(item.get("terms"), f"{iw}.terms")
        out.append(ReferenceSource(str(name), str(item.get("label", name)), robot, params,
                                   tuple(float(a) for a in arm) if arm is not None else None,
                                   tuple(terms) if terms else None, item.get("sigmoid_friction")))
    return tuple(out)


def _term_list(value: Any, where: str, what: str = "term names") -> list[str] | None:
    """A list-of-names field (``terms``, methods, models): None, or a list of strings (checked where used)."""
    if value is not None and (not isinstance(value, list) or not all(isinstance(t, str) for t in value)):
        raise RobidInputError(f"{where}: expected a list of {what}, e.g. [a, b]")
    return value


def _processing_fields() -> set[str]:
    """ProcessingOptions fields a campaign may set (the others come from a measurement's trajectory)."""
    from robid.signals import ProcessingOptions

    return set(ProcessingOptions.__dataclass_fields__) - {"period_source", "excited_harmonics", "design"}


def _screening(data: Any, w: str) -> dict:
    """The ``screening`` block: ScreeningPolicy fields, each type-checked."""
    from robid.io.screening import ScreeningPolicy
    from robid.record.codec import from_plain

    if not isinstance(data, dict):
        raise RobidInputError(f"{w}: screening: expected a mapping of screening options (drop_bad_rows, ...)")
    _keys(data, set(ScreeningPolicy.__dataclass_fields__), f"{w}: screening")
    from_plain(ScreeningPolicy, data, f"{w}: screening")
    return dict(data)


def _check_processing(fields: dict, where: str) -> None:
    """Each field's type, as the request layer reads it when the campaign runs (robid.requests): a wrong one is
    named, with the block it is in."""
    from robid.requests import Where, processing_request

    decimate = fields.get("decimate")
    if isinstance(decimate, str) and decimate != "auto" or isinstance(decimate, int) and decimate < 1:
        raise RobidInputError(f"{where}: decimate: expected a positive integer or auto, got {decimate!r}")
    processing_request(fields, Where(lambda field: f"{where}: {field}"))
