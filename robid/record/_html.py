"""The identification record as a compact HTML summary for Jupyter (``IdentificationRecord._repr_html_``): robot,
method, base-parameter counts and classes, the torque fit per joint on every run, and the parameter table (the
first rows shown, the others folded in a ``<details>`` element). Self-contained: one scoped ``<style>``, no
script, no figure, every text escaped. The full report with figures is robid.report (docs/report.md)."""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from robid.record.identification import IdentificationRecord
    from robid.record.runs import TorqueFit

#: parameter rows shown before the others are folded away
HEAD_ROWS = 12

#: the numerical classes in the report's order, with the colour class of their cells
CLASS_LEVEL = {"well-identified": "good", "poorly-identified": "warn", "barely-excited": "bad"}

STYLE = """
.robid-record { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
                color: #1d232b; background: #fff; padding: 0.4rem 0.6rem; max-width: 100%; overflow-x: auto; }
.robid-record h4 { margin: 0.2rem 0 0.4rem; font-size: 1.05rem; }
.robid-record h5 { margin: 0.8rem 0 0.3rem; font-size: 0.95rem; }
.robid-record p { margin: 0.2rem 0; }
.robid-record table { border-collapse: collapse; margin: 0.3rem 0 0.5rem; font-size: 0.85rem; }
.robid-record th, .robid-record td { border: 1px solid #d8dde3; padding: 0.15rem 0.45rem; text-align: left;
                                    vertical-align: top; }
.robid-record th { background: #eef1f4; font-weight: 600; }
.robid-record td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.robid-record td.good { background: #e4f4e8; color: #1a7f37; }
.robid-record td.warn { background: #fff3d6; color: #8a5a00; }
.robid-record td.bad { background: #fde8e6; color: #b42318; }
.robid-record code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85rem; }
.robid-record .muted { color: #5b6570; }
.robid-record details summary { cursor: pointer; color: #1f5fa8; }
"""


def esc(text) -> str:
    """HTML text of anything: escaped, quotes included (safe in attributes too)."""
    return html.escape(str(text), quote=True)


def format_number(x, digits: int = 4) -> str:
    """A number with ``digits`` significant digits and a true minus sign; an en dash for a missing value; a
    non-number as its text, unescaped (the report's ``num`` is this function)."""
    if x is None:
        return "\u2013"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "\u2013"
    if math.isinf(x):
        return "\u221e" if x > 0 else "\u2212\u221e"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}".replace("-", "\u2212")


def num(x, digits: int = 4) -> str:
    """:func:`format_number`, escaped for HTML."""
    return esc(format_number(x, digits))


def pct(x, digits: int = 3) -> str:
    return "\u2013" if x is None else f"{num(x, digits)} %"


