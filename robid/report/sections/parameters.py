"""Parameter table: every base parameter with its expression, value, uncertainty, class, nominal value and any
reference (e.g. the virtual robot's truth), flagging values further than k std from a reference."""

from __future__ import annotations

import math

import numpy as np

from robid.report._html import Section, num

CLASS_LEVEL = {"well-identified": "good", "poorly-identified": "warn", "barely-excited": "bad"}


class ParametersSection(Section):
    title = "Parameter table"
    anchor = "parameters"
    template = """
<p>{{ intro }}</p>
{% if flagged_total %}<p><strong>{{ flagged_total }} parameter(s) further than {{ k }} std from
{{ ref_labels }}</strong> (rows shaded red).</p>{% elif ref_labels %}<p>Every parameter lies within {{ k }} std
of {{ ref_labels }}.</p>{% endif %}
<div class="table-wrap"><table class="params">
<thead><tr><th>#</th><th>name = expression in standard parameters</th><th>value</th><th>std</th>
<th>rel. std</th><th>class</th><th>nominal</th>
{% if unconstrained %}<th>unconstrained</th>{% endif %}
{% for label in refs %}<th>{{ label }}</th><th title="|value \u2212 {{ label }}| / std">deviation / std</th>{% endfor %}
{% if correlated %}<th>correlated with</th>{% endif %}</tr></thead>
<tbody>
{% for p in rows %}
<tr{% if p.flag %} class="flag"{% endif %}><td class="n">{{ loop.index }}</td>
<td class="expr"><code class="name">{{ p.name }}</code>{% if p.grouped %}<br>= {{ p.expression }}{% endif %}</td>
<td class="n">{{ p.value | num }}</td><td class="n">{{ p.std | num(3) }}</td>
<td class="n">{{ p.rel | pct }}</td><td class="cls {{ p.level }}">{{ p.cls }}</td>
<td class="n">{{ p.nominal | num }}</td>
{% if unconstrained %}<td class="n">{{ p.unconstrained | num }}</td>{% endif %}
{% for r in p.refs %}
<td class="n">{{ r.value | num }}</td><td class="n{% if r.flag %} bad{% endif %}">{{ r.z | num(3) }}</td>
{% endfor %}
{% if correlated %}<td class="small">{{ p.correlated }}</td>{% endif %}</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Units SI (kg, kg m, kg m\u00b2, N m s/rad, N m, \u2026). Relative std = std / |value|. The
std is that of the {{ std_of }} estimate.</p>
"""

    def context(self, data) -> dict:
        params = data.result["base_parameters"]
        k = data.thresholds.reference_sigma
        refs = data.references
        std = np.sqrt(np.clip(np.diag(data.covariance), 0.0, None))
        nominal = data.nominal
        rows = []
        flagged = 0
        unconstrained = any("unconstrained_value" in p for p in params)
        for i, p in enumerate(params):
            value = data.values[i]
            s = p.get("std", std[i])
            s = std[i] if s is None else s
            ref_cells = []
            row_flag = False
            for ref in refs.values():
                rv = float(ref[i])
                z = abs(value - rv) / s if math.isfinite(rv) and s and s > 0 else None
                if math.isfinite(rv) and s == 0:
                    z = math.inf if value != rv else 0.0
                flag = z is not None and z > k
                row_flag = row_flag or flag
                ref_cells.append({"value": rv, "z": z, "flag": flag})
            flagged += row_flag
            cls = p.get("class", "")
            rows.append(
                {
                    "name": p["name"],
                    "expression": p.get("expression", p["name"]),
                    "grouped": "".join(p.get("expression", p["name"]).split()) != p["name"],
                    "value": value,
                    "std": s,
                    "rel": p.get("relative_std_percent"),
                    "cls": cls,
                    "level": CLASS_LEVEL.get(cls, ""),
                    "nominal": nominal[i],
                    "unconstrained": p.get("unconstrained_value"),
                    "refs": ref_cells,
                    "flag": row_flag,
                    "correlated": ", ".join(p.get("correlated_with") or []),
                }
            )
        method = data.result.get("method", "?")
        est = (data.result.get("estimation") or {}).get("method", method)
        return {
            "intro": (
                f"{len(params)} base parameters, values by {method}. Each base parameter is named after the "
                "standard parameter it is grouped on; the expression lists what it stands for."
            ),
            "rows": rows,
            "refs": list(refs),
            "ref_labels": " / ".join(refs),
            "flagged_total": flagged,
            "k": num(k),
            "unconstrained": unconstrained,
            "correlated": any(r["correlated"] for r in rows),
            "std_of": est,
        }
