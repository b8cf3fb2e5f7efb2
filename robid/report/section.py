"""The base of every report section (its own module, so that sections and the page that assembles them do not
import each other): a section renders a jinja2 template with the context it computes from the report data; the
number filters ``num`` and ``pct`` format values for tables."""

from __future__ import annotations

import copy
import html
import re
from collections import Counter
from typing import TYPE_CHECKING

import jinja2

from robid.record._html import format_number as num  # the number format of every table (sections import it here)
from robid.report._css import CSS

if TYPE_CHECKING:  # pragma: no cover
    from robid.report._data import ReportData


def count_by(values) -> Counter:
    """How many times each value occurs (e.g. parameters per class); 0 for a value that does not."""
    return Counter(values)


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


#: the class of the element that holds a report (or a part of it) shown inside another page, e.g. Jupyter
SCOPE = "robid-report"


def scoped_css(css: str, scope: str = SCOPE) -> str:
    """The report's CSS restricted to the elements inside ``.scope``: every selector prefixed, ``:root``, ``body``
    and ``main`` taken as the scope element itself, so that it styles nothing else of a notebook page. Rules
    inside ``@media`` are scoped the same way."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, pos = [], 0
    while True:
        start = css.find("{", pos)
        if start < 0:
            break
        head = css[pos:start].strip()
        depth, end = 1, start + 1
        while depth:  # the matching brace (a rule body holds none; an @media block holds rules)
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            end += 1
        body = css[start + 1 : end - 1]
        if head.startswith("@"):
            out.append(f"{head} {{ {scoped_css(body, scope)} }}")
        else:
            out.append(f"{_scoped_selectors(head, scope)} {{{body}}}")
        pos = end
    return "\n".join(out)


def _scoped_selectors(selectors: str, scope: str) -> str:
    parts = []
    for sel in (s.strip() for s in selectors.split(",")):
        if sel in (":root", "body", "main"):
            parts.append(f".{scope}")
        elif sel == "*":
            parts += [f".{scope}", f".{scope} *"]
        else:
            parts.append(f".{scope} {sel}")
    return ", ".join(dict.fromkeys(parts))


def notebook_html(body: str) -> str:
    """``body`` (report HTML) with the report's CSS, scoped (:func:`scoped_css`), in one element: what Jupyter
    shows for a section or a whole report. No script, no external resource, like the report file."""
    return f'<div class="{SCOPE}">\n<style>{scoped_css(CSS)}</style>\n{body}\n</div>'


class Section:
    """One part of the report. Subclasses set ``title``, ``anchor`` and ``template`` (jinja2 source, rendered
    with ``title``, ``anchor`` and the dict returned by :meth:`context`) and implement :meth:`context`.

    In a notebook, ``ReportData.sections()`` gives the sections bound to the report data (:meth:`bind`); Jupyter
    shows a bound section as its HTML with the report's CSS (:meth:`_repr_html_`)."""

    title: str = ""
    anchor: str = ""
    template: str = ""
    #: whether the page shows the section collapsed (its title a summary that opens it): every section but the
    #: first screen's
    collapsed: bool = True
    #: the report data of a bound section (:meth:`bind`), else None
    data: ReportData | None = None

    def bind(self, data: ReportData) -> Section:
        """A copy of this section that knows its report data: what Jupyter shows, ``html()``."""
        bound = copy.copy(self)
        bound.data = data
        return bound

    def html(self, data: ReportData | None = None) -> str:
        """The section's HTML fragment (:meth:`render`) for ``data``, or the bound data."""
        data = data if data is not None else self.data
        if data is None:
            raise ValueError(f"section {self.title!r} is not bound to report data: use ReportData.sections()")
        return self.render(data)

    def _repr_html_(self) -> str:
        if self.data is None:
            return (f"<p>robid report section <strong>{html.escape(self.title)}</strong>, not bound to report "
                    "data: <code>robid.report.report_data(record).sections()</code> gives the bound ones.</p>")
        return notebook_html(self.render(self.data))

    def __repr__(self) -> str:
        state = "bound" if self.data is not None else "unbound"
        return f"<{type(self).__name__} {self.title!r} ({state})>"

    def context(self, data: ReportData) -> dict:
        raise NotImplementedError

    def applies(self, data: ReportData) -> bool:
        """Whether the section has something to show for this record (all do, unless they say otherwise)."""
        return True

    def render(self, data: ReportData, collapsed: bool = False) -> str:
        """The section's HTML; ``collapsed``: inside a closed ``details`` element whose summary is the title (the
        page's details after its first screen)."""
        body = ENV.from_string(self.template).render(title=self.title, anchor=self.anchor, **self.context(data))
        title = f"<h2>{html.escape(self.title)}</h2>"
        if collapsed:
            return (f'<section id="{self.anchor}">\n<details class="section"><summary>{title}</summary>\n{body}\n'
                    "</details>\n</section>\n")
        return f'<section id="{self.anchor}">\n{title}\n{body}\n</section>\n'
