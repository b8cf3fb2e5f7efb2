"""The base of every report section (its own module, so that sections and the page that assembles them do not
import each other): a section renders a jinja2 template with the context it computes from the report data; the
number filters ``num`` and ``pct`` format values for tables."""

from __future__ import annotations

import html
import math
from collections import Counter
from typing import TYPE_CHECKING

import jinja2

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


class Section:
    """One part of the report. Subclasses set ``title``, ``anchor`` and ``template`` (jinja2 source, rendered
    with ``title``, ``anchor`` and the dict returned by :meth:`context`) and implement :meth:`context`."""

    title: str = ""
    anchor: str = ""
    template: str = ""

    def context(self, data: ReportData) -> dict:
        raise NotImplementedError

    def applies(self, data: ReportData) -> bool:
        """Whether the section has something to show for this record (all do, unless they say otherwise)."""
        return True

    def render(self, data: ReportData) -> str:
        body = ENV.from_string(self.template).render(title=self.title, anchor=self.anchor, **self.context(data))
        return f'<section id="{self.anchor}">\n<h2>{html.escape(self.title)}</h2>\n{body}\n</section>\n'
