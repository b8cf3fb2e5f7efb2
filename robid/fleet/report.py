"""The fleet's HTML page: summary, drift flags, one parameter table per robot type, a figure per flagged parameter.

One self-contained file (inline CSS, figures as PNG data URIs, no script, nothing fetched), every text escaped,
written atomically (docs/fleet-drift.md)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from robid.fleet.drift import BETWEEN, FleetDrift, ParameterTable
from robid.fleet.results import FleetResult
from robid.io.files import write_atomic

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#1d232b}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.wrap{overflow-x:auto}table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.2em .5em;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
tr.maint td:first-child{font-weight:600}
tr.flag-m td{background:#fde2e4}tr.flag-o td{background:#fff3cd}
td.flagged{background:#fde2e4;font-weight:600}td.weak{color:#999}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.8em;color:#fff;background:#d1495b}
.badge.other{background:#b08900}.ok{color:#2a7d2a}.fail{color:#b00020}
figure{margin:.8em 0}figcaption{font-size:.85em;color:#555}
"""


def _e(x) -> str:
    return html.escape(str(x))


def _num(x: float | None, digits: int = 5) -> str:
    return "" if x is None else f"{x:.{digits}g}"


def write_fleet_report(path: str | Path, results: Sequence[FleetResult], drift: FleetDrift,
                       title: str = "robid fleet", *, figures: bool = True) -> Path:
    """Write the fleet page to ``path`` (atomically) and return the path."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _summary(results, drift),
        _flags(drift),
    ]
    for table in drift.tables:
        parts.append(_type_section(table, drift))
    if figures and drift.flags:
        parts.append(_figures(drift))
    parts.append("</body></html>\n")
    return write_atomic(path, "\n".join(parts))


def _summary(results: Sequence[FleetResult], drift: FleetDrift) -> str:
    robots = sorted({(r.robot_type, r.serial) for r in results})
    types = sorted({r.robot_type for r in results})
    dates = sorted({r.date for r in results})
    failed = [r for r in results if not r.ok]
    recomputed = sum(1 for r in results if r.ok and r.recomputed)
    out = ['<h2 id="summary">Summary</h2><ul>',
           f"<li>{len(robots)} robot(s) of {len(types)} type(s): "
           + ", ".join(_e(t) for t in types) + "</li>",
           f"<li>{len(results)} identification(s) on {len(dates)} date(s)"
           + (f" ({_e(dates[0])} to {_e(dates[-1])})" if dates else "")
           + f"; {len(results) - len(failed)} ran ({recomputed} computed in this run), "
           + f'<span class="{"fail" if failed else "ok"}">{len(failed)} failed</span></li>',
           f"<li>{len(drift.flags)} drift flag(s), {len(drift.maintenance_flags)} maintenance relevant</li>",
           f"<li>Rules: between identifications |change| &gt; {drift.z_between:g} &times; "
           f"sqrt(std<sub>a</sub>&sup2; + std<sub>b</sub>&sup2;) and at least {drift.min_change_percent:g} %; "
           f"population |value &minus; median| &gt; {drift.z_population:g} &times; max(1.4826 MAD, "
           f"{drift.scale_floor_percent:g} % of |median|, median std), with at least {drift.min_robots} robots; "
           "well-identified parameters only (docs/fleet-drift.md)</li></ul>"]
    if failed:
        out.append('<div class="wrap"><table><tr><th>robot</th><th>type</th><th>date</th><th>campaign</th>'
                   "<th>reason</th></tr>")
        for r in failed:
            out.append(f'<tr><td>{_e(r.serial)}</td><td>{_e(r.robot_type)}</td><td>{_e(r.date)}</td>'
                       f'<td>{_e(r.campaign)}</td><td class="fail" style="text-align:left">'
                       f"{_e(r.error or 'no record')}</td></tr>")
        out.append("</table></div>")
    if drift.notes:
        out.append("<details><summary>Notes (" + str(len(drift.notes)) + ")</summary><ul>")
        out += [f"<li>{_e(n)}</li>" for n in drift.notes]
        out.append("</ul></details>")
    return "\n".join(out)


def _flags(drift: FleetDrift) -> str:
    out = ['<h2 id="flags">Drift flags</h2>']
    if not drift.flags:
        out.append('<p class="ok">No drift flag.</p>')
        return "\n".join(out)
    out.append('<div class="wrap"><table><tr><th>robot</th><th>type</th><th>parameter</th><th>check</th>'
               "<th>dates</th><th>from</th><th>to</th><th>change</th><th>change %</th><th>uncertainty</th>"
               "<th>score</th><th>meaning</th></tr>")
    for f in drift.flags:
        badge = '<span class="badge">maintenance</span> ' if f.maintenance_relevant else \
            '<span class="badge other">other</span> '
        dates = f"{_e(f.date_from)} &rarr; {_e(f.date_to)}" if f.kind == BETWEEN else _e(f.date_to)
        out.append(
            f'<tr class="{"flag-m" if f.maintenance_relevant else "flag-o"}"><td>{_e(f.serial)}</td>'
            f"<td>{_e(f.robot_type)}</td><td>{badge}{_e(f.parameter)}</td><td>{_e(f.kind)}</td><td>{dates}</td>"
            f"<td>{_num(f.value_from)}</td><td>{_num(f.value_to)}</td><td>{_num(f.change, 4)}</td>"
            f"<td>{f.change_percent:+.1f}</td><td>{_num(f.uncertainty, 3)}</td><td>{f.score:+.1f}</td>"
            f'<td style="text-align:left">{_e(f.meaning)}</td></tr>'
        )
    out.append("</table></div>")
    return "\n".join(out)


def _type_section(table: ParameterTable, drift: FleetDrift) -> str:
    flagged = {(f.serial, f.date_to, f.parameter) for f in drift.flags if f.robot_type == table.robot_type}
    out = [f"<h2>{_e(table.robot_type)}: base parameters</h2>",
           "<p>value &plusmn; std per robot and date; maintenance-relevant parameters first (bold); grey: not "
           "well-identified in that identification (not used for drift); red: flagged.</p>",
           '<div class="wrap"><table><tr><th>parameter</th>']
    out += [f"<th>{_e(serial)}<br>{_e(date)}</th>" for serial, date in table.columns]
    out.append("</tr>")
    for i, name in enumerate(table.parameters):
        cells = []
        for j, (serial, date) in enumerate(table.columns):
            v, s, c = table.values[i][j], table.std[i][j], table.classes[i][j]
            text = "" if v is None else _num(v) + ("" if s is None else f" &plusmn; {_num(s, 2)}")
            css = "flagged" if (serial, date, name) in flagged else ("weak" if c != "well-identified" else "")
            cells.append(f'<td class="{css}" title="{_e(c or "")}">{text}</td>' if css else f"<td>{text}</td>")
        row = '<tr class="maint">' if table.maintenance[i] else "<tr>"
        out.append(f'{row}<td>{_e(name)}</td>{"".join(cells)}</tr>')
    out.append("</table></div>")
    return "\n".join(out)


def _figures(drift: FleetDrift) -> str:
    """Values against date per robot, with 1-std error bars, for every flagged (type, parameter)."""
    try:
        from robid.report._figures import figure_html, margins, new_figure, style
    except ImportError:  # matplotlib missing: the page without figures
        return ""
    out = ['<h2 id="figures">Flagged parameters over time</h2>']
    seen = []
    for f in drift.flags:
        if (f.robot_type, f.parameter) not in seen:
            seen.append((f.robot_type, f.parameter))
    for robot_type, name in seen:
        table = drift.table(robot_type)
        i = table.parameters.index(name)
        flagged = {f.serial for f in drift.flags if f.robot_type == robot_type and f.parameter == name}
        with style():
            fig = new_figure(3.2)
            margins(fig, left=1.0, right=2.0, top=0.35, bottom=0.6)
            ax = fig.add_subplot(1, 1, 1)
            for serial in sorted({s for s, _ in table.columns}):
                idx = [j for j, (s, _) in enumerate(table.columns) if s == serial and table.values[i][j] is not None]
                if not idx:
                    continue
                dates = [table.columns[j][1] for j in idx]
                ax.errorbar(dates, [table.values[i][j] for j in idx],
                            yerr=[table.std[i][j] or 0.0 for j in idx], marker="o", capsize=3,
                            lw=2.0 if serial in flagged else 0.8, alpha=1.0 if serial in flagged else 0.5,
                            label=serial)
            ax.set_ylabel(name)
            ax.set_title(f"{robot_type}: {name}")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
            out.append(str(figure_html(fig, alt=f"{robot_type} {name} against date",
                                       caption=f"{name} of every {robot_type} robot against date (error bars: "
                                               f"1 std); flagged: {', '.join(sorted(flagged))}")))
    return "\n".join(out)