def table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, str]]]) -> str:
    """A table: ``headers`` are plain text (escaped here); each cell is ``(html, css class)``, its HTML already
    escaped by the caller (:func:`esc`, :func:`num`)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join(
        "<tr>" + "".join(f'<td class="{esc(c)}">{text}</td>' if c else f"<td>{text}</td>" for text, c in row) + "</tr>"
        for row in rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def counts(values: Iterable[str | None]) -> str:
    """``3 well-identified, 1 barely-excited`` (escaped), in order of first occurrence."""
    c = Counter(v for v in values if v is not None)
    return ", ".join(f"{n} {esc(k)}" for k, n in c.items()) or "none"


def _fit_cells(fit: TorqueFit, joints: Sequence[str]) -> list[tuple[str, str]]:
    """NRMSE and share inside the 95 % band of every joint (by name; a dash for a joint the fit lacks)."""
    by_joint = {m.joint: m for m in fit.per_joint}
    cells = []
    for joint in joints:
        m = by_joint.get(joint)
        cells.append((pct(m.nrmse_percent if m else None), "n"))
        cells.append((pct(m.inside_band_percent if m else None), "n"))
    return cells


def fit_table(record: IdentificationRecord) -> str:
    """NRMSE and share inside the band per joint: over all identification runs, then every run."""
    joints = list(record.joints)
    headers = ["run", "samples"] + [f"{j} {what}" for j in joints for what in ("NRMSE", "in band")]
    rows = [[("<em>identification (all runs)</em>", ""), (str(record.metrics.samples), "n"),
             *_fit_cells(record.metrics, joints)]]
    for run in record.runs:
        rows.append([(esc(run.label), ""), (str(run.fit.samples), "n"), *_fit_cells(run.fit, joints)])
    return table(headers, rows)


def _parameter_row(index: int, p, labels: Sequence[str]) -> list[tuple[str, str]]:
    name = f"<code>{esc(p.name)}</code>"
    if p.grouped:
        name += f'<br><span class="muted"><code>= {esc(p.expression)}</code></span>'
    return [
        (str(index), "n"),
        (name, ""),
        (num(p.value), "n"),
        (num(p.std, 3), "n"),
        (pct(p.relative_std_percent), "n"),
        (esc(p.identifiability), CLASS_LEVEL.get(p.identifiability, "")),
        (num(p.nominal), "n"),
        *((num(dict(p.references).get(label)), "n") for label in labels),
    ]


def parameter_tables(record: IdentificationRecord, head: int = HEAD_ROWS) -> str:
    """The first ``head`` base parameters in a table, the others in a folded one; a column per reference."""
    labels = record.reference_labels
    headers = ["#", "name", "value", "std", "rel. std", "class", "nominal", *labels]
    rows = [_parameter_row(k + 1, p, labels) for k, p in enumerate(record.base_parameters)]
    out = table(headers, rows[:head])
    if len(rows) > head:
        out += (f"\n<details><summary>the other {len(rows) - head} base parameters</summary>\n"
                f"{table(headers, rows[head:])}\n</details>")
    return out


def record_html(record: IdentificationRecord) -> str:
    """The summary (module docstring)."""
    nb = len(record.base_parameters)
    source = f" ({esc(record.robot_source)})" if record.robot_source else ""
    validation = len(record.validation_data)
    lines = [
        f"<h4>IdentificationRecord: robot {esc(record.robot)}</h4>",
        f"<p>robot {esc(record.robot)}{source}, {len(record.joints)} joints "
        f"({esc(', '.join(record.joints))}), terms {esc(', '.join(record.terms))}</p>",
        f"<p>estimator <code>{esc(record.method)}</code>; {len(record.data)} identification run(s), "
        f"{validation} validation run(s); schema {esc(record.schema)}</p>",
        f"<p><strong>{nb} base parameters</strong>: "
        f"{counts(p.identifiability for p in record.base_parameters)}. "
        f"Standard parameters ({len(record.standard_parameters)}): "
        f"{counts(p.structural_class for p in record.standard_parameters)}.</p>",
    ]
    if record.correlated_pairs:
        pairs = ", ".join(f"{esc(c.first)}/{esc(c.second)}" for c in record.correlated_pairs)
        lines.append(f"<p>Strongly correlated pairs: {pairs}.</p>")
    lines += [
        "<h5>Torque fit per joint (NRMSE, share inside the 95 % prediction band)</h5>",
        fit_table(record),
        "<h5>Base parameters</h5>",
        parameter_tables(record),
        f'<p class="muted">std of the {esc(record.estimation.method)} estimate; relative std = std / |value|. '
        "No units here (the record does not know the joint types; the report's parameter table has them). "
        "<code>record.to_frame(...)</code> gives these tables as pandas DataFrames, "
        "<code>robid.report.report_data(record)</code> the report with figures.</p>",
    ]
    if record.notes:
        lines.append(f'<p class="muted">{len(record.notes)} note(s): see <code>record.notes</code>.</p>')
    body = "\n".join(lines)
    return f'<div class="robid-record">\n<style>{STYLE}</style>\n{body}\n</div>'
