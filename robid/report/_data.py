"""What a report is made from: the identification record (robid.record), the robot it describes, the excitation
trajectory if given, reference values for the parameter table, and the verdict thresholds.

The report shows what identification computed and stored in the record; it re-processes nothing. A validation
file given to the report (``robid report --validate``) is a new run: it is processed with the options the record
stores and predicted with its values (robid.identification.held_out_run) before the report is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.record import IdentificationRecord, RunRecord
from robid.robot import Robot


@dataclass(frozen=True)
class VerdictThresholds:
    """Verdict thresholds (percent of the measured RMS torque per joint; percent of a joint's samples inside the 95 %
    prediction band that a good fit needs too; truth deviation in std)."""

    nrmse_good_percent: float = 5.0
    nrmse_acceptable_percent: float = 10.0
    band_coverage_good_percent: float = 90.0
    reference_sigma: float = 3.0


@dataclass(frozen=True, eq=False)
class ReportData:
    title: str
    subtitle: str
    robot: Robot
    record: IdentificationRecord
    trajectory: object | None = None  # robid.excitation.trajectory_file.TrajectoryFile
    trajectory_source: str | None = None
    references: dict[str, np.ndarray] = field(default_factory=dict)
    thresholds: VerdictThresholds = field(default_factory=VerdictThresholds)
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return list(self.record.names)

    @property
    def values(self) -> np.ndarray:
        return self.record.values

    @property
    def model(self):
        """The identified model the record describes (robid.identification.identified_model): base values and any
        adopted nonlinear friction."""
        from robid.identification.identified_model import IdentifiedModel

        return IdentifiedModel.of_record(self.record)

    @property
    def covariance(self) -> np.ndarray:
        """Covariance of the estimate (NaN where the record has none: no band is drawn there)."""
        return self.record.covariance_matrix

    @property
    def sigma(self) -> np.ndarray:
        return self.record.sigma

    @property
    def nominal(self) -> np.ndarray:
        """Nominal base values: the record's where stored, else from the robot file's parameters."""
        from_robot = self.robot.base_parameters().values(self.robot.parameters)
        stored = [p.nominal for p in self.record.base_parameters]
        return np.array([r if v is None else v for v, r in zip(stored, from_robot, strict=True)], dtype=float)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return self.record.runs

    @property
    def identification_runs(self) -> tuple[RunRecord, ...]:
        return self.record.data

    @property
    def validation_runs(self) -> tuple[RunRecord, ...]:
        return self.record.validation_data

    # -- notebooks (docs/report.md "In a notebook") ------------------------------------------------------------
    def sections(self, sections=None) -> list:
        """The report's sections that apply to this data (the default ones, or ``sections``), each bound to it:
        Jupyter shows each as its part of the report (robid.report.Section._repr_html_)."""
        from robid.report.sections import default_sections

        chosen = default_sections() if sections is None else sections
        return [s.bind(self) for s in chosen if s.applies(self)]

    def section(self, key: str):
        """One bound section by its anchor (``"parameters"``), title or class name (``"ParametersSection"``)."""
        from robid.report.sections import default_sections

        for s in default_sections():
            if key in (s.anchor, s.title, type(s).__name__):
                return s.bind(self)
        known = ", ".join(s.anchor for s in default_sections())
        raise RobidInputError(f"report section {key!r}: not one of {known}")

    def html(self) -> str:
        """The report's body for a notebook: title, contents and every section that applies, with the report's
        CSS scoped to it (the whole page, as a file, is robid.report.build_report)."""
        import html

        from robid.report.section import notebook_html

        shown = self.sections()
        toc = "\n".join(f'<li><a href="#{html.escape(s.anchor)}">{html.escape(s.title)}</a></li>' for s in shown)
        head = (f'<header class="page"><h1>{html.escape(self.title)}</h1><p>{html.escape(self.subtitle)}</p></header>'
                f'\n<nav class="toc"><strong>Contents</strong><ol>\n{toc}\n</ol></nav>')
        return notebook_html("\n".join([head, *(s.html() for s in shown)]))

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text view: the title, not the dataclass repr of the whole record."""
        printer.text(f"<ReportData {self.title!r}: {self.subtitle}>")


