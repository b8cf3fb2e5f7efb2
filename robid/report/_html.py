"""Page skeleton: the jinja2 environment, number filters, the Section base class and the Report that assembles
sections into one self-contained HTML file (inline CSS, figures as inline PNG, no script, no network)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

if TYPE_CHECKING:  # pragma: no cover
    from robid.report._data import ReportData


def num(x, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; an en dash for a missing value."""
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
    text = f"{x:.{digits}g}"
    return text.replace("-", "\u2212")


def pct(x, digits: int = 3) -> str:
    return "\u2013" if x is None else f"{num(x, digits)} %"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["num"] = num
    env.filters["pct"] = pct
    return env


ENV = _env()


class Section:
    """One part of the report. Subclasses set ``title``, ``anchor`` and ``template`` (jinja2 source, rendered
    with ``title``, ``anchor`` and the dict returned by :meth:`context`) and implement :meth:`context`."""

    title: str = ""
    anchor: str = ""
    template: str = ""

    def context(self, data: ReportData) -> dict:
        raise NotImplementedError

    def render(self, data: ReportData) -> str:
        body = ENV.from_string(self.template).render(title=self.title, anchor=self.anchor, **self.context(data))
        return f'<section id="{self.anchor}">\n<h2>{html.escape(self.title)}</h2>\n{body}\n</section>\n'


CSS = """
:root { --fg: #1d232b; --muted: #5b6570; --line: #d8dde3; --zebra: #f5f7f9; --accent: #1f5fa8;
        --good: #1a7f37; --good-bg: #e4f4e8; --warn: #8a5a00; --warn-bg: #fff3d6;
        --bad: #b42318; --bad-bg: #fde8e6; --info: #35536f; --info-bg: #e8eef5; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
       margin: 0; background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 1.2rem 1.5rem 4rem; }
header.page { border-bottom: 3px solid var(--accent); margin-bottom: 1rem; }
header.page h1 { font-size: 1.7rem; margin: 0.4rem 0 0.2rem; }
header.page p { color: var(--muted); margin: 0.2rem 0 0.8rem; }
nav.toc { background: var(--zebra); border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 1rem;
          margin-bottom: 1.5rem; }
nav.toc ol { margin: 0.2rem 0; padding-left: 1.4rem; columns: 2; }
nav.toc a { color: var(--accent); text-decoration: none; }
section { margin: 2.2rem 0; }
h2 { font-size: 1.35rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin: 1.4rem 0 0.5rem; }
p.note, p.caption, .muted { color: var(--muted); }
p.caption { font-size: 0.9rem; margin-top: 0.2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #eef1f4; text-align: left; font-weight: 600; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.cls { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.expr { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.76rem; min-width: 16rem;
          max-width: 30rem; overflow-wrap: anywhere; color: var(--muted); }
td.expr code.name { font-size: 0.88rem; color: var(--fg); font-weight: 600; }
td.small { font-size: 0.8rem; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.82rem; }
pre { background: var(--zebra); border: 1px solid var(--line); padding: 0.5rem 0.7rem; white-space: pre-wrap;
      overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; max-width: 100%; }
figure { margin: 0.8rem 0 1.4rem; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 0.3rem; }
.verdicts { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: 0.8rem; }
.verdict { border: 1px solid var(--line); border-left-width: 6px; border-radius: 6px; padding: 0.6rem 0.9rem; }
.verdict h3 { margin: 0 0 0.3rem; font-size: 1.02rem; }
.verdict ul { margin: 0.3rem 0 0; padding-left: 1.1rem; }
.badge { display: inline-block; border-radius: 4px; padding: 0 0.45rem; font-size: 0.78rem; font-weight: 700;
         letter-spacing: 0.03em; vertical-align: 0.1em; }
.good { border-left-color: var(--good); } .badge.good, td.good { background: var(--good-bg); color: var(--good); }
.warn { border-left-color: #d89a00; } .badge.warn, td.warn { background: var(--warn-bg); color: var(--warn); }
.bad { border-left-color: var(--bad); } .badge.bad, td.bad { background: var(--bad-bg); color: var(--bad); }
.info { border-left-color: var(--info); } .badge.info, td.info { background: var(--info-bg); color: var(--info); }
tr.flag td { background: var(--bad-bg); }
details summary { cursor: pointer; color: var(--accent); }
@media print { nav.toc { display: none; } section { break-inside: avoid-page; } }
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="robid {{ version }}">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<main>
<header class="page">
<h1>{{ title }}</h1>
<p>{{ subtitle }}</p>
</header>
<nav class="toc"><strong>Contents</strong>
<ol>
{% for s in sections %}
<li><a href="#{{ s.anchor }}">{{ s.title }}</a></li>
{% endfor %}
</ol>
</nav>
{% for body in bodies %}
{{ body }}
{% endfor %}
<footer class="muted"><p>Generated by robid {{ version }}. Self-contained file: figures are inline PNG images,
no scripts and no external resources.</p></footer>
</main>
</body>
</html>
"""


class Report:
    """Assembles :class:`Section` objects into one HTML page (the default sections when none are given)."""

    def __init__(self, sections: Sequence[Section] | None = None):
        if sections is None:
            from robid.report.sections import default_sections

            sections = default_sections()
        self.sections = list(sections)

    def render(self, data: ReportData) -> str:
        from robid import __version__, progress

        bodies = []
        for s in self.sections:
            progress.report(f"report: {s.title.lower()}")
            bodies.append(Markup(s.render(data)))
        return ENV.from_string(PAGE).render(
            title=data.title,
            subtitle=data.subtitle,
            css=Markup(CSS),
            sections=self.sections,
            bodies=bodies,
            version=__version__,
        )
