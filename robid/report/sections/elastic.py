"""Elastic joints: identified stiffness and damping with uncertainty, and the modes they predict at the poses of the
runs (docs/elastic.md). Shown when the record was identified in the elastic layout (``motor_joints``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.report.section import Section, num

#: base-parameter prefixes of the elastic layout and what they are
ELASTIC_PARAMETERS = {"k": ("stiffness", "N m/rad"), "d": ("spring damping", "N m s/rad"),
                      "fl": ("link-side viscous", "N m s/rad")}


def _rows(data) -> list[dict]:
    """The elastic parameters of the record with the report's references (the record's own and --truth/--reference
    ones, ReportData.references)."""
    record = data.record
    rows = []
    for k, p in enumerate(record.base_parameters):
        prefix, _, joint = p.name.partition("_")
        if prefix not in ELASTIC_PARAMETERS or joint not in record.motor_joints:
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
        if e is not None and j.name in record.motor_joints:
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


class ElasticSection(Section):
    title = "Elastic joints"
    anchor = "elastic"
    template = """
{% if rows %}
<p>Identified in the elastic layout (docs/elastic.md section 3): link equations of every joint and motor equations
of {{ motor_joints }}, from link and motor encoders.</p>
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
{% endif %}
"""

    def applies(self, data) -> bool:
        return bool(data.record.motor_joints)

    def context(self, data) -> dict:
        record = data.record
        rows = _rows(data)
        modes, motors = _modes(data.robot, record) if rows else ([], "")
        return {"rows": rows, "motor_joints": ", ".join(record.motor_joints), "modes": modes, "motors": motors}
