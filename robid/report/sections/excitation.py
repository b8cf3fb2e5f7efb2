"""Excitation: the designed trajectory over one period, its spectrum, a strip of poses and the swept
extent (excitation_preview.py), the design criterion and how much of each joint limit it uses. Without a
trajectory file: the limit usage of the measured (processed) motion."""

from __future__ import annotations

import math

import numpy as np

from robid.report import _figures as F
from robid.report._compute import (
    extremes_of_ranges,
    joint_units,
    level_of_usage,
    limit_usage,
    limits_arrays,
    usage_of_extremes,
)
from robid.report.section import Section, num
from robid.report.sections.excitation_preview import preview

SAMPLES_PER_PERIOD = 2048


def _usage_rows(data, rows, units) -> list[dict]:
    out = []
    for j, r in enumerate(rows):
        u = units[j]
        cells = []
        pos = r["position_pct"]
        cells.append(
            {
                "text": f"{num(r['q_min'] * u.scale)} \u2026 {num(r['q_max'] * u.scale)} {u.position}",
                "level": "",
            }
        )
        lim = (
            f"{num(r['lo'] * u.scale)} \u2026 {num(r['hi'] * u.scale)}"
            if math.isfinite(r["lo"]) and math.isfinite(r["hi"])
            else "\u2013"
        )
        cells.append({"text": lim, "level": ""})
        cells.append({"text": "\u2013" if pos is None else f"{num(pos, 3)} %", "level": level_of_usage(pos)})
        m = r["margin"]
        cells.append({"text": "\u2013" if m is None else f"{num(m * u.scale, 3)} {u.position}", "level": ""})
        for key, unit, scale in (
            ("velocity", u.velocity, u.scale),
            ("acceleration", u.acceleration, u.scale),
            ("torque", u.torque, 1.0),
        ):
            if f"{key}_max" not in r:
                continue
            p = r[f"{key}_pct"]
            text = f"{num(r[f'{key}_max'] * scale, 3)} {unit}"
            if p is not None:
                text += f" ({num(p, 3)} %)"
            cells.append({"text": text, "level": level_of_usage(p)})
        out.append({"joint": data.robot.joint_names[j], "cells": cells})
    return out


def _trajectory_figures(data, t, q, qd, qdd) -> list:
    units = joint_units(data.robot)
    names = data.robot.joint_names
    figs = []
    for group in F.joint_groups(data.robot.dof):
        with F.style():
            fig = F.new_figure(7.2)
            axes = fig.subplots(3, 1, sharex=True)
            F.margins(fig, top=0.4, hspace_in=0.2, rows=3)
            for j in group:
                u = units[j]
                for ax, x in zip(axes, (q, qd, qdd), strict=True):
                    ax.plot(t, x[:, j] * u.scale, lw=1.4, label=names[j])
            u = units[group[0]]
            axes[0].set_ylabel(f"position [{u.position}]")
            axes[1].set_ylabel(f"velocity [{u.velocity}]")
            axes[2].set_ylabel(f"acceleration [{u.acceleration}]")
            axes[2].set_xlabel("time in the period [s]")
            axes[0].legend(loc="upper right", ncols=len(group))
            axes[0].set_title(f"Excitation over one period: joints {', '.join(names[j] for j in group)}")
            label = ", ".join(names[j] for j in group)
            figs.append(F.figure_html(fig, f"trajectory of joints {label}"))
    return figs


def _spectrum_figure(data, traj):
    units = joint_units(data.robot)
    names = data.robot.joint_names
    H = traj.harmonics
    ls = np.arange(1, H + 1)
    amp = np.hypot(traj.a, traj.b) / (ls * traj.omega)  # position amplitude per harmonic (dof, H)
    with F.style():
        fig = F.new_figure(3.4)
        ax = fig.subplots()
        F.margins(fig, bottom=0.8)
        width = 0.8 / traj.dof
        for j in range(traj.dof):
            ax.bar(ls + (j - (traj.dof - 1) / 2) * width, amp[j] * units[j].scale, width, label=names[j])
        ax.set_xticks(ls, [f"{h}\n{h / traj.period:.3g} Hz" for h in ls])
        ax.set_xlabel("harmonic")
        ax.set_ylabel(f"position amplitude [{units[0].position}]")
        ax.set_title("Spectrum of the excitation: position amplitude per harmonic")
        ax.legend(ncols=min(traj.dof, 6), loc="upper right")
        return F.figure_html(
            fig,
            "excitation spectrum",
            f"Amplitude sqrt(a\u00b2 + b\u00b2)/(l \u03c9) of harmonic l; fundamental {1 / traj.period:.4g} Hz.",
        )


