"""Data quality: per measurement, how the signal stage processed it, the noise it estimated, and every row
it dropped or did not use, with the reason."""

from __future__ import annotations

from pathlib import Path

from robid.report._compute import joint_units
from robid.report._html import Section, num

MAX_ROWS_LISTED = 200


def _band(s: dict) -> str:
    h = s.get("harmonics")
    if h:
        top = max(h)
        period = s.get("period_s")
        hz = f", highest {num(top / period, 3)} Hz" if period else ""
        return f"DC + {len(h)} harmonics{hz}"
    if s.get("cutoff_hz"):
        return f"low-pass {num(s['cutoff_hz'], 3)} Hz"
    return "\u2013"


def _run_context(run, units, joint_names) -> dict:
    s = run.summary or {}
    period = s.get("period_s")
    rejected = s.get("rejected_periods") or []
    overview = [
        ("mode", s.get("mode", "\u2013")),
        ("samples read", s.get("samples_read", "\u2013")),
        ("samples used (processed grid)", s.get("samples", "\u2013")),
        ("sample rate", f"{num(s.get('sample_rate_hz'))} Hz" if s.get("sample_rate_hz") else "\u2013"),
    ]
    if period:
        overview.append(("period", f"{num(period, 6)} s ({s.get('period_source') or '?'})"))
        overview.append(
            (
                "periods averaged",
                f"{s.get('n_periods', 0)}"
                + (f"; left out: {', '.join(map(str, rejected))}" if rejected else "; none left out"),
            )
        )
    overview.append(("band kept", _band(s)))
    trimmed = s.get("trimmed_samples") or [0, 0]
    if any(trimmed):
        overview.append(("trimmed (filter edges)", f"{trimmed[0]} at the start, {trimmed[1]} at the end"))
    if s.get("segment_s"):
        a, b = s["segment_s"]
        overview.append(("time span used", f"{num(a)} \u2026 {num(b)} s"))
    if s.get("rows_used") is not None:
        overview.append(("(sample, joint) rows in the fit", s["rows_used"]))
    noise = s.get("noise") or {}
    noise_rows = []
    for j, name in enumerate(joint_names):
        u = units[j]

        def pick(key, scale=1.0, j=j):
            values = noise.get(key) or []
            return num(values[j] * scale, 3) if j < len(values) and values[j] is not None else "\u2013"

        noise_rows.append(
            {
                "joint": name,
                "cells": [
                    pick("q_std", u.scale),
                    pick("tau_std"),
                    pick("q_std_processed", u.scale),
                    pick("qd_std_processed", u.scale),
                    pick("qdd_std_processed", u.scale),
                    pick("tau_std_processed"),
                ],
                "unused": (s.get("unused_rows_per_joint") or [None] * len(joint_names))[j],
            }
        )
    dropped = s.get("dropped_rows") or []
    reasons: dict[str, list[int]] = {}
    for r in dropped:
        reasons.setdefault(str(r.get("reason")), []).append(r.get("row"))
    by_reason = [
        {"reason": k, "count": len(v), "rows": ", ".join(map(str, v[:15])) + (" \u2026" if len(v) > 15 else "")}
        for k, v in sorted(reasons.items(), key=lambda kv: -len(kv[1]))
    ]
    return {
        "role": run.role,
        "name": Path(run.source).name,
        "source": run.source,
        "missing": run.missing,
        "available": bool(s),
        "overview": overview,
        "noise_method": noise.get("method", ""),
        "noise_rows": noise_rows,
        "method": s.get("method") or [],
        "notes": s.get("notes") or [],
        "dropped": dropped[:MAX_ROWS_LISTED],
        "dropped_total": len(dropped),
        "by_reason": by_reason,
        "standstill": s.get("standstill_s") or [],
    }


class DataQualitySection(Section):
    title = "Data quality"
    anchor = "data-quality"
    template = """
<p class="note">Every measurement goes through the signal stage: validation (bad rows refused or dropped and
recorded), resampling, period detection and averaging (periodic data) or zero-phase filtering, spectral
differentiation. Noise is estimated from the scatter between periods (periodic) or from the out-of-band
residual; the processed noise is what the weighted estimator uses.</p>
{% for r in runs %}
<h3>{{ r.role }}: {{ r.name }}</h3>
{% if r.missing %}<p class="note">Not processed again: {{ r.missing }}.{% if r.available %} The figures below are
those stored in the result.{% endif %}</p>{% endif %}
{% if r.available %}
<div class="table-wrap"><table><tbody>
<tr><th>file</th><td><code>{{ r.source }}</code></td></tr>
{% for k, v in r.overview %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}
</tbody></table></div>
<div class="table-wrap"><table>
<thead><tr><th rowspan="2">joint</th><th colspan="2">raw sample noise (std)</th>
<th colspan="4">noise left after processing (std)</th><th rowspan="2">unused rows</th></tr>
<tr><th>position [{{ pu }}]</th><th>torque [{{ tu }}]</th><th>position [{{ pu }}]</th><th>velocity [{{ vu }}]</th>
<th>acceleration [{{ au }}]</th><th>torque [{{ tu }}]</th></tr></thead>
<tbody>
{% for n in r.noise_rows %}
<tr><td>{{ n.joint }}</td>{% for c in n.cells %}<td class="n">{{ c }}</td>{% endfor %}
<td class="n">{{ n.unused }}</td></tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Noise estimate: {{ r.noise_method }}.</p>
{% if r.dropped_total %}
<p><strong>{{ r.dropped_total }} row(s) dropped while reading</strong>, by reason:</p>
<table><thead><tr><th>reason</th><th>rows</th><th>file rows (1-based, header counted)</th></tr></thead><tbody>
{% for b in r.by_reason %}
<tr><td>{{ b.reason }}</td><td class="n">{{ b.count }}</td><td>{{ b.rows }}</td></tr>
{% endfor %}
</tbody></table>
<details><summary>every dropped row
{%- if r.dropped_total > r.dropped|length %} (first {{ r.dropped|length }}){% endif %}</summary>
<table><thead><tr><th>row</th><th>sample</th><th>reason</th></tr></thead><tbody>
{% for d in r.dropped %}
<tr><td class="n">{{ d.row }}</td><td class="n">{{ d.sample }}</td><td>{{ d.reason }}</td></tr>
{% endfor %}
</tbody></table></details>
{% else %}
<p>No row dropped while reading.</p>
{% endif %}
{% if r.standstill %}<p>Standstill segments not used:
{% for a, b in r.standstill %}{{ a | num }}–{{ b | num }} s{% if not loop.last %}, {% endif %}{% endfor %}.</p>
{% endif %}
<details{% if loop.first %} open{% endif %}><summary>processing account</summary>
<pre>{% for line in r.method %}{{ line }}
{% endfor %}{% for line in r.notes %}note: {{ line }}
{% endfor %}</pre>
</details>
{% endif %}
{% endfor %}
{% if not runs %}<p class="note">No measurement summary is available.</p>{% endif %}
"""

    def context(self, data) -> dict:
        units = joint_units(data.robot)
        u = units[0]
        return {
            "runs": [_run_context(r, units, data.robot.joint_names) for r in data.runs],
            "pu": u.position,
            "vu": u.velocity,
            "au": u.acceleration,
            "tu": u.torque,
        }
