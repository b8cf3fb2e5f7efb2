"""Robot model and parameter counts: what was identified (joints, terms) and how many parameters of each kind."""

from __future__ import annotations

import math

from robid.report._compute import DEG
from robid.report._loops import loop_context
from robid.report.section import Section, count_by, num


def _deg_or_si(value, revolute: bool) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value * DEG if revolute else value


class ModelSection(Section):
    title = "Robot model and parameter counts"
    anchor = "model"
    template = """
<div class="table-wrap"><table>
<tbody>
<tr><th>robot</th><td>{{ name }}</td></tr>
<tr><th>source</th><td><code>{{ source }}</code></td></tr>
<tr><th>kinematics</th><td>{{ kinematics }}; gravity {{ gravity }} m/s\u00b2</td></tr>
<tr><th>joints (dof)</th><td>{{ dof }}</td></tr>
<tr><th>model terms</th><td>{{ terms }}</td></tr>
<tr><th>standard parameters</th><td>{{ n_standard }}{% if structural %} ({{ structural }}){% endif %}</td></tr>
<tr><th>base parameters</th><td>{{ n_base }} ({{ grouping }})</td></tr>
<tr><th>base parameter classes</th><td>{{ classes }}</td></tr>
<tr><th>estimator</th><td>{{ method }}{% if condition %}; condition number {{ condition }}{% endif %}</td></tr>
</tbody>
</table></div>
<h3>Joints</h3>
<div class="table-wrap"><table>
<thead><tr><th>joint</th><th>type</th><th>position range</th><th>velocity limit</th><th>acceleration limit</th>
<th>torque limit</th><th>gear ratio</th><th>friction fv / fc / f0 (nominal)</th><th>other</th></tr></thead>
<tbody>
{% for j in joints %}
<tr><td>{{ j.name }}</td><td>{{ j.type }}</td><td class="n">{{ j.range }}</td><td class="n">{{ j.vel }}</td>
<td class="n">{{ j.acc }}</td><td class="n">{{ j.torque }}</td><td class="n">{{ j.gear }}</td>
<td class="n">{{ j.friction }}</td><td>{{ j.other }}</td></tr>
{% endfor %}
</tbody></table></div>
<p class="caption">Angles in degrees, lengths in m; limits as in the robot file (\u2013 = none given).</p>
{% if loops %}
<h3>Closed chain</h3>
<p>The joints above are the driven ones; the loops below move the passive joints (docs/model.md, "Closed chains"):
the regressor is the tree's projected through the loop-closure Jacobian.</p>
<div class="table-wrap"><table>
<thead><tr><th>loop</th><th>kind</th><th>passive joints</th><th>closing pair</th><th>passive positions</th></tr></thead>
<tbody>
{% for l in loops %}
<tr><td>{{ l.name }}</td><td>{{ l.kind }}</td><td>{{ l.passive }}</td><td>{{ l.close }}</td>
<td>{{ l.relation }}</td></tr>
{% endfor %}
</tbody></table></div>
{{ loop_figure }}
{% endif %}
"""

    def context(self, data) -> dict:
        robot = data.robot
        record = data.record
        model = robot.model
        structural = count_by(s.structural_class for s in record.standard_parameters)
        classes = count_by(p.identifiability for p in record.base_parameters)
        base = robot.base_parameters()
        est = record.estimation
        return {
            "name": robot.name,
            "source": model.source or "(in memory)",
            "kinematics": {"dh": "standard DH", "mdh": "modified DH (Craig)", "urdf": "URDF",
                           "mjcf": "MJCF (MuJoCo)"}.get(
                model.kinematics, model.kinematics
            ),
            "gravity": ", ".join(num(g) for g in model.gravity),
            "dof": robot.dof,
            "terms": ", ".join(robot.terms),
            "n_standard": len(robot.parameter_names),
            "structural": ", ".join(f"{n} {c}" for c, n in sorted(structural.items())),
            "n_base": len(record.base_parameters),
            "grouping": "exact rational grouping" if base.exact else "floating-point grouping coefficients",
            "classes": ", ".join(f"{n} {c}" for c, n in sorted(classes.items())),
            "method": record.method,
            "condition": f"{num(est.condition_number_scaled)} (column-scaled), {num(est.condition_number)} (raw)"
            if est.condition_number is not None
            else None,
            "joints": [_joint_row(joint) for joint in model.joints],
            **loop_context(robot, None if data.trajectory is None else data.trajectory.trajectory.center),
        }


def _joint_row(joint) -> dict:
    rev = joint.revolute
    lim = joint.limits
    unit = "deg" if rev else "m"
    rng = "\u2013"
    if lim.position is not None:
        lo, hi = (_deg_or_si(v, rev) for v in lim.position)
        rng = f"{num(lo)} \u2026 {num(hi)} {unit}"
    vel = _deg_or_si(lim.velocity, rev)
    acc = _deg_or_si(lim.acceleration, rev)
    other = []
    if joint.drive is not None and joint.drive.rotor_inertia:
        other.append(f"reflected rotor inertia {num(joint.drive.reflected_inertia)}")
    if joint.compensator is not None:
        other.append(f"{joint.compensator.type} compensator")
    if joint.elasticity is not None:
        other.append(f"elastic (k = {num(joint.elasticity.stiffness)})")
    f = joint.friction
    return {
        "name": joint.name,
        "type": joint.type,
        "range": rng,
        "vel": "\u2013" if vel is None else f"{num(vel)} {unit}/s",
        "acc": "\u2013" if acc is None else f"{num(acc)} {unit}/s\u00b2",
        "torque": "\u2013" if lim.torque is None else f"{num(lim.torque)} {'N m' if rev else 'N'}",
        "gear": "\u2013" if joint.drive is None else num(joint.drive.gear_ratio),
        "friction": f"{num(f.viscous)} / {num(f.coulomb)} / {num(f.offset)}",
        "other": "; ".join(other),
    }
