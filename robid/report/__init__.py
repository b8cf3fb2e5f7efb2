"""Self-contained HTML identification report (docs/report.md).

    from robid.report import write_report, write_report_from_file
    write_report("report.html", result, trajectory="traj.json", reference={"truth": base_values})
    write_report_from_file("report.html", "RESULT.json", validate=["val.csv"], truth="truth.json")

The page is assembled by :class:`Report` from section objects (``robid.report.sections``), each rendering its
own HTML fragment from a :class:`ReportData`. Figures are matplotlib PNGs inlined as data URIs; CSS is inline;
the file references nothing outside itself and needs no script.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from robid.report._data import ReportData, Run, Thresholds, from_result, from_result_file, read_truth_file
from robid.report._html import Report, Section


def build_report(data: ReportData, sections: Sequence[Section] | None = None) -> str:
    """The HTML text of the report."""
    return Report(sections).render(data)


def _write(path: str | Path, text: str) -> Path:
    from robid.io.files import write_atomic

    return write_atomic(path, text)


def write_report(
    path: str | Path,
    result,
    *,
    trajectory=None,
    reference=None,
    title: str | None = None,
    thresholds: Thresholds | None = None,
) -> Path:
    """Write the report of an in-process :class:`~robid.identification.IdentificationResult` (atomically).

    ``trajectory``: the excitation's TRAJ.json (path or TrajectoryFile); ``reference``: ``{label: base values}``
    (sequence aligned with the base parameters, or mapping name -> value), e.g. ``{"truth": values}``."""
    data = from_result(result, trajectory=trajectory, reference=reference, title=title, thresholds=thresholds)
    return _write(path, build_report(data))


def write_report_from_file(
    path: str | Path,
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
) -> Path:
    """Write the report of a RESULT.json (atomically); see :func:`robid.report._data.from_result_file`."""
    data = from_result_file(
        result_path,
        robot=robot,
        validate=validate,
        trajectory=trajectory,
        reference=reference,
        truth=truth,
        title=title,
        mapping=mapping,
        policy=policy,
        thresholds=thresholds,
    )
    return _write(path, build_report(data))


__all__ = [
    "Report",
    "ReportData",
    "Run",
    "Section",
    "Thresholds",
    "build_report",
    "from_result",
    "from_result_file",
    "read_truth_file",
    "write_report",
    "write_report_from_file",
]