def _design_rows(tf, source) -> list[tuple[str, str]]:
    traj = tf.trajectory
    d = tf.design or {}
    crit = d.get("criteria") or {}
    rows = [
        ("file", source),
        ("period", f"{num(traj.period)} s (fundamental {num(1 / traj.period)} Hz)"),
        ("harmonics", f"{traj.harmonics} (highest {num(traj.harmonics / traj.period)} Hz)"),
        (
            "start and end",
            f"rest-to-rest, C{traj.continuity_order()} at start and end" if traj.rest_to_rest else "plain periodic",
        ),
        ("safety margin", f"{num(100 * tf.margin)} % of every limit"),
    ]
    if d.get("criterion"):
        rows.append(("criterion minimised", str(d["criterion"])))
    labels = {
        "cond": "condition number (column-scaled base regressor)",
        "cond_raw": "condition number (raw base regressor)",
        "logdet": "log det(W\u1d40W / rows)",
    }
    for key, label in labels.items():
        if crit.get(key) is not None:
            rows.append((label, num(crit[key])))
    if crit.get("rank") is not None:
        rows.append(("rank of the base regressor", f"{crit['rank']} of {crit.get('columns', '?')} columns"))
    if d.get("starts") is not None:
        rows.append(("optimiser", f"{d['starts']} start(s), seed {d.get('seed')}, best start {d.get('best_start')}"))
    check = d.get("check") or {}
    if check.get("summary"):
        rows.append(("limit check", str(check["summary"])))
    return rows


class ExcitationSection(Section):
    title = "Excitation"
    anchor = "excitation"
    template = """
{% if design %}
<div class="table-wrap"><table><tbody>
{% for k, v in design %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}
</tbody></table></div>
{% for f in figures %}{{ f }}{% endfor %}
{% elif usage %}
<p class="note">No trajectory file was given (<code>--trajectory TRAJ.json</code>): the designed motion, its
spectrum and criterion values are not shown. The limit usage below is that of the measured motion (processed
identification data, {{ usage_source }}).</p>
{% else %}
<p class="note">No trajectory file was given (<code>--trajectory TRAJ.json</code>) and no identification data
could be read: nothing to show about the excitation.</p>
{% endif %}
{% if usage %}
<h3>Limit usage per joint</h3>
<div class="table-wrap"><table>
<thead><tr><th>joint</th>{% for h in headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{% for r in usage %}
<tr><td>{{ r.joint }}</td>{% for c in r.cells %}<td class="n {{ c.level }}">{{ c.text }}</td>{% endfor %}</tr>
{% endfor %}
</tbody></table></div>
<p class="caption">{{ usage_caption }}</p>
{% endif %}
"""

    def context(self, data) -> dict:
        robot = data.robot
        units = joint_units(robot)
        tf = data.trajectory
        figures, design = [], []
        usage_source = ""
        tau = None
        torque_shown = False
        if tf is not None:
            traj = tf.trajectory
            t = np.linspace(0.0, traj.period, SAMPLES_PER_PERIOD, endpoint=False)
            q, qd, qdd = traj.evaluate(t, 2)
            limits = limits_arrays(robot, tf)
            if np.any(np.isfinite(limits["torque"])):
                tau = robot.inverse_dynamics(q, qd, qdd)
                torque_shown = True
            figures = _trajectory_figures(data, t, q, qd, qdd)
            figures.append(_spectrum_figure(data, traj))
            poses, extent = preview(data, tf)
            figures += poses
            design = _design_rows(tf, data.trajectory_source or "") + extent
            caption = (
                f"Sampled on {SAMPLES_PER_PERIOD} points per period against the hard limits stored in the trajectory"
                " file."
            )
            rows = limit_usage(q, qd, qdd, limits, tau)
        else:
            runs = data.identification_runs
            if not runs:
                return {
                    "design": [],
                    "figures": [],
                    "usage": [],
                    "headers": [],
                    "usage_source": "not available",
                    "usage_caption": "",
                }
            torque_shown = any(j.limits.torque for j in robot.model.joints)
            rows = usage_of_extremes(extremes_of_ranges([r.ranges for r in runs], torque_shown), limits_arrays(robot))
            usage_source = ", ".join(r.file for r in runs)
            caption = "Processed identification signals against the limits of the robot file."
        headers = _usage_headers(units, torque_shown, tf is not None)
        caption += (
            " Position usage = largest excursion from the middle of the range / half the range (100 % touches a"
            " limit); velocity, acceleration, torque usage = peak / limit. Above 95 %: inside the usual design"
            " margin; above 100 %: a limit is exceeded."
        )
        return {
            "design": design,
            "figures": figures,
            "usage": _usage_rows(data, rows, units),
            "headers": headers,
            "usage_source": usage_source,
            "usage_caption": caption,
        }


def _usage_headers(units, torque_shown: bool, designed: bool) -> list[str]:
    """The limit-usage table's column headers (the torque's from the nominal model for a design, else measured)."""
    headers = [
        "motion range",
        f"position limits [{units[0].position}]",
        "position usage",
        "margin to limit",
        "peak velocity (usage)",
        "peak acceleration (usage)",
    ]
    if torque_shown:
        headers.append("peak torque (usage)" + (", nominal model" if designed else ", measured"))
    return headers
