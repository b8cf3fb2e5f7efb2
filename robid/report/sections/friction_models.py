"""Friction models: the per-joint selection among linear and nonlinear friction (Stribeck, Gaz et al.'s sigmoid),
every candidate's figures, the parameters of the chosen models fitted together, and each joint's chosen curve
against the data (record section ``friction_models``, robid.identification.friction_selection). Shown only when
the identification compared friction models."""

from __future__ import annotations

import numpy as np

from robid.report import _figures as F
from robid.report._compute import joint_units
from robid.report.section import Section, num


def _linear_curve(data, joint: str, v: np.ndarray) -> np.ndarray | None:
    """fv v + fc sign(v) + f0 of the record's (linear) estimate, where those stand alone; else None."""
    names, values = data.names, data.values
    terms = [(f"fv_{joint}", v), (f"fc_{joint}", np.sign(v)), (f"f0_{joint}", np.ones_like(v))]
    if f"fv_{joint}" not in names and f"fc_{joint}" not in names:
        return None
    return sum(values[names.index(n)] * col for n, col in terms if n in names)


def _figures(data, fm) -> list:
    units = {j: u for j, u in zip(data.robot.joint_names, joint_units(data.robot), strict=True)}
    curves = [c for c in fm.curves if c.velocity]
    figs = []
    for group in F.joint_groups(len(curves)):
        items = [curves[i] for i in group]
        with F.style():
            fig = F.new_figure(3.7)
            axes = np.atleast_1d(fig.subplots(1, 3, squeeze=False)).ravel()
            F.margins(fig, cols=3, wspace_in=0.8, top=0.65)
            for ax, c in zip(axes, items, strict=False):
                u = units[c.joint]
                v = np.asarray(c.velocity)
                if c.data_velocity:
                    step = max(1, -(-len(c.data_velocity) // F.MAX_POINTS))  # at most MAX_POINTS, from every run
                    ax.scatter(np.asarray(c.data_velocity)[::step] * u.scale, np.asarray(c.data_torque)[::step], s=4,
                               color=F.DATA, alpha=0.35, lw=0, label="data-implied", rasterized=True)
                linear = _linear_curve(data, c.joint, v)
                if linear is not None and c.model != "linear":
                    ax.plot(v * u.scale, linear, color=F.NOMINAL, lw=1.2, ls="--", label="linear (the record's)")
                ax.plot(v * u.scale, c.torque, color=F.IDENTIFIED, lw=1.6, label="chosen model")
                ax.set_xlabel(f"velocity [{u.velocity}]")
                ax.set_ylabel(f"friction [{u.torque}]")
                ax.set_title(f"{c.joint}: {c.model}", loc="left")
            for ax in axes[len(items):]:
                ax.set_visible(False)
            richest = next((i for i, c in enumerate(items) if c.model != "linear"), 0)
            F.legend_on_top(fig, axes[richest])
            label = ", ".join(c.joint for c in items)
            figs.append(F.figure_html(
                fig, f"friction models, joints {label}",
                f"Friction torque of the chosen model over the identification runs' velocity range (joints {label}), "
                "the record's linear friction where another model was chosen, and the torque the data imply: the "
                "measured torque minus every other term of the joint fit, on the rows identification used."))
    return figs


#: units of the friction parameters by prefix, revolute joint (prismatic: N for N m, m for rad)
_UNITS = {"fv": "N m s/rad", "fc": "N m", "fs": "N m", "f0": "N m", "vs": "rad/s", "fsa": "N m", "fss": "s/rad",
          "fso": "rad/s", "frc": "N m", "frs": "N m"}


def _unit(name: str, revolute: dict) -> str:
    prefix, _, joint = name.partition("_")
    unit = _UNITS.get(prefix.rstrip("0123456789"), "")
    if unit and not revolute.get(joint, True):
        unit = unit.replace("N m", "N").replace("rad", "m")
    return unit


class FrictionModelsSection(Section):
    title = "Friction models"
    anchor = "friction-models"
    template = """
<p class="note">Per joint, each candidate friction model was fitted with the other joints linear, together with
every base parameter (variable projection; docs/estimation.md "Nonlinear friction"), and chosen by
{% if criterion == "validation" %}the residual RMS on the validation runs (a model with more parameters only when
it lowers it by more than {{ tolerance }} %){% else %}BIC (no validation run){% endif %}. k is the number of the
joint's friction parameters. The base parameters, torque fits and predictions elsewhere in this report are the
linear model's.</p>
<div class="table-wrap"><table>
<thead><tr><th>joint</th><th>model</th><th>k</th><th>RMS [N m]</th><th>AIC</th><th>BIC</th>
<th>held-out RMS [N m]</th><th>chosen</th></tr></thead>
<tbody>
{% for r in rows %}
<tr{% if r.first %} class="group"{% endif %}><td>{% if r.first %}{{ r.joint }}{% endif %}</td><td>{{ r.model }}</td>
<td class="n">{{ r.k }}</td><td class="n">{{ r.rms }}</td><td class="n">{{ r.aic }}</td><td class="n">{{ r.bic }}</td>
<td class="n">{{ r.validation }}</td>
<td>{{ "\u2713" if r.chosen else "" }}{{ "" if r.converged else " (not converged)" }}</td></tr>
{% endfor %}
</tbody></table></div>
<p>Parameters of the chosen models, fitted together (standard deviations from the Jacobian at the optimum;
nonlinear: vs, sigmoid slopes and offsets):</p>
<div class="table-wrap"><table>
<thead><tr><th>parameter</th><th>value</th><th>std</th><th>unit</th><th>enters</th></tr></thead>
<tbody>
{% for p in parameters %}<tr><td>{{ p.name }}</td><td class="n">{{ p.value }}</td><td class="n">{{ p.std }}</td>
<td>{{ p.unit }}</td><td>{{ "nonlinearly" if p.nonlinear else "linearly" }}</td></tr>
{% endfor %}
</tbody></table></div>
{% for f in figures %}{{ f }}{% endfor %}
{% for n in notes %}<p class="note">{{ n }}</p>{% endfor %}
"""

    def applies(self, data) -> bool:
        return data.record.friction_models is not None

    def context(self, data) -> dict:
        fm = data.record.friction_models
        rows, last = [], None
        for c in fm.candidates:
            rows.append({"joint": c.joint, "first": c.joint != last, "model": c.model, "k": c.parameters,
                         "rms": num(c.rms, 4), "aic": num(c.aic, 6), "bic": num(c.bic, 6),
                         "validation": num(c.validation_rms, 4), "chosen": c.chosen, "converged": c.converged})
            last = c.joint
        revolute = {j.name: j.revolute for j in data.robot.model.joints}
        parameters = [{"name": p.name, "value": num(p.value, 5), "std": num(p.std, 2), "nonlinear": p.nonlinear,
                       "unit": _unit(p.name, revolute)} for p in fm.parameters]
        return {"criterion": fm.criterion, "tolerance": num(100 * fm.tolerance, 2), "rows": rows,
                "parameters": parameters, "figures": _figures(data, fm), "notes": list(fm.notes)}
