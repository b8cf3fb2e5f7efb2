"""Data quality: per measurement, how the signal stage processed it, the noise it estimated, and every row
it dropped or did not use, with the reason."""

from __future__ import annotations

import re
from pathlib import Path

from robid.defaults import PERIODIC
from robid.report._compute import joint_units
from robid.report.section import Section, num

MAX_ROWS_LISTED = 200

#: a speed threshold in the signal stage's account, e.g. "(|qd| < 0.2)" or "|qd| >= 0.05 by ...", without a unit
_SPEED = re.compile(
    r"(\|qd\|\s*(?:<|<=|>=|>)\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\d.eE+-]|\s*(?:rad/s|m/s))"
)


def speed_unit(robot) -> str:
    """Unit of a joint-speed threshold that applies to every joint: rad/s, m/s, or both for a mixed robot."""
    kinds = {j.revolute for j in robot.model.joints}
    if kinds == {True}:
        return "rad/s"
    return "m/s" if kinds == {False} else "rad/s (m/s for prismatic joints)"


def with_speed_units(lines, robot) -> list[str]:
    """The processing account with the unit after every |qd| threshold (the record stores it in SI, unitless)."""
    unit = speed_unit(robot)
    return [_SPEED.sub(lambda m: f"{m.group(1)} {unit}", line) for line in lines]


def _band(run) -> str:
    if run.harmonics:
        hz = f", highest {num(max(run.harmonics) / run.period_s, 3)} Hz" if run.period_s else ""
        return f"DC + {len(run.harmonics)} harmonics{hz}"
    if run.cutoff_hz:
        return f"low-pass {num(run.cutoff_hz, 3)} Hz"
    return "\u2013"


def _overview(run) -> list[tuple[str, object]]:
    overview = [
        ("mode", run.mode),
        ("samples read", run.samples_read),
        ("samples used (processed grid)", run.samples),
        ("sample rate", f"{num(run.sample_rate_hz)} Hz"),
    ]
    if run.period_s:
        rejected = run.rejected_periods
        overview.append(("period", f"{num(run.period_s, 6)} s ({run.period_source or '?'})"))
        left_out = f"; left out: {', '.join(map(str, rejected))}" if rejected else "; none left out"
        if run.mode == PERIODIC and run.n_periods > 1:
            overview.append(("periods averaged", f"{run.n_periods}{left_out}"))
        elif run.mode == "periodic-samples":
            overview.append(("periods used", f"{run.n_periods}, every sample (not averaged){left_out}"))
        else:
            overview.append(("periods used", f"{run.n_periods} (not averaged){left_out}"))
    overview.append(("band kept", _band(run)))
    if any(run.trimmed_samples):
        overview.append(
            ("trimmed (filter edges)", f"{run.trimmed_samples[0]} at the start, {run.trimmed_samples[1]} at the end")
        )
    if run.segment_s:
        a, b = run.segment_s
        overview.append(("time span used", f"{num(a)} \u2026 {num(b)} s"))
    overview.append(("(sample, joint) rows in the fit", run.rows_used))
    return overview


def _noise_rows(run, units, joint_names) -> list[dict]:
    noise = run.noise
    rows = []
    for j, name in enumerate(joint_names):
        scale = units[j].scale

        def pick(values, scale=1.0, j=j):
            return num(values[j] * scale, 3) if j < len(values) and values[j] is not None else "\u2013"

        rows.append(
            {
                "joint": name,
                "cells": [
                    pick(noise.q_std, scale),
                    pick(noise.tau_std),
                    pick(noise.q_std_processed, scale),
                    pick(noise.qd_std_processed, scale),
                    pick(noise.qdd_std_processed, scale),
                    pick(noise.tau_std_processed),
                ],
                "unused": run.unused_rows_per_joint[j],
            }
        )
    return rows


def _run_context(run, units, joint_names, robot) -> dict:
    reasons: dict[str, list[int]] = {}
    for r in run.dropped_rows:
        reasons.setdefault(r.reason, []).append(r.row)
    by_reason = [
        {"reason": k, "count": len(v), "rows": ", ".join(map(str, v[:15])) + (" \u2026" if len(v) > 15 else "")}
        for k, v in sorted(reasons.items(), key=lambda kv: -len(kv[1]))
    ]
    return {
        "role": run.role,
        "name": Path(run.file).name,
        "source": run.file,
        "overview": _overview(run),
        "noise_method": run.noise.method,
        "noise_rows": _noise_rows(run, units, joint_names),
        "method": with_speed_units(run.method, robot),
        "notes": with_speed_units(run.notes, robot),
        "dropped": run.dropped_rows[:MAX_ROWS_LISTED],
        "dropped_total": len(run.dropped_rows),
        "by_reason": by_reason,
        "standstill": run.standstill_s,
    }


class DataQualitySection(Section):
    title = "Data quality"
    anchor = "data-quality"
    template = """
<p class="note">Every measurement goes through the signal stage: screening (bad rows refused or dropped and
recorded), resampling, period detection and averaging (periodic data) or zero-phase filtering, spectral
differentiation. Noise is estimated from the scatter between periods (periodic) or from the out-of-band
residual; the processed noise is what the weighted estimator uses.</p>
{% for r in runs %}
<h3>{{ r.role }}: {{ r.name }}</h3>
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
<div class="table-wrap"><table>
<thead><tr><th>reason</th><th>rows</th><th>file rows (1-based, header counted)</th></tr></thead><tbody>
{% for b in r.by_reason %}
<tr><td>{{ b.reason }}</td><td class="n">{{ b.count }}</td><td>{{ b.rows }}</td></tr>
{% endfor %}
</tbody></table></div>
<details><summary>every dropped row
{%- if r.dropped_total > r.dropped|length %} (first {{ r.dropped|length }}){% endif %}</summary>
<div class="table-wrap"><table><thead><tr><th>row</th><th>sample</th><th>reason</th></tr></thead><tbody>
{% for d in r.dropped %}
<tr><td class="n">{{ d.row }}</td><td class="n">{{ d.sample }}</td><td>{{ d.reason }}</td></tr>
{% endfor %}
</tbody></table></div></details>
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
{% endfor %}
{% if not runs %}<p class="note">No measurement summary is available.</p>{% endif %}
"""

    def context(self, data) -> dict:
        units = joint_units(data.robot)
        u = units[0]
        return {
            "runs": [_run_context(r, units, data.robot.joint_names, data.robot) for r in data.runs],
            "pu": u.position,
            "vu": u.velocity,
            "au": u.acceleration,
            "tu": u.torque,
        }