def load_trajectory_arg(trajectory):
    """(TrajectoryFile | None, source label) from a path (TRAJ.json or a published .mat design), a TrajectoryFile
    or None."""
    if trajectory is None:
        return None, None
    from robid.excitation.trajectory_file import TrajectoryFile
    from robid.io.design_file import read_design

    if isinstance(trajectory, TrajectoryFile):
        return trajectory, "trajectory (in memory)"
    return read_design(trajectory), str(trajectory)


def resolve_robot(robot, record: IdentificationRecord, result_path: Path | None = None) -> Robot:
    """``robot`` if given (a Robot, a file or a built-in name), else the record's robot_source if that file exists
    (as stored, or relative to the folder of RESULT.json), else the built-in robot named in the record."""
    from robid.robot import load_robot

    terms = record.terms or None
    if isinstance(robot, Robot):
        return robot
    if robot is not None:
        return load_robot(robot, terms=terms)
    folder = result_path.parent if result_path is not None else Path(".")
    source = record.robot_source
    if source:
        for candidate in (Path(source), folder / source):
            if candidate.is_file():
                return load_robot(candidate, terms=terms)
    name = record.robot
    # a robot file's name field may spell a built-in robot with dashes (tx200-3axis for tx200_3axis)
    for candidate in dict.fromkeys((name, name.replace("-", "_"))):
        if not candidate:
            continue
        try:
            return load_robot(candidate, terms=terms)
        except RobidInputError:
            pass
    where = result_path or "the record"
    raise RobidOptionError(None,
        f"{where}: robot: {name!r} is not a built-in robot and robot_source {source!r} does not exist;"
        " give the robot file with {robot}"
    )


def report_data(
    record: IdentificationRecord,
    robot=None,
    *,
    trajectory=None,
    reference=None,
    truth: str | Path | None = None,
    title: str | None = None,
    thresholds: VerdictThresholds | None = None,
    source: str = "in-process identification",
    result_path: Path | None = None,
) -> ReportData:
    """Report data of ``record`` (module docstring). ``reference``: ``{label: base values}`` (sequence aligned
    with the base parameters, or mapping name -> value); ``truth``: a reference file (robid.io.reference_file)."""
    from robid.identification.predict import check_result_matches
    from robid.io.reference_file import normalise_references, read_truth_file

    robot = resolve_robot(robot, record, result_path)
    check_result_matches(robot, record, str(result_path or "the record"))
    traj, traj_source = load_trajectory_arg(trajectory)
    if traj is not None and traj.trajectory.dof != robot.dof:
        raise RobidInputError(
            f"{traj_source}: the trajectory has {traj.trajectory.dof} joints, robot {robot.name} has {robot.dof}"
        )
    refs = record.references()
    if truth is not None:
        refs.update(read_truth_file(truth, robot))
    refs.update(normalise_references(reference, list(record.names)))
    return ReportData(
        title=title or f"robid identification report: {robot.name}",
        subtitle=(
            f"robot {robot.name} ({robot.dof} joints), estimator {record.method}, "
            f"{len(record.base_parameters)} base parameters; result: {source}"
        ),
        robot=robot,
        record=record,
        trajectory=traj,
        trajectory_source=traj_source,
        references=refs,
        thresholds=thresholds or VerdictThresholds(),
        notes=tuple(record.notes),
    )


def from_result_file(
    result_path: str | Path,
    *,
    robot=None,
    validate: Sequence[str | Path] | None = None,
    mapping: str | Path | None = None,
    policy=None,
    **options,
) -> ReportData:
    """Report data of RESULT.json. ``validate``: validation files to show instead of the record's own validation
    runs, processed with the record's options (``mapping``/``policy`` override the stored mapping and screening);
    ``options``: those of :func:`report_data`."""
    from robid import progress
    from robid.identification import held_out_run
    from robid.identification.predict import check_result_matches
    from robid.io.result_file import read_result

    result_path = Path(result_path)
    record = read_result(result_path)
    robot = resolve_robot(robot, record, result_path)
    if validate:
        check_result_matches(robot, record, str(result_path))  # before predicting with it
        runs = []
        for path in validate:
            if not Path(path).exists():  # a file, or a folder (a ROS 2 bag, a mapping's files)
                raise RobidInputError(f"{path}: validation file not found")
            progress.report(f"report: predicting validation data {path}")
            runs.append(held_out_run(robot, record, path, mapping=mapping, policy=policy))
        record = record.with_validation(runs)
    return report_data(record, robot, source=str(result_path), result_path=result_path, **options)
