"""Elastic joints: identified stiffness and damping with uncertainty, the modes they predict at the poses of the
runs, and per run the recorded deflection theta - q beside the one the identified springs predict (docs/elastic.md).
Shown when the record was identified in the elastic layout (``motor_joints``) or from motor encoders only
(``processing.motor_encoders_only``, docs/elastic.md section 3b: no recorded deflection then)."""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.report import _figures as F
from robid.report.section import Section, num
from robid.report.sections.torque import run_time

#: base-parameter prefixes of the elastic layout and what they are
ELASTIC_PARAMETERS = {"k": ("stiffness", "N m/rad"), "d": ("spring damping", "N m s/rad"),
                      "fl": ("link-side viscous", "N m s/rad")}


def spring_joints(record) -> tuple[str, ...]:
    """The joints whose springs the record identified: the elastic layout's motor joints, or those with a
    stiffness parameter when the link states were reconstructed from motor encoders only."""
    if record.processing.motor_encoders_only:
        return tuple(j for j in record.joints if f"k_{j}" in record.names)
    return tuple(record.motor_joints)


def _rows(data) -> list[dict]:
    """The elastic parameters of the record with the report's references (the record's own and --truth/--reference
    ones, ReportData.references)."""
    record = data.record
    rows = []
    for k, p in enumerate(record.base_parameters):
        prefix, _, joint = p.name.partition("_")
        if prefix not in ELASTIC_PARAMETERS or joint not in spring_joints(record):
            continue
        what, unit = ELASTIC_PARAMETERS[prefix]
        refs = {label: values[k] for label, values in data.references.items()}
        rows.append({
            "name": p.name, "what": what, "unit": unit, "value": num(p.value, 5), "std": num(p.std, 2),
            "rel": num(p.relative_std_percent, 2), "cls": p.identifiability, "nominal": num(p.nominal, 5),
            "refs": ", ".join(f"{k} {num(v, 5)}" for k, v in refs.items()) or "\u2013",
        })
    return rows


def _identified_model(robot, record):
    """The robot model with the identified stiffness and damping of the elastic joints (nominal elsewhere)."""
    values = dict(zip(record.names, record.values, strict=True))
    joints = []
    for j in robot.model.joints:
        e = j.elasticity
        if e is not None and j.name in spring_joints(record):
            e = dataclasses.replace(
                e,
                stiffness=float(values.get(f"k_{j.name}", e.stiffness)),
                damping=float(values.get(f"d_{j.name}", e.damping)),
                link_viscous=float(values.get(f"fl_{j.name}", e.link_viscous)),
            )
        joints.append(dataclasses.replace(j, elasticity=e))
    return dataclasses.replace(robot.model, joints=tuple(joints))


def _modes(robot, record) -> tuple[list[dict], str]:
    """Modes at the mean pose of every run, with the nominal and the identified springs."""
    from robid.elastic import modal_analysis
    from robid.errors import RobidInputError

    motors = "controlled" if all(j.controller is not None for j in robot.model.joints) else "locked"
    identified = _identified_model(robot, record)
    out = []
    for run in record.runs:
        pose = [r.q_mean for r in run.ranges]
        try:
            nominal = modal_analysis(robot.model, pose, motors)
            fitted = modal_analysis(identified, pose, motors)
        except RobidInputError as exc:
            return [], f"modes not computed: {exc}"
        out.append({
            "run": run.file.split("/")[-1], "role": run.role,
            "pose": ", ".join(num(np.degrees(x), 4) if j.revolute else num(x, 4)
                              for x, j in zip(pose, robot.model.joints, strict=True)),
            "identified": ", ".join(f"{num(f, 4)} ({num(100 * z, 2)} %)" for f, z in
                                    zip(fitted.frequencies_hz, fitted.damping_ratios, strict=True)),
            "nominal": ", ".join(num(f, 4) for f in nominal.frequencies_hz),
        })
    return out, motors


