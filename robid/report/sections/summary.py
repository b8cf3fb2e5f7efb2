"""Summary: one verdict per question an engineer asks first -- does the model fit new data, which parameters
can be trusted, is the estimate physically meaningful, and what data were left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.report._compute import joint_units
from robid.report.judgement import nrmse_level
from robid.report.section import Section, count_by, num

LEVEL_TEXT = {"good": "GOOD", "warn": "CHECK", "bad": "POOR", "info": "NOTE", "rest": "REST"}
_ORDER = {"rest": -1, "info": 0, "good": 1, "warn": 2, "bad": 3}


@dataclass
class Verdict:
    topic: str
    level: str
    headline: str
    details: list[str] = field(default_factory=list)

    @property
    def badge(self) -> str:
        return LEVEL_TEXT[self.level]


def fit_level(nrmse, coverage, thresholds, needed: float | None = None) -> str:
    """A joint's fit: the NRMSE level, but GOOD only when at least ``needed`` per cent of its samples (default
    ``band_coverage_good_percent``; robid.report.judgement.coverage_needed) lie inside the 95 % prediction band
    too (fewer: the run holds errors the band does not count); a joint without a coverage is judged by its NRMSE
    alone."""
    level = nrmse_level(nrmse, thresholds)
    needed = thresholds.band_coverage_good_percent if needed is None else needed
    if level == "good" and coverage is not None and coverage < needed:
        return "warn"
    return level


def fit_rule(th) -> str:
    return (
        f"NRMSE = RMS(measured \u2212 predicted) / RMS(measured) per joint, over the samples the fit used. Good: "
        f"NRMSE < {num(th.nrmse_good_percent)} % and at least {num(th.band_coverage_good_percent)} % of the samples "
        "inside the 95 % prediction band (noise, parameter uncertainty and model error; less on few independent "
        f"samples); acceptable (CHECK): NRMSE < {num(th.nrmse_acceptable_percent)} %, or a good NRMSE with fewer "
        "samples inside the band; poor otherwise. A joint at rest in a run is not judged."
    )


def judged_runs(judgements) -> tuple[list, str]:
    """(the runs a verdict judges: the validation runs, else the identification runs; what they are, in words)."""
    val = [r for r in judgements if r.role == "validation"]
    if val:
        return val, f"{len(val)} validation run(s)"
    ident = [r for r in judgements if r.role == "identification"]
    return ident, f"the {len(ident)} identification run(s) only (no validation run: optimistic)"


def fit_quality(data, judgements=None) -> tuple[Verdict, dict]:
    """The fit verdict (robid.report.judgement): per joint, its median NRMSE over the runs judged (validation runs,
    else identification runs) where it moves, GOOD only with enough samples inside the 95 % band; the worst run of
    a joint that is not good named; the joints at rest listed as not judged."""
    from robid.report.judgement import judge_runs

    th = data.thresholds
    judgements = judge_runs(data) if judgements is None else judgements
    runs, on = judged_runs(judgements)
    rule = fit_rule(th)
    table = fit_table(judgements)
    if not runs:
        return Verdict("Fit quality", "info", "no torque metrics available", [rule]), table
    rows = [_joint_row(data.robot.joint_names[j], [(r, r.joints[j]) for r in runs if r.joints[j].judged], th)
            for j in range(data.robot.dof)]
    judged = [r for r in rows if r is not None]
    if not judged:
        return Verdict("Fit quality", "info", f"no joint moves in {on}: nothing to judge", [rule, *rest_lines(runs)]), \
            table
    level = max((r["level"] for r in judged), key=_ORDER.get)
    if level == "good":
        head = (f"every moving joint below {num(th.nrmse_good_percent)} % NRMSE with its samples inside the 95 % "
                f"band, on {on}")
    else:
        groups = [f"{LEVEL_TEXT[lvl]} " + ", ".join(r["words"] for r in judged if r["level"] == lvl)
                  for lvl in ("bad", "warn") if any(r["level"] == lvl for r in judged)]
        what = "median NRMSE of each joint over the runs it moves in" if len(runs) > 1 else "NRMSE"
        head = f"{on}, {what}: " + "; ".join(groups)
    resting = [r for r in runs if r.at_rest]
    if resting:
        head += f"; {sum(len(r.at_rest) for r in resting)} joint(s) at rest in {len(resting)} run(s) not judged"
    worst = [r["worst"] for r in judged if r["worst"]]
    details = [rule, *worst, *rest_lines(runs), *_model_error_lines(data)]
    return Verdict("Fit quality", level, head, details), table


def _joint_row(name: str, cells, th) -> dict | None:
    """One joint over the judged runs where it moves (``cells``: (run, JointJudgement)): its level and words."""
    if not cells:
        return None
    nrmse = [c.nrmse for _, c in cells]
    median = float(np.median(nrmse))
    inside = [c.coverage for _, c in cells if c.coverage is not None]
    needed = [c.coverage_needed for _, c in cells if c.coverage is not None]
    level = fit_level(median, float(np.median(inside)) if inside else None, th,
                      float(np.median(needed)) if needed else None)
    worst_run, worst = max(cells, key=lambda rc: rc[1].nrmse)
    words = f"{name} {num(median, 3)} %"
    if inside and level != "bad" and float(np.median(inside)) < float(np.median(needed)):
        words += f" (only {num(float(np.median(inside)), 3)} % inside the band)"
    worst_line = (f"{name}: NRMSE median {num(median, 3)} % over {len(cells)} runs, worst {num(worst.nrmse, 3)} % on "
                  f"{worst_run.name}") if len(cells) > 1 else ""
    return {"level": level, "words": words, "worst": worst_line}


def rest_lines(runs) -> list[str]:
    """One line per run with joints at rest: which, not judged."""
    return [f"{r.name}: {', '.join(r.at_rest)} at rest, not judged" for r in runs if r.at_rest]


def _model_error_lines(data) -> list[str]:
    error = data.record.model_error_std
    if not error:
        return ["the 95 % bands of this record count noise and parameter uncertainty only (RESULT.json written before "
                "schema 2.1, without the model error): their shares inside are too low for a model with any error"]
    units = joint_units(data.robot)
    parts = ", ".join(f"{n} {num(e, 3)} {u.torque}" for n, e, u in zip(data.robot.joint_names, error, units,
                                                                       strict=True) if e is not None)
    return [f"model error std counted in the bands (the identification residual beyond noise and parameter "
            f"uncertainty): {parts}"]


def fit_table(judgements) -> dict:
    """The per-run, per-joint table of NRMSE and share inside the band (one row per run), each cell with its
    verdict and the share a good fit needs there."""
    if not judgements:
        return {"joints": [], "rows": []}
    rows = [{"run": r.label, "cells": [(j.nrmse, j.coverage, j.coverage_needed, j.level) for j in r.joints]}
            for r in judgements]
    return {"joints": [j.joint for j in judgements[0].joints], "rows": rows}


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
            head = f"consistent within its uncertainty: a physically consistent set lies within the {of} estimate's " \
                   f"uncertainty{dist}"
            details.append("the point estimate lies just outside the physically consistent sets, by less than its "
                           "uncertainty (noise); robid export-model writes the nearest consistent set")
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
    standstill = sum(len(r.standstill_s) for r in runs)
    anything = dropped or periods or unused or trimmed
    parts = [f"{dropped} row(s) dropped while reading"]
    if periods:
        parts.append(f"{periods} period(s) left out of averages")
    if unused:
        parts.append(f"{unused} (sample, joint) rows not used")
    head = ("; ".join(parts) + " (details in Data quality)") if anything else "no row dropped, left out or trimmed"
    if standstill:
        head += f"; {standstill} standstill segment(s) not fitted (no motion there)"
    level = "warn" if dropped else ("info" if anything else "good")
    return Verdict("Data rejected", level, head, details)


def against_references(judgements) -> Verdict | None:
    """robid against each reference model, run by run (robid.report.judgement.ReferenceComparison): how many runs
    of each kind (excitation, single-joint) it predicts better, as well or worse, over their moving joints."""
    runs = [r for r in judgements if r.comparisons]
    if not runs:
        return None
    labels = list(dict.fromkeys(c.label for r in runs for c in r.comparisons))
    heads, details, levels = [], [], []
    for label in labels:
        pairs = [(r, c) for r in runs for c in r.comparisons if c.label == label and c.joints]
        heads.append(_reference_head(label, pairs))
        levels.append(_reference_level([c.outcome for _, c in pairs]))
        details += [f"{r.name} ({r.kind}, {r.role}): {c.text}" for r, c in pairs]
    details.insert(0, "per run, over its moving joints: better when robid's NRMSE is lower on one joint and higher on "
                      "none (within 5 % of the reference's counts as as good); joints at rest are not compared")
    level = max(levels, key=lambda v: {"good": 1, "info": 0, "warn": 2, "bad": 3}[v])
    return Verdict("Against the reference models", level, "; ".join(heads), details)


def _reference_head(label: str, pairs) -> str:
    parts = []
    for kind in ("excitation", "single-joint"):
        outcomes = [c.outcome for r, c in pairs if r.kind == kind]
        if not outcomes:
            continue
        what = f"{len(outcomes)} {kind} run(s)"
        if kind == "single-joint":
            what += " (the moving joint)"
        if all(o == "better" for o in outcomes):
            parts.append(f"better on every one of the {what}")
        else:
            counts = ", ".join(f"{o} on {outcomes.count(o)}" for o in ("better", "as good", "mixed", "worse")
                               if o in outcomes)
            parts.append(f"{what}: {counts}")
    return f"robid against {label}: " + "; ".join(parts)


def _reference_level(outcomes) -> str:
    if not outcomes or all(o in ("better", "as good") for o in outcomes):
        return "good" if "better" in outcomes else "info"
    worse = sum(o in ("worse", "mixed") for o in outcomes)
    return "bad" if worse > len(outcomes) / 2 else "warn"


class SummarySection(Section):
    title = "Verdicts in full: fit per run and joint"
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
{% if fit.rows %}
<h3>Torque NRMSE and samples inside the 95 % band, per run and joint</h3>
<div class="table-wrap"><table>
<thead><tr><th rowspan="2">run</th>{% for j in fit.joints %}<th colspan="2">{{ j }}</th>{% endfor %}</tr>
<tr>{% for j in fit.joints %}<th>NRMSE</th><th>inside band (needed)</th>{% endfor %}</tr></thead>
<tbody>
{% for r in fit.rows %}
<tr><td>{{ r.run }}</td>
{% for value, inside, needed, level in r.cells %}<td class="n {{ level }}">{{ value | pct }}</td>
<td class="n {{ level }}">{{ inside | pct }}{% if needed is not none %} ({{ needed | num(3) }}){% endif %}</td>
{% endfor %}
</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">A cell pair is coloured by the joint's verdict on that run (grey: at rest, not judged):
{{ fit_rule }}</p>
{% endif %}
{% if notes %}
<h3>Notes</h3>
<ul>{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>
{% endif %}
"""

    def context(self, data) -> dict:
        from robid.report.judgement import judge_runs

        judgements = judge_runs(data)
        fit, table = fit_quality(data, judgements)
        verdicts = [fit, *filter(None, [against_references(judgements)]), identifiability(data),
                    physical_consistency(data), data_rejected(data)]
        return {"verdicts": verdicts, "fit": table, "notes": list(data.notes), "fit_rule": fit_rule(data.thresholds)}
