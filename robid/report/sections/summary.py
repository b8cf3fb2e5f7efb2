"""Summary: one verdict per question an engineer asks first -- does the model fit new data, which parameters
can be trusted, is the estimate physically meaningful, and what data were left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from robid.report.section import Section, count_by, num

LEVEL_TEXT = {"good": "GOOD", "warn": "CHECK", "bad": "POOR", "info": "NOTE"}
_ORDER = {"info": 0, "good": 1, "warn": 2, "bad": 3}


@dataclass
class Verdict:
    topic: str
    level: str
    headline: str
    details: list[str] = field(default_factory=list)

    @property
    def badge(self) -> str:
        return LEVEL_TEXT[self.level]


def nrmse_level(value, thresholds) -> str:
    if value is None:
        return "info"
    if value < thresholds.nrmse_good_percent:
        return "good"
    return "warn" if value < thresholds.nrmse_acceptable_percent else "bad"


def fit_level(nrmse, coverage, thresholds) -> str:
    """A joint's fit: the NRMSE level, but GOOD only when at least ``band_coverage_good_percent`` of its samples
    lie inside the 95 % prediction band too (fewer: the band, i.e. the model or the noise estimate, is wrong for
    that joint, however small the error); a joint without a coverage is judged by its NRMSE alone."""
    level = nrmse_level(nrmse, thresholds)
    if level == "good" and coverage is not None and coverage < thresholds.band_coverage_good_percent:
        return "warn"
    return level


def fit_rule(th) -> str:
    return (
        f"NRMSE = RMS(measured \u2212 predicted) / RMS(measured) per joint. Good: NRMSE < "
        f"{num(th.nrmse_good_percent)} % and at least {num(th.band_coverage_good_percent)} % of the samples inside "
        f"the 95 % prediction band; acceptable (CHECK): NRMSE < {num(th.nrmse_acceptable_percent)} %, or a good "
        f"NRMSE with fewer samples inside the band; poor otherwise."
    )


def _worst(columns, index: int, joint: int, pick):
    values = [c[index][joint] for c in columns if c[index][joint] is not None]
    return pick(values) if values else None


def fit_quality(data) -> tuple[Verdict, dict]:
    th = data.thresholds
    joints = data.robot.joint_names
    record = data.record

    def coverage(fit) -> list:
        return [m.inside_band_percent for m in fit.per_joint]

    columns = [(run.role, Path(run.file).name, list(run.fit.nrmse_percent()), coverage(run.fit)) for run in data.runs]
    if not record.data:
        metrics = record.metrics
        columns.insert(0, ("identification", "all files", list(metrics.nrmse_percent()), coverage(metrics)))
    val = [c for c in columns if c[0] == "validation"]
    judged = val or [c for c in columns if c[0] == "identification"]
    worst = [_worst(judged, 2, j, max) for j in range(len(joints))]
    inside = [_worst(judged, 3, j, min) for j in range(len(joints))]
    rule = fit_rule(th)
    if not judged:
        return Verdict("Fit quality", "info", "no torque metrics available", [rule]), {"columns": [], "rows": []}
    levels = [fit_level(w, c, th) for w, c in zip(worst, inside, strict=True)]
    level = max(levels, key=_ORDER.get)
    on = "validation runs" if val else "the identification data only (no validation run: optimistic)"
    finite = [w for w in worst if w is not None]
    if level == "good":
        head = (
            f"every joint below {num(th.nrmse_good_percent)} % with at least "
            f"{num(th.band_coverage_good_percent)} % of its samples inside the 95 % band on {on}"
        )
    else:
        bad = []
        for j in range(len(joints)):
            if levels[j] == "good":
                continue
            why = f"{joints[j]} {num(worst[j], 3)} %"
            if inside[j] is not None and inside[j] < th.band_coverage_good_percent:
                why += f" (only {num(inside[j], 3)} % inside the band)"
            bad.append(why)
        head = f"{len(bad)} of {len(joints)} joints not good on {on}: " + ", ".join(bad)
    details = [rule]
    if finite:
        details.append(f"worst joint {num(max(finite), 3)} %, best {num(min(finite), 3)} %")
    shares = [c for c in inside if c is not None]
    if shares:
        details.append(f"samples inside the 95 % band: lowest {num(min(shares), 3)} %, highest {num(max(shares), 3)} %")
    rows = []
    for j, name in enumerate(joints):
        cells = [(c[2][j], c[3][j], fit_level(c[2][j], c[3][j], th)) for c in columns]
        rows.append({"joint": name, "cells": cells})
    table = {"columns": [f"{c[0]}: {c[1]}" for c in columns], "rows": rows}
    return Verdict("Fit quality", level, head, details), table


def identifiability(data) -> Verdict:
    record = data.record
    params = record.base_parameters
    counts = count_by(p.identifiability for p in params)
    th = record.thresholds
    pairs = record.correlated_pairs
    weak = len(params) - counts["well-identified"]
    level = "good" if weak == 0 and not pairs else ("bad" if weak > len(params) / 2 else "warn")
    head = ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    details = [
        f"well-identified: relative std < {num(th.poor_relative_std_percent)} %; barely-excited: "
        "the data hardly excite the parameter even alone; correlated: |corr| > "
        f"{num(th.correlation)}"
    ]
    structural = count_by(s.structural_class for s in record.standard_parameters)
    if structural:
        details.append("standard parameters: " + ", ".join(f"{n} {c}" for c, n in sorted(structural.items())))
    if pairs:
        shown = ", ".join(f"{p.first} ~ {p.second} ({num(p.correlation, 3)})" for p in pairs[:12])
        more = f" and {len(pairs) - 12} more" if len(pairs) > 12 else ""
        details.append(f"{len(pairs)} strongly correlated pair(s): {shown}{more}")
    else:
        details.append("no strongly correlated pair of base parameters")
    return Verdict("Identifiability", level, head, details)


def physical_consistency(data) -> Verdict:
    ph = data.record.physical_consistency
    ce = data.record.consistent_estimate
    solved = ce is not None and ce.solved
    details = []
    if ce is not None:
        if ce.solved:
            details.append(f"the reported values are the physically consistent estimate ({ce.method})")
        else:
            details.append(
                f"the physically consistent estimate failed ({ce.status}); the reported values are the "
                "unconstrained estimate"
            )
    if ph is None:
        level = "good" if solved else "info"
        return Verdict("Physical consistency", level, "not checked for the unconstrained estimate", details)
    of = ph.of
    if ph.consistent:
        level, head = "good", f"the {of} estimate has a physically consistent standard parameter set"
    elif ph.consistent is None or not ph.solved:
        level, head = "info", f"the check of the {of} estimate did not conclude"
    else:
        dist = f" (Mahalanobis distance {num(ph.mahalanobis, 3)})" if ph.mahalanobis is not None else ""
        if ph.statistically_compatible:
            level = "good"
            head = (
                f"the {of} estimate is consistent within its uncertainty: it is not itself physically consistent, "
                f"but the nearest consistent set lies within its uncertainty{dist}"
            )
        else:
            level = "warn" if solved else "bad"
            head = f"the {of} estimate has no physically consistent standard set"
            if ph.statistically_compatible is not None:
                head += f"; the nearest consistent set lies outside the estimate's uncertainty{dist}"
    if ph.moved:
        details.append(
            "parameters the nearest consistent set moves most: "
            + ", ".join(f"{m.name} {num(m.value, 3)} \u2192 {num(m.nearest_consistent, 3)}" for m in ph.moved[:6])
        )
    details += list(ph.notes)[:3]
    return Verdict("Physical consistency", level, head, details)


def _rejected_parts(run) -> list[str]:
    parts = [f"{len(run.dropped_rows)} of {run.samples_read} rows dropped"]
    if run.rejected_periods:
        parts.append(
            f"period(s) {', '.join(map(str, run.rejected_periods))} of "
            f"{run.n_periods + len(run.rejected_periods)} left out"
        )
    if any(run.unused_rows_per_joint):
        parts.append(f"unused (sample, joint) rows per joint {', '.join(map(str, run.unused_rows_per_joint))}")
    if any(run.trimmed_samples):
        parts.append(f"{run.trimmed_samples[0]} + {run.trimmed_samples[1]} samples trimmed at the filter edges")
    if run.standstill_s:
        parts.append(f"{len(run.standstill_s)} standstill segment(s) not used")
    return parts


def data_rejected(data) -> Verdict:
    runs = data.runs
    if not runs:
        return Verdict("Data rejected", "info", "no data summary in the result", [])
    details = [f"{run.role} {Path(run.file).name}: " + "; ".join(_rejected_parts(run)) for run in runs]
    dropped = sum(len(r.dropped_rows) for r in runs)
    periods = sum(len(r.rejected_periods) for r in runs)
    unused = sum(sum(r.unused_rows_per_joint) for r in runs)
    trimmed = sum(sum(r.trimmed_samples) for r in runs)
    anything = dropped or periods or unused or trimmed
    parts = [f"{dropped} row(s) dropped while reading"]
    if periods:
        parts.append(f"{periods} period(s) left out of averages")
    if unused:
        parts.append(f"{unused} (sample, joint) rows not used")
    head = ("; ".join(parts) + " (details in Data quality)") if anything else "nothing dropped, left out or trimmed"
    level = "warn" if dropped else ("info" if anything else "good")
    return Verdict("Data rejected", level, head, details)


class SummarySection(Section):
    title = "Summary"
    anchor = "summary"
    template = """
