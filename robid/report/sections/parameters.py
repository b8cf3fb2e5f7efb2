"""Parameter table: every base parameter with its expression, value, uncertainty, class, nominal value and any
reference (e.g. the virtual robot's truth), flagging values further than k std from a reference."""

from __future__ import annotations

import math

from robid.report._compute import parameter_unit
from robid.report.section import Section, num

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
<th>unit</th><th>rel. std</th><th>class</th><th>nominal</th>
{% if unconstrained %}<th>unconstrained</th>{% endif %}
{% for label in refs %}<th>{{ label }}</th><th title="|value \u2212 {{ label }}| / std">deviation / std</th>{% endfor %}
{% if correlated %}<th>correlated with</th>{% endif %}</tr></thead>
<tbody>
{% for p in rows %}
<tr{% if p.flag %} class="flag"{% endif %}><td class="n">{{ loop.index }}</td>
<td class="expr"><code class="name">{{ p.name }}</code>{% if p.grouped %}<br>= {{ p.expression }}{% endif %}</td>
<td class="n">{{ p.value | num }}</td><td class="n">{{ p.std | num(3) }}</td>
<td class="unit">{{ p.unit or "\u2013" }}</td><td class="n">{{ p.rel | pct }}</td>
<td class="cls {{ p.level }}">{{ p.cls }}</td>
<td class="n">{{ p.nominal | num }}</td>
{% if unconstrained %}<td class="n">{{ p.unconstrained | num }}</td>{% endif %}
{% for r in p.refs %}
<td class="n">{{ r.value | num }}</td><td class="n{% if r.flag %} bad{% endif %}">{{ r.z | num(3) }}</td>
{% endfor %}
{% if correlated %}<td class="small">{{ p.correlated }}</td>{% endif %}</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">The unit column holds the SI unit of the value, the std, the nominal value and the references
of its row. It is derived from the parameter's kind: mass kg, first moment kg m, inertia and rotor inertia
kg m\u00b2, viscous friction N m s/rad, Coulomb friction and offset N m, stiffness N m/rad, damping N m s/rad (for
a prismatic joint kg, N s/m, N, N/m), compensators as in docs/compensator.md (spring k N/m, k\u00b7l0 N, gas p0 Pa,
Fourier coefficients N m). A grouped base parameter has the unit of the standard parameter it is named after.
Relative std = std / |value|. The std is that of the {{ std_of }} estimate.</p>
"""

    def context(self, data) -> dict:
        record = data.record
        params = record.base_parameters
        k = data.thresholds.reference_sigma
        refs = data.references
        nominal = data.nominal
        rows = [
            _row(i, p, nominal[i], refs, k) | {"unit": parameter_unit(p.name, data.robot)} for i, p in enumerate(params)
        ]
        return {
            "intro": (
                f"{len(params)} base parameters, values by {record.method}. Each base parameter is named after the "
                "standard parameter it is grouped on; the expression lists what it stands for."
            ),
            "rows": rows,
            "refs": list(refs),
            "ref_labels": " / ".join(refs),
            "flagged_total": sum(r["flag"] for r in rows),
            "k": num(k),
            "unconstrained": any(p.unconstrained_value is not None for p in params),
            "correlated": any(r["correlated"] for r in rows),
            "std_of": record.estimation.method,
        }


def _row(i: int, p, nominal: float, refs: dict, k: float) -> dict:
    """One table row; a reference further than k std from the value is flagged (an exactly known value, std 0,
    is flagged when it differs at all)."""
    s = p.std
    ref_cells = []
    for ref in refs.values():
        rv = float(ref[i])
        z = abs(p.value - rv) / s if math.isfinite(rv) and s else None
        if math.isfinite(rv) and s == 0:
            z = math.inf if p.value != rv else 0.0
        ref_cells.append({"value": rv, "z": z, "flag": z is not None and z > k})
    return {
        "name": p.name,
        "expression": p.expression,
        "grouped": p.grouped,
        "value": p.value,
        "std": s,
        "rel": p.relative_std_percent,
        "cls": p.identifiability,
        "level": CLASS_LEVEL.get(p.identifiability, ""),
        "nominal": nominal,
        "unconstrained": p.unconstrained_value,
        "refs": ref_cells,
        "flag": any(c["flag"] for c in ref_cells),
        "correlated": ", ".join(p.correlated_with),
    }
