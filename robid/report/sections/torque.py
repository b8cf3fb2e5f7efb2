"""Predicted versus measured torque per joint on every identification and validation run: the prediction with
its 95 % band (parameter uncertainty plus the residual noise of each joint), the residual, and the residual
spectrum, all as identification recorded them (robid.identification.recording)."""

from __future__ import annotations

from robid.estimation.metrics import K95
from robid.report._compute import joint_units
from robid.report.judgement import judge_run
from robid.report.section import Section, num
from robid.report.sections.torque_figures import averaged, model_error, run_time, spectrum_figure, time_figure

__all__ = ["TorqueSection", "averaged", "run_time"]


def run_verdict_line(judgement) -> list[dict]:
    """The run's headline: its fit verdict over the moving joints (the joints at rest named) and robid against
    each reference model, each with its badge."""
    from robid.report.sections.summary import LEVEL_TEXT

    level = judgement.level
    if level == "rest":
        parts = [{"level": "rest", "badge": "REST", "text": "no joint moves: nothing judged"}]
    else:
        worst = [j for j in judgement.joints if j.level == level]
        text = f"fit of the moving joints ({', '.join(judgement.moving)})"
        if level != "good":
            text += ": " + ", ".join(f"{j.joint} {num(j.nrmse, 3)} %" for j in worst)
        if judgement.at_rest:
            text += f"; {', '.join(judgement.at_rest)} at rest, not judged"
        parts = [{"level": level, "badge": LEVEL_TEXT[level], "text": text}]
    for c in judgement.comparisons:
        if c.joints:
            parts.append({"level": c.level, "badge": c.outcome.upper(), "text": f"robid {c.text}"})
    return parts


def _table(data, run) -> list[dict]:
    rows = []
    units = joint_units(data.robot)
    noise = run.noise.tau_std_processed
    for j, m in enumerate(run.fit.per_joint):
        rows.append(
            {
                "joint": m.joint,
                "unit": units[j].torque,
                "measured_rms": m.measured_rms,
                "rms": m.rms,
                "nrmse": m.nrmse_percent,
                "max": m.max_error,
                "coverage": m.inside_band_percent,
                "model_std": m.mean_model_std,
                "noise": noise[j],
                "ratio": m.rms / noise[j] if m.rms is not None and noise[j] else None,
            }
        )
    return rows


class TorqueSection(Section):
    title = "Predicted versus measured torque"
    anchor = "torque"
    template = """
<p class="note">Prediction = filtered base regressor of the run \u00d7 the reported values (and the adopted
friction model). The 95 % band is \u00b1{{ k }} \u00d7 sqrt(parameter variance along the regressor row +
\u03c3\u00b2 + e\u00b2), \u03c3 the noise standard deviation of the run's processed torque (the "noise std"
column, estimated by the signal stage) and e the model error of the joint ({{ error }}): what the identification
runs' residuals hold beyond their noise and the parameter uncertainty (for comparison, the residual standard
deviation of the identification fit: {{ sigma }}). About 95 % of the used samples of a run fall inside it when the
model predicts the run as well as it fits the identification data; far fewer means the run holds errors the
identification data did not show.</p>
{% for r in runs %}
<h3>{{ r.label }}</h3>
{% if r.verdict %}<p class="verdict-line">{% for part in r.verdict %}
<span class="badge {{ part.level }}">{{ part.badge }}</span> {{ part.text }}{% if not loop.last %}; {% endif %}
{% endfor %}</p>{% endif %}
<div class="table-wrap"><table>
<thead><tr><th>joint</th><th>measured RMS</th><th>residual RMS</th><th>NRMSE</th><th>max |residual|</th>
<th>inside 95 % band</th><th>mean model std</th><th>noise std (processed)</th><th>residual / noise</th></tr></thead>
<tbody>
{% for t in r.table %}
<tr><td>{{ t.joint }}</td><td class="n">{{ t.measured_rms | num(3) }} {{ t.unit }}</td>
<td class="n">{{ t.rms | num(3) }}</td><td class="n">{{ t.nrmse | pct }}</td><td class="n">{{ t.max | num(3) }}</td>
<td class="n">{{ t.coverage | pct }}</td><td class="n">{{ t.model_std | num(3) }}</td>
<td class="n">{{ t.noise | num(3) }}</td>
<td class="n">{{ t.ratio | num(3) }}</td></tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Residual / noise near 1: the model explains everything but the measurement noise; much
larger: unmodelled dynamics (or a noise estimate that misses part of the noise).</p>
{% for f in r.figures %}{{ f }}{% endfor %}
{% endfor %}
{% if not runs %}<p class="note">No measurement data available for plots.</p>{% endif %}
"""

    def context(self, data) -> dict:
        runs = []
        for run in data.runs:
            figures = [time_figure(data, run)]
            if run.spectrum is not None:
                figures.append(spectrum_figure(data, run))
            runs.append({"label": run.label, "table": _table(data, run), "figures": figures,
                         "verdict": run_verdict_line(judge_run(run, data.thresholds))})
        sigma = ", ".join(f"{n} {num(s, 3)}" for n, s in zip(data.robot.joint_names, data.sigma, strict=True))
        error = ", ".join(f"{n} {num(e, 3)}" for n, e in zip(data.robot.joint_names, model_error(data), strict=True))
        if not data.record.model_error_std:
            error += "; not stored by this RESULT.json, written before schema 2.1: the band lacks it"
        return {"runs": runs, "k": num(K95), "sigma": sigma, "error": error}
