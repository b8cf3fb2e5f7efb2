"""Friction curves per joint and the gravity compensator's torque over its joint angle: identified (with a 95 %
band from the parameter covariance), nominal (robot file), any reference (e.g. truth), and what the data imply
(the measured torque minus every other identified term)."""

from __future__ import annotations

import numpy as np

from robid.estimation.metrics import K95
from robid.model.terms import standalone_parameters
from robid.report import _figures as F
from robid.report._compute import compensator_columns, compensator_curve, friction_curve, joint_units
from robid.report.section import Section

GRID = 401
MAX_SCATTER = F.MAX_POINTS  # points of a scatter, every run contributing
REF_STYLES = ("#3a7d44", "#7b2cbf", "#e76f51")


def _range(data, j: int, which: str):
    """Range of q (which='q') or qd of joint j in the identification data, else the trajectory, else limits."""
    runs = data.identification_runs
    if runs:
        ranges = [r.ranges[j] for r in runs]
        if which == "q":
            return min(r.q_min for r in ranges), max(r.q_max for r in ranges), "identification data"
        peak = max(r.qd_peak for r in ranges)
        return -peak, peak, "identification data"
    if data.trajectory is not None:
        traj = data.trajectory.trajectory
        t = np.linspace(0.0, traj.period, 2048, endpoint=False)
        x = traj.derivative(t, 0 if which == "q" else 1)[:, j]
        return float(np.min(x)), float(np.max(x)), "trajectory"
    lim = data.robot.model.joints[j].limits
    if which == "q" and lim.position is not None:
        return float(lim.position[0]), float(lim.position[1]), "position limits"
    if which == "qd" and lim.velocity is not None:
        return -float(lim.velocity), float(lim.velocity), "velocity limit"
    return None


def _grid(rng, pad: float) -> tuple[np.ndarray, str]:
    """(GRID points over the range ``rng`` = (lo, hi, source) widened by ``pad`` of its span, its source)."""
    lo, hi, source = rng
    span = max(hi - lo, 1e-9)
    return np.linspace(lo - pad * span, hi + pad * span, GRID), source