#: display factor of a deflection (rad -> mrad, m -> mm)
DEFLECTION_SCALE = 1e3


def _deflection_unit(joint) -> str:
    return "mrad" if joint.revolute else "mm"


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2)))


def _deflection(data, run) -> dict | None:
    """The run's recorded and predicted deflection (display series: robid.identification.run_records.
    elastic_deflection) of every elastic joint: the RMS table and the figure; None for a run without them (a rigid
    record, or one written before schema 1.2)."""
    d = run.display
    if d.deflection_measured is None or d.deflection_predicted is None:
        return None
    robot = data.robot
    t, _ = run_time(run)
    measured = DEFLECTION_SCALE * d.array("deflection_measured")
    predicted = DEFLECTION_SCALE * d.array("deflection_predicted")
    joints = [j for j, column in enumerate(d.deflection_measured) if column is not None]
    table = []
    for j in joints:
        rec, pred = _rms(measured[:, j]), _rms(predicted[:, j])
        diff = _rms(measured[:, j] - predicted[:, j])
        table.append({"joint": robot.joint_names[j], "unit": _deflection_unit(robot.model.joints[j]),
                      "recorded": rec, "predicted": pred, "difference": diff,
                      "relative": 100 * diff / rec if rec > 0 else None})
    figures = _deflection_figures(data, run, t, measured, predicted, joints, table)
    return {"label": run.label, "table": table, "figures": figures}


def _deflection_figures(data, run, t, measured, predicted, joints, table) -> list:
    """Per group of elastic joints: recorded (black) and predicted (red dashed) deflection against time, and below
    each the difference."""
    names = data.robot.joint_names
    figs = []
    for group in F.joint_groups(len(joints)):
        with F.style():
            height = 2.6 * len(group) + 0.9
            fig = F.new_figure(height)
            axes = fig.subplots(2 * len(group), 1, sharex=True, squeeze=False,
                                gridspec_kw={"height_ratios": [2.2, 1.0] * len(group)})[:, 0]
            F.margins(fig, rows=2 * len(group), top=0.6, bottom=0.55, hspace_in=0.4)
            for row, k in enumerate(group):
                j, r = joints[k], table[k]
                ax, axd = axes[2 * row], axes[2 * row + 1]
                ax.plot(t, measured[:, j], color=F.MEASURED, lw=1.0, label="recorded \u03b8 \u2212 q")
                ax.plot(t, predicted[:, j], color=F.PREDICTED, lw=1.1, ls="--", label="predicted (identified model)")
                ax.set_ylabel(f"{names[j]} [{r['unit']}]")
                ax.set_title(f"{names[j]}: deflection RMS recorded {num(r['recorded'], 3)}, predicted "
                             f"{num(r['predicted'], 3)}, difference {num(r['difference'], 3)} {r['unit']}", loc="left")
                axd.plot(t, measured[:, j] - predicted[:, j], color=F.DATA, lw=0.8)
                axd.axhline(0.0, color=F.MEASURED, lw=0.6)
                axd.set_ylabel("difference")
            F.legend_on_top(fig, axes[0])
            axes[-1].set_xlabel(run_time(run)[1])
            label = ", ".join(names[joints[k]] for k in group)
            figs.append(F.figure_html(
                fig,
                f"{run.label}: recorded and predicted deflection, joints {label}",
                f"{run.label}, joints {label}: recorded deflection \u03b8 \u2212 q (motor minus link position, "
                "processed signals; black) and the deflection the identified model predicts (red dashed): the spring "
                "torque L_J \u03b2\u2032 that link row J of the elastic layout needs, through the identified stiffness "
                "and damping (k \u03b4 + d \u03b4\u2032 = L_J \u03b2\u2032); below each, recorded \u2212 predicted.",
            ))
    return figs


