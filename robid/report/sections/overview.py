"""The report's first screen: the headline verdicts with their reasons, the verdict of every run and joint as a
heat map beside robid's comparison with each reference model per run, and what to do next (docs/report.md,
"The first screen"). Every verdict is robid.report.judgement's; the sections below hold the details."""

from __future__ import annotations

from robid.report.judgement import judge_runs
from robid.report.section import Section, num
from robid.report.sections.summary import (
    LEVEL_TEXT,
    Verdict,
    against_references,
    data_rejected,
    fit_quality,
    identifiability,
    physical_consistency,
)

_CELL_TEXT = {"rest": "rest", "info": "\u2013"}


def identified_model(data) -> Verdict:
    """The model every figure and verdict evaluates (robid.identification.identified_model): estimator, base
    parameters, the friction model of each joint; the reasons are what identification chose by default
    (``record.choices``, one line each)."""
    record = data.record
    joints = data.robot.joint_names
    layout = f"elastic layout ({', '.join(record.motor_joints)} with motor rows)" if record.motor_joints else "rigid"
    if not any(t in record.terms for t in ("viscous", "coulomb")):
        friction = "no friction terms"
    else:
        friction = data.model.describe(joints)
    head = f"{record.method}, {len(record.base_parameters)} base parameters, {layout}; {friction}"
    details = [f"chose {line}" for line in record.choices] or ["every choice given by the caller (no default taken)"]
    fm = record.friction_models
    if fm is not None and not fm.adopted and fm.nonlinear_joints:
        details.append(f"nonlinear friction chosen on {', '.join(fm.nonlinear_joints)} but not adopted (method "
                       f"{record.method}): the figures evaluate linear friction")
    return Verdict("Identified model", "info", head, details)


def next_steps(data, judgements, verdicts) -> list[str]:
    """What to do next, from the verdicts: at most a handful of actions, the most pressing first."""
    steps = []
    by_topic = {v.topic: v for v in verdicts}
    if not any(r.role == "validation" for r in judgements):
        steps.append("Validate: identify with a second excitation as --validate (or a campaign's validation run); "
                     "the verdicts now judge the identification data only.")
    fit = by_topic.get("Fit quality")
    if fit is not None and fit.level in ("warn", "bad"):
        steps.append("Joints not good: open \u201cPredicted versus measured torque\u201d for where the residual "
                     "lies (velocity reversals: friction model; slow drift: a payload or temperature; spikes: the "
                     "data), and \u201cFriction\u201d for the friction curves.")
    moving = {j for r in judgements for j in r.moving}
    never = [j for j in data.robot.joint_names if j not in moving]
    if never:
        steps.append(f"{', '.join(never)} at rest in every run: not judged anywhere; a run that moves "
                     f"{'it' if len(never) == 1 else 'them'} judges {'it' if len(never) == 1 else 'them'}.")
    refs = by_topic.get("Against the reference models")
    if refs is not None and refs.level in ("warn", "bad"):
        steps.append("robid is not better than a reference model on every run: see the comparison details below.")
    ident = by_topic.get("Identifiability")
    if ident is not None and ident.level != "good":
        steps.append("Parameters not well identified: a richer excitation (robid design; more harmonics, the "
                     "default criterion) or more runs; their values are kept but not trustworthy alone.")
    phys = by_topic.get("Physical consistency")
    if phys is not None and phys.level in ("warn", "bad"):
        steps.append("No physically consistent set: identify with --method consistent, or use robid export-model "
                     "(the nearest consistent set) for simulation and control.")
    if not steps:
        steps.append("The model is ready: robid export-model RESULT.json --format urdf (or mjcf, c, python) takes it "
                     "to simulation and control.")
    return steps[:5]


def heat_map(data, judgements) -> dict:
    """Rows (one per run) of verdict cells per joint and one comparison cell per reference model."""
    labels = list(dict.fromkeys(c.label for r in judgements for c in r.comparisons))
    rows = []
    for r in judgements:
        cells = [{"level": j.level, "text": _cell_text(j), "title": f"{j.joint}: {j.reason}"} for j in r.joints]
        refs = []
        for label in labels:
            c = next((c for c in r.comparisons if c.label == label), None)
            if c is None or not c.joints:
                refs.append({"level": "", "text": "\u2013", "title": f"{label}: not scored on this run"})
                continue
            counts = c.counts()
            text = f"{c.outcome} {counts['better']}/{len(c.joints)}" if c.outcome != "as good" else "as good"
            refs.append({"level": c.level, "text": text, "title": c.text})
        rows.append({"run": r.name, "role": "id" if r.role == "identification" else "val", "cells": cells,
                     "refs": refs, "title": r.label})
    return {"joints": list(data.robot.joint_names), "rows": rows,
            "references": [{"short": f"vs ref. {k + 1}", "label": lab} for k, lab in enumerate(labels)]}


def _cell_text(j) -> str:
    if j.level in _CELL_TEXT:
        return _CELL_TEXT[j.level]
    return num(j.nrmse, 3)


class OverviewSection(Section):
    title = "Overview"
    anchor = "overview"
    collapsed = False
    template = """
<div class="overview">
<div class="overview-verdicts">
{% for v in verdicts %}
<div class="verdict compact {{ v.level }}">
<h3>{{ v.topic }} <span class="badge {{ v.level }}">{{ v.badge }}</span></h3>
<div class="headline">{{ v.headline }}</div>
{% if v.details %}<details class="why"><summary>why</summary><ul>{% for d in v.details %}<li>{{ d }}</li>
{% endfor %}</ul></details>{% endif %}
</div>
{% endfor %}
<div class="next"><h3>What to do next</h3><ol>{% for s in steps %}<li>{{ s }}</li>{% endfor %}</ol></div>
</div>
{% if map.rows %}
<div class="overview-map">
<div class="table-wrap"><table class="heat">
<thead><tr><th>run</th>{% for j in map.joints %}<th>{{ j }}</th>{% endfor %}
{% for r in map.references %}<th title="{{ r.label }}">{{ r.short }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in map.rows %}
<tr><td class="run" title="{{ row.title }}"><span class="role">{{ row.role }}</span> {{ row.run }}</td>
{% for c in row.cells %}<td class="n {{ c.level }}" title="{{ c.title }}">{{ c.text }}</td>{% endfor %}
{% for c in row.refs %}<td class="cmp {{ c.level }}" title="{{ c.title }}">{{ c.text }}</td>{% endfor %}
</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Verdict per run and joint: torque NRMSE [%] coloured by the joint's verdict on that run
(<span class="badge good">GOOD</span> <span class="badge warn">CHECK</span> <span class="badge bad">POOR</span>,
<span class="badge rest">rest</span>: at rest, not judged); hover a cell for its reasons.
{% for r in map.references %}<strong>{{ r.short }}</strong>: robid against {{ r.label }} over the run's moving
joints (better, as good, worse, mixed; better on k of n joints). {% endfor %}</p>
</div>
{% endif %}
</div>
"""

    def context(self, data) -> dict:
        judgements = judge_runs(data)
        fit, _ = fit_quality(data, judgements)
        verdicts = [identified_model(data), fit]
        refs = against_references(judgements)
        if refs is not None:
            verdicts.append(refs)
        verdicts += [identifiability(data), physical_consistency(data), data_rejected(data)]
        return {"verdicts": verdicts, "steps": next_steps(data, judgements, verdicts),
                "map": heat_map(data, judgements), "levels": LEVEL_TEXT}