<div class="verdicts">
{% for v in verdicts %}
<div class="verdict {{ v.level }}">
<h3>{{ v.topic }} <span class="badge {{ v.level }}">{{ v.badge }}</span></h3>
<div>{{ v.headline }}</div>
{% if v.details %}<ul>{% for d in v.details %}<li>{{ d }}</li>{% endfor %}</ul>{% endif %}
</div>
{% endfor %}
</div>
{% if fit.columns %}
<h3>Torque NRMSE and samples inside the 95 % band, per joint</h3>
<div class="table-wrap"><table>
<thead><tr><th rowspan="2">joint</th>{% for c in fit.columns %}<th colspan="2">{{ c }}</th>{% endfor %}</tr>
<tr>{% for c in fit.columns %}<th>NRMSE</th><th>inside band</th>{% endfor %}</tr></thead>
<tbody>
{% for r in fit.rows %}
<tr><td>{{ r.joint }}</td>
{% for value, inside, level in r.cells %}<td class="n {{ level }}">{{ value | pct }}</td>
<td class="n {{ level }}">{{ inside | pct }}</td>{% endfor %}
</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">A cell pair is coloured by the joint's verdict on that run: {{ fit_rule }}</p>
{% endif %}
{% if notes %}
<h3>Notes</h3>
<ul>{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>
{% endif %}
"""

    def context(self, data) -> dict:
        fit, table = fit_quality(data)
        verdicts = [fit, identifiability(data), physical_consistency(data), data_rejected(data)]
        return {"verdicts": verdicts, "fit": table, "notes": list(data.notes), "fit_rule": fit_rule(data.thresholds)}
