"""Estimators compared: the same identification runs estimated by several methods, each scored per joint on the
validation runs (record section ``estimator_comparison``, robid.identification.estimator_comparison). Shown only
when the identification compared methods."""

from __future__ import annotations

from robid.report.section import Section, num


class EstimatorsSection(Section):
    title = "Estimators compared"
    anchor = "estimators"
    template = """
<p class="note">The same identification runs estimated by each method; NRMSE = 100 RMS(measured - predicted) /
RMS(measured) of the drive torque per joint over the used rows of
{% if criterion == "validation" %}the validation runs. The lowest mean is marked; the rest of this report shows
the values of {{ method }}.{% else %}the identification runs (no validation run: nothing is chosen, as least
squares minimises this error by construction).{% endif %}</p>
<div class="table-wrap"><table>
<thead><tr><th>method</th>{% for j in joints %}<th>{{ j }} NRMSE</th>{% endfor %}<th>mean</th><th>chosen</th></tr>
</thead>
<tbody>
{% for r in rows %}
<tr><td>{{ r.method }}</td>{% for c in r.cells %}<td class="n">{{ c }}</td>{% endfor %}
<td class="n">{{ r.mean }}</td><td>{{ "\\u2713" if r.chosen else "" }}{{ r.error }}</td></tr>
{% endfor %}
</tbody></table></div>
"""

    def applies(self, data) -> bool:
        return data.record.estimator_comparison is not None

    def context(self, data) -> dict:
        comparison = data.record.estimator_comparison
        rows = [{"method": s.method, "cells": [f"{num(x, 3)} %" if x is not None else num(None) for x in
                                                s.nrmse_percent],
                 "mean": f"{num(s.mean_nrmse_percent, 3)} %" if s.mean_nrmse_percent is not None else num(None),
                 "chosen": s.chosen, "error": f"not computed: {s.error}" if s.error else ""}
                for s in comparison.scores]
        return {"criterion": comparison.criterion, "joints": list(comparison.joints), "rows": rows,
                "method": data.record.method}
