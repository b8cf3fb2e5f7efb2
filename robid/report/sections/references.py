"""Comparison with reference models: on every run, the torque error of the identified model next to that of
each reference model (a published or nominal parameter set) scored on the same processed samples and used rows
(robid.identification.references). Shown only when the record names references."""

from __future__ import annotations

from pathlib import Path

from robid.report._compute import joint_units
from robid.report.section import Section, num


def _cells(fit) -> list[str]:
    return [num(j.nrmse_percent, 3) for j in fit.per_joint]


def _rms(fit) -> list[str]:
    return [num(j.rms, 3) for j in fit.per_joint]


class ReferencesSection(Section):
    title = "Comparison with reference models"
    anchor = "references"
    template = """
<p class="note">Each reference model is a published or nominal parameter set, predicted on the very samples of
each run that the identified model is scored on: the same processed positions, velocities and accelerations,
the same filter, the same used rows. The errors therefore differ only by the parameters. NRMSE = 100
RMS(error) / RMS(measured) per joint; the RMS errors are in the second table.</p>
{% for ref in references %}
<p><strong>{{ ref.label }}</strong>: robot <code>{{ ref.robot }}</code>, terms {{ ref.terms }}
{%- if ref.changed %}; {{ ref.changed }} value(s) replacing the file's nominal ones{% endif %}
{%- if ref.armature %}; armature {{ ref.armature }}{% endif %}.</p>
{% endfor %}
<div class="table-wrap"><table>
<thead><tr><th>run</th><th>model</th>{% for j in joints %}<th>{{ j }} NRMSE</th>{% endfor %}</tr></thead>
<tbody>
{% for r in rows %}
<tr{% if r.first %} class="group"{% endif %}><td>{% if r.first %}{{ r.run }}{% endif %}</td><td>{{ r.model }}</td>
{% for c in r.nrmse %}<td class="n">{{ c }} %</td>{% endfor %}</tr>
{% endfor %}
</tbody></table></div>
<div class="table-wrap"><table>
<thead><tr><th>run</th><th>model</th>
{% for j, u in joints_units %}<th>{{ j }} RMS [{{ u }}]</th>{% endfor %}</tr></thead>
<tbody>
{% for r in rows %}
<tr><td>{% if r.first %}{{ r.run }}{% endif %}</td><td>{{ r.model }}</td>
{% for c in r.rms %}<td class="n">{{ c }}</td>{% endfor %}</tr>
{% endfor %}
</tbody></table></div>
"""

    def applies(self, data) -> bool:
        return any(run.references for run in data.runs)

    def context(self, data) -> dict:
        units = joint_units(data.robot)
        rows = []
        for run in data.runs:
            name = f"{run.role}: {Path(run.file).name}"
            rows.append({"run": name, "first": True, "model": "identified (robid)", "nrmse": _cells(run.fit),
                         "rms": _rms(run.fit)})
            for ref in run.references:
                rows.append({"run": name, "first": False, "model": ref.label, "nrmse": _cells(ref.fit),
                             "rms": _rms(ref.fit)})
        refs = [
            {"label": r.label, "robot": r.robot, "terms": ", ".join(r.terms), "changed": len(r.parameters),
             "armature": ", ".join(num(a, 3) for a in r.armature) if any(r.armature) else ""}
            for r in data.record.processing.references
        ]
        return {"rows": rows, "references": refs, "joints": data.robot.joint_names,
                "joints_units": list(zip(data.robot.joint_names, (u.torque for u in units), strict=True))}