class ElasticSection(Section):
    title = "Elastic joints"
    anchor = "elastic"
    template = """
{% if rows %}
{% if motor_only %}
<p>Identified from motor encoders only (docs/elastic.md section 3b): the link states of {{ motor_joints }}
reconstructed from the link equations, the springs by Gauss-Newton through them.</p>
{% else %}
<p>Identified in the elastic layout (docs/elastic.md section 3): link equations of every joint and motor equations
of {{ motor_joints }}, from link and motor encoders.</p>
{% endif %}
<div class="table-wrap"><table>
<thead><tr><th>parameter</th><th>what</th><th>value</th><th>std</th><th>rel. std</th><th>class</th>
<th>nominal</th><th>references</th><th>unit</th></tr></thead>
<tbody>
{% for r in rows %}
<tr><td>{{ r.name }}</td><td>{{ r.what }}</td><td class="n">{{ r.value }}</td><td class="n">{{ r.std }}</td>
<td class="n">{{ r.rel }} %</td><td>{{ r.cls }}</td><td class="n">{{ r.nominal }}</td><td>{{ r.refs }}</td>
<td>{{ r.unit }}</td></tr>
{% endfor %}
</tbody></table></div>
<h3>Predicted modes at the mean pose of each run</h3>
{% if modes %}
<div class="table-wrap"><table>
<thead><tr><th>run</th><th>role</th><th>pose (deg / m)</th><th>identified springs: Hz (damping)</th>
<th>nominal springs: Hz</th></tr></thead>
<tbody>
{% for m in modes %}
<tr><td>{{ m.run }}</td><td>{{ m.role }}</td><td class="n">{{ m.pose }}</td><td class="n">{{ m.identified }}</td>
<td class="n">{{ m.nominal }}</td></tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Linearised closed loop with motors {{ motors }} (robid modal; docs/elastic.md), rigid-body
and friction values of the robot file, springs as identified or nominal.</p>
{% else %}
<p>{{ motors }}</p>
{% endif %}
{% if deflection %}
<h3>Recorded and predicted deflection</h3>
<p>The deflection &theta; &minus; q the springs carry, recorded (processed motor minus link position) and predicted
by the identified model from the link equation of each elastic joint, 0 = L<sub>J</sub> &beta;&prime; +
k<sub>J</sub> (q<sub>J</sub> &minus; &theta;<sub>J</sub>) + d<sub>J</sub> (q&#775;<sub>J</sub> &minus;
&theta;&#775;<sub>J</sub>): the spring torque the link side needs, through the identified stiffness and damping.
Agreement means the stiffness explains the encoders' difference, not only the torques.</p>
{% for r in deflection %}
<h4>{{ r.label }}</h4>
<div class="table-wrap"><table>
<thead><tr><th>joint</th><th>recorded RMS</th><th>predicted RMS</th><th>RMS of the difference</th>
<th>difference / recorded</th></tr></thead>
<tbody>
{% for t in r.table %}
<tr><td>{{ t.joint }}</td><td class="n">{{ t.recorded | num(4) }} {{ t.unit }}</td>
<td class="n">{{ t.predicted | num(4) }} {{ t.unit }}</td><td class="n">{{ t.difference | num(3) }} {{ t.unit }}</td>
<td class="n">{{ t.relative | pct }}</td></tr>
{% endfor %}
</tbody></table></div>
{% for f in r.figures %}{{ f }}{% endfor %}
{% endfor %}
<p class="caption">RMS over the samples shown (every step-th processed sample), the static part included.</p>
{% endif %}
{% endif %}
"""

    def applies(self, data) -> bool:
        return bool(spring_joints(data.record))

    def context(self, data) -> dict:
        record = data.record
        rows = _rows(data)
        modes, motors = _modes(data.robot, record) if rows else ([], "")
        deflection = [r for r in (_deflection(data, run) for run in record.runs) if r is not None] if rows else []
        return {"rows": rows, "motor_joints": ", ".join(spring_joints(record)), "modes": modes, "motors": motors,
                "deflection": deflection, "motor_only": record.processing.motor_encoders_only}
