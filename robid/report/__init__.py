"""Self-contained HTML identification report (docs/report.md).

    from robid.report import write_report, write_report_from_file
    write_report("report.html", record, robot, trajectory="traj.json", reference={"truth": base_values})
    write_report_from_file("report.html", "RESULT.json", validate=["val.csv"], truth="truth.json")

The page is assembled by :class:`Report` from section objects (``robid.report.sections``), each rendering its
own HTML fragment from a :class:`ReportData` built around the identification record. Figures are matplotlib
PNGs inlined as data URIs; CSS is inline; the file references nothing outside itself and needs no script.
Whether the record comes from memory or from RESULT.json, the page is the same.

In a notebook (docs/report.md, "In a notebook")::

    data = report_data(record, robot)     # shown whole by Jupyter (ReportData._repr_html_)
    data.sections()                       # the sections that apply, each shown as its part of the report
    data.section("parameters")            # one of them, by anchor, title or class name
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from robid.report._data import ReportData, VerdictThresholds, from_result_file, report_data
from robid.report._html import Report
from robid.report.section import Section


def build_report(data: ReportData, sections: Sequence[Section] | None = None) -> str:
    """The HTML text of the report."""
    return Report(sections).render(data)


def write_report(path: str | Path, record, robot=None, **options) -> Path:
    """Write the report of an identification record (atomically). ``robot``: the Robot, robot file or built-in
    name it was identified with (default: the record's robot_source, else its robot name); ``options``:
    ``trajectory`` (TRAJ.json path or TrajectoryFile), ``reference`` (``{label: base values}``), ``truth`` (a
    reference file), ``title``, ``thresholds`` (:class:`VerdictThresholds`)."""
    from robid.io.files import write_atomic

    return write_atomic(path, build_report(report_data(record, robot, **options)))


def write_report_from_file(path: str | Path, result_path: str | Path, **options) -> Path:
    """Write the report of a RESULT.json (atomically); see :func:`robid.report._data.from_result_file`."""
    from robid.io.files import write_atomic

    return write_atomic(path, build_report(from_result_file(result_path, **options)))


__all__ = [
    "Report",
    "ReportData",
    "Section",
    "VerdictThresholds",
    "build_report",
    "from_result_file",
    "report_data",
    "write_report",
    "write_report_from_file",
]