def _implied(data, j: int, part: str, which: str, runs=None):
    """(x, torque implied by the data for the terms of ``part`` -- ``tau_friction`` or ``tau_compensator``) over
    the display series of ``runs`` (default: the identification runs): measured torque minus every other
    identified term, decimated; None when no run has the joint's term."""
    xs, ys = [], []
    for run in data.identification_runs if runs is None else runs:
        d = run.display
        own = getattr(d, part)[j]
        if own is None:
            continue
        keep = np.asarray(d.used[j], dtype=bool)
        implied = np.asarray(d.tau_measured[j]) - np.asarray(d.tau_predicted[j]) + np.asarray(own)
        ys.append(implied[keep])
        xs.append(np.asarray(getattr(d, which)[j])[keep])
    if not xs:
        return None
    x, y = np.concatenate(xs), np.concatenate(ys)
    step = max(1, -(-x.size // MAX_SCATTER))
    return x[::step], y[::step]


def _plot_curve(ax, curve, xscale, implied, xlabel, ylabel, title, minus=None, held_out=None):
    """Identified curve with its band, nominal, references and the data-implied scatter; with ``minus`` (an
    array on the curve's grid) every curve is drawn relative to it (a deviation plot). ``held_out``: the same
    data-implied torque of the validation runs, drawn in its own colour (it did not shape the curve; the vertical
    limits stay those of the identification data, so held-out outliers are clipped, not squashing the curves)."""
    x = curve.x * xscale
    base = np.zeros_like(curve.identified) if minus is None else minus

    def scatter(points, color, label):
        """The points (x, torque) less the deviation plot's reference; returns that reference at the points."""
        at = 0.0 if minus is None else np.interp(points[0], curve.x, minus)
        ax.scatter(points[0] * xscale, points[1] - at, s=4, color=color, alpha=0.35, lw=0, label=label, rasterized=True)
        return at

    if held_out is not None:
        scatter(held_out, F.HELD_OUT, "data-implied, validation runs")
    shift = 0.0 if implied is None else scatter(implied, F.DATA, "data-implied")
    ax.fill_between(
        x,
        curve.identified - K95 * curve.std - base,
        curve.identified + K95 * curve.std - base,
        color=F.BAND,
        alpha=0.6,
        lw=0,
        label="identified, 95 % band",
    )
    ax.plot(x, curve.identified - base, color=F.IDENTIFIED, lw=1.6, label="identified")
    ax.plot(x, curve.nominal - base, color=F.NOMINAL, lw=1.3, ls="--", label="nominal (robot file)")
    for (label, y), color in zip(curve.references.items(), REF_STYLES, strict=False):
        ax.plot(x, y - base, color=color, lw=1.2, ls=":", label=label)
    if implied is not None and implied[1].size > 20:
        # a few outliers (e.g. at velocity reversals) must not squash the curves: robust vertical limits
        curves = [curve.identified - base, curve.nominal - base, *[y - base for y in curve.references.values()]]
        lo = min(np.percentile(implied[1] - shift, 0.5), *(float(np.min(c)) for c in curves))
        hi = max(np.percentile(implied[1] - shift, 99.5), *(float(np.max(c)) for c in curves))
        pad = 0.08 * max(hi - lo, 1e-12)
        ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")


def _friction_joints(data) -> list[tuple[int, list[str]]]:
    """(joint index, friction prefixes) of the joints whose fv or fc stands alone as a base parameter."""
    names = data.names
    expressions = [p.expression for p in data.record.base_parameters]
    out = []
    for j, joint in enumerate(data.robot.joint_names):
        idx = standalone_parameters(names, expressions, joint, "friction")
        prefixes = [names[k].split("_", 1)[0] for k in idx]
        if any(p in prefixes for p in ("fv", "fc")):
            out.append((j, prefixes))
    return out


def _curve_label(data, j: int, prefixes) -> str:
    """What the curve of joint ``j`` is: the linear terms, or the adopted nonlinear model."""
    friction = data.model.friction
    if friction is not None and (friction.requests[j].model != "linear" or friction.requests[j].ripple):
        return f"{friction.requests[j].label} model (identified)"
    return " + ".join({"fv": "fv\u00b7qd", "fc": "fc\u00b7sign(qd)", "f0": "f0"}[p] for p in prefixes)


def _friction_figures(data, joints) -> tuple[list, list[str]]:
    units = joint_units(data.robot)
    names = data.robot.joint_names
    figs, skipped = [], []
    plotted = []
    for j, prefixes in joints:
        rng = _range(data, j, "qd")
        if rng is None:
            skipped.append(f"{names[j]}: no velocity range known")
            continue
        plotted.append(_joint_curve(data, j, prefixes, rng))
    for group in F.joint_groups(len(plotted)):
        items = [plotted[i] for i in group]
        with F.style():
            fig = F.new_figure(3.7)
            axes = np.atleast_1d(fig.subplots(1, 3, squeeze=False)).ravel()
            F.margins(fig, cols=3, wspace_in=0.8, top=0.65)
            for ax, (j, curve, implied, prefixes, _, held_out) in zip(axes, items, strict=False):
                u = units[j]
                _plot_curve(
                    ax,
                    curve,
                    u.scale,
                    implied,
                    f"velocity [{u.velocity}]",
                    f"friction [{u.torque}]",
                    f"{names[j]}: " + _curve_label(data, j, prefixes),
                    held_out=held_out,
                )
            for ax in axes[len(items) :]:
                ax.set_visible(False)
            F.legend_on_top(fig, axes[0])
            label = ", ".join(names[it[0]] for it in items)
            figs.append(
                F.figure_html(
                    fig,
                    f"friction curves, joints {label}",
                    f"Friction torque over the velocity range of the {items[0][4]} (joints {label})."
                    + (
                        " Data-implied: the measured torque minus every other identified term (filtered like the "
                        "torque, so the Coulomb step appears smoothed)."
                        if items[0][2] is not None
                        else ""
                    )
                    + (
                        " Validation runs (orange) did not shape the estimate: where they follow the identified "
                        "curve, the friction model holds on motion it was not fitted to (e.g. single-joint runs)."
                        if any(it[5] is not None for it in items)
                        else ""
                    ),
                )
            )
    return figs, skipped



def _joint_curve(data, j: int, prefixes, rng) -> tuple:
    """(joint, friction curve, data-implied points, prefixes, range source, validation runs' points) of joint ``j``
    over its velocity range ``rng`` (widened to the validation runs' speeds); the adopted nonlinear model's curve
    when it has one."""
    names = data.robot.joint_names
    if data.validation_runs and data.identification_runs:
        # the curve also spans the validation runs' speeds (e.g. single-joint runs faster than the excitation)
        peak = max(max(r.ranges[j].qd_peak for r in data.validation_runs), rng[1])
        rng = (-peak, peak, rng[2] + " and validation runs" if peak > rng[1] else rng[2])
    grid, source = _grid(rng, 0.02)
    # both sides of zero velocity, so that the Coulomb step is drawn as a step
    grid = np.sort(np.concatenate([grid, [-1e-12, 1e-12]])) if grid[0] < 0 < grid[-1] else grid
    curve = friction_curve(
        grid, prefixes, names[j], data.names, data.values, data.covariance, data.nominal, data.references
    )
    model = data.model
    if model.friction is not None and (model.friction.requests[j].model != "linear"
                                       or model.friction.requests[j].ripple):
        import dataclasses

        torque, std = model.friction_curve(data.robot, j, grid)  # the adopted nonlinear model (identified)
        curve = dataclasses.replace(curve, identified=torque, std=std)
    held_out = _implied(data, j, "tau_friction", "qd", data.validation_runs) if data.validation_runs else None
    return j, curve, _implied(data, j, "tau_friction", "qd"), prefixes, source, held_out

def _compensator_figures(data) -> tuple[list, list[str]]:
    robot = data.robot
    units = joint_units(robot)
    names = robot.joint_names
    expressions = [p.expression for p in data.record.base_parameters]
    runs = data.identification_runs
    if runs:
        weights = np.array([r.samples for r in runs], dtype=float)
        q_ref = np.average([[x.q_mean for x in r.ranges] for r in runs], axis=0, weights=weights)
    else:
        q_ref = np.zeros(robot.dof)
    plotted, notes = [], []
    for j in range(robot.dof):
        grouped = [n for n in data.names if n.startswith("comp_") and n.endswith(f"_{names[j]}")]
        cols, base_idx = compensator_columns(robot, data.names, expressions, j)
        if grouped and len(base_idx) < len(grouped):
            notes.append(f"{names[j]}: compensator parameters grouped with others; curve not shown")
            continue
        if not cols:
            continue
        rng = _range(data, j, "q")
        if rng is None:
            notes.append(f"{names[j]}: no position range known")
            continue
        grid, source = _grid(rng, 0.03)
        curve = compensator_curve(robot, j, grid, q_ref, cols, base_idx, data.values, data.covariance, data.references)
        plotted.append((j, curve, _implied(data, j, "tau_compensator", "q"), source, [data.names[k] for k in base_idx]))
    figs = [_compensator_figure(names[j], units[j], curve, implied, source, pnames)
            for j, curve, implied, source, pnames in plotted]
    return figs, notes


def _compensator_figure(name: str, u, curve, implied, source: str, pnames: list[str]) -> str:
    """The compensator torque of one joint over its angle range (left), and minus the nominal curve (right)."""
    with F.style():
        fig = F.new_figure(3.9)
        ax, axd = fig.subplots(1, 2)
        F.margins(fig, cols=2, wspace_in=1.0, top=0.65)
        xlabel = f"{name} position [{u.position}]"
        _plot_curve(
            ax,
            curve,
            u.scale,
            implied,
            xlabel,
            f"compensator torque [{u.torque}]",
            f"{name}: {', '.join(pnames)}",
        )
        _plot_curve(
            axd,
            curve,
            u.scale,
            implied,
            xlabel,
            f"difference [{u.torque}]",
            f"{name}: relative to the nominal compensator",
            minus=curve.nominal,
        )
        F.legend_on_top(fig, ax)
        return F.figure_html(
            fig,
            f"compensator torque, joint {name}",
            f"Torque the gravity compensator adds on joint {name} over the angle range of the {source} "
            "(left), and the same curves minus the nominal one (right): the robot regressor's comp_* columns "
            "times the identified, nominal and reference values. Data-implied: measured torque minus every "
            "other identified term (it also carries the residual).",
        )


class FrictionSection(Section):
    title = "Friction and compensator"
    anchor = "friction"
    template = """
<h3>Friction</h3>
{% if friction %}
<p class="note">fv\u00b7qd + fc\u00b7sign(qd) + f0 for every joint whose friction parameters are base parameters on
their own (not grouped with others).</p>
{% for f in friction %}{{ f }}{% endfor %}
{% else %}<p class="note">No joint has un-grouped friction base parameters (fv_J, fc_J) in this model.</p>{% endif %}
{% for n in friction_notes %}<p class="note">{{ n }}</p>{% endfor %}
<h3>Gravity compensator</h3>
{% if compensator %}
{% for f in compensator %}{{ f }}{% endfor %}
{% else %}<p class="note">No compensator parameters (comp_*) in this model.</p>{% endif %}
{% for n in compensator_notes %}<p class="note">{{ n }}</p>{% endfor %}
"""

    def context(self, data) -> dict:
        friction, fnotes = _friction_figures(data, _friction_joints(data))
        compensator, cnotes = _compensator_figures(data)
        return {
            "friction": friction,
            "friction_notes": fnotes,
            "compensator": compensator,
            "compensator_notes": cnotes,
        }
