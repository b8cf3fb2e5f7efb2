"""Predicted versus measured torque per joint on every identification and validation run: the prediction with
its 95 % band (parameter uncertainty plus the residual noise of each joint), the residual, and the residual
spectrum, all as identification recorded them (robid.identification.recording)."""

from __future__ import annotations

import numpy as np

from robid.estimation.metrics import K95
from robid.report import _figures as F
from robid.report._compute import joint_units
from robid.report.section import Section, num


def _run_arrays(data, run) -> dict:
    """The run's display series as arrays (rows the data selection left out are NaN: not drawn)."""
    d = run.display
    mask = np.asarray(d.used, dtype=bool).T
    noise = np.array([np.nan if s is None else s for s in run.noise.tau_std_processed], dtype=float)
    std_total = np.sqrt(d.array("tau_std_model") ** 2 + noise[None, :] ** 2)

    def used(x):
        return np.where(mask, x, np.nan)

    predicted = d.array("tau_predicted")
    measured = d.array("tau_measured")
    t, _ = run_time(run)
    return {
        "t": t,
        "measured": used(measured),
        "predicted": used(predicted),
        "lo": used(predicted - K95 * std_total),
        "hi": used(predicted + K95 * std_total),
        "residual": used(measured - predicted),
    }


def _robust_limits(residual: np.ndarray, half_band: np.ndarray) -> tuple[float, float]:
    """Symmetric limits showing the band and 99.5 % of the residual: a few spikes (e.g. at velocity reversals)
    must not flatten the rest; the largest residual is in the table."""
    r = residual[np.isfinite(residual)]
    spread = float(np.percentile(np.abs(r), 99.5)) if r.size else 0.0
    hb = half_band[np.isfinite(half_band)]
    top = 1.25 * max(spread, float(np.max(hb, initial=0.0)), 1e-12)
    return -top, top


def _time_figures(data, run, a) -> list:
    names = data.robot.joint_names
    units = joint_units(data.robot)
    t = a["t"]
    _, xlabel = run_time(run)
    figs = []
    for group in F.joint_groups(data.robot.dof):
        with F.style():
            height = 3.0 * len(group) + 0.7
            fig = F.new_figure(height)
            top, bottom, gap = 0.6, 0.55, 0.45
            cell = (height - top - bottom - gap * (len(group) - 1)) / len(group)
            outer = fig.add_gridspec(
                len(group),
                1,
                left=0.85 / F.WIDTH_IN,
                right=1 - 0.15 / F.WIDTH_IN,
                top=1 - top / height,
                bottom=bottom / height,
                hspace=gap / cell,
            )
            first = None
            for row, j in enumerate(group):
                inner = outer[row].subgridspec(2, 1, height_ratios=[2.2, 1.0], hspace=0.08)
                ax = fig.add_subplot(inner[0], sharex=first)
                first = first or ax
                axr = fig.add_subplot(inner[1], sharex=first)
                ax.fill_between(
                    t, a["lo"][:, j], a["hi"][:, j], color=F.BAND, alpha=0.55, lw=0, label="95 % prediction band"
                )
                ax.plot(t, a["measured"][:, j], color=F.MEASURED, lw=1.0, label="measured")
                ax.plot(t, a["predicted"][:, j], color=F.PREDICTED, lw=1.1, ls="--", label="predicted")
                ax.set_ylabel(f"{names[j]} [{units[j].torque}]")
                m = run.fit.per_joint[j]
                ax.set_title(
                    f"{names[j]}: NRMSE {num(m.nrmse_percent, 3)} %, RMS error {num(m.rms, 3)} "
                    f"{units[j].torque}, {num(m.inside_band_percent, 3)} % of samples inside the band",
                    loc="left",
                )
                ax.tick_params(labelbottom=False)
                axr.fill_between(
                    t,
                    (a["lo"] - a["predicted"])[:, j],
                    (a["hi"] - a["predicted"])[:, j],
                    color=F.BAND,
                    alpha=0.55,
                    lw=0,
                )
                axr.plot(t, a["residual"][:, j], color=F.DATA, lw=0.8)
                axr.axhline(0.0, color=F.MEASURED, lw=0.6)
                axr.set_ylim(*_robust_limits(a["residual"][:, j], (a["hi"] - a["predicted"])[:, j]))
                axr.set_ylabel("residual")
                if row == 0:
                    F.legend_on_top(fig, ax)
                if row < len(group) - 1:
                    axr.tick_params(labelbottom=False)
            axr.set_xlabel(xlabel)
            label = ", ".join(names[j] for j in group)
            figs.append(
                F.figure_html(
                    fig,
                    f"{run.label}: predicted and measured torque, joints {label}",
                    f"{run.label}, joints {label}: measured (black) and predicted (red dashed) torque with the 95 % "
                    "prediction band; below each, the residual measured \u2212 predicted with the same band "
                    "(its axis shows 99.5 % of the samples; the largest residual is in the table). Rows the data "
                    "selection left out are not drawn.",
                )
            )
    return figs


def _spectrum_figure(data, run):
    names = data.robot.joint_names
    units = joint_units(data.robot)
    dof = data.robot.dof
    sp = run.spectrum
    f = np.asarray(sp.frequency_hz)
    spec = np.asarray(sp.residual, dtype=float).T
    meas = np.asarray(sp.measured, dtype=float).T
    # bins the processing removed are exactly zero in both spectra: leave them out of a log plot
    floor = 1e-12 * max(float(np.max(meas, initial=0.0)), 1e-300)
    spec = np.where(spec > floor, spec, np.nan)
    meas = np.where(meas > floor, meas, np.nan)
    excited = None
    traj = data.trajectory.trajectory if data.trajectory is not None else None
    # shade the excited band only for a run of that trajectory (a validation run may have its own period)
    if traj is not None and run.periodic and abs(run.period_s - traj.period) <= 1e-3 * traj.period:
        excited = (0.8 / traj.period, (traj.harmonics + 0.2) / traj.period)
    ncols = min(3, dof)
    nrows = -(-dof // ncols)
    with F.style():
        fig = F.new_figure(2.5 * nrows + 0.9)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        F.margins(fig, rows=nrows, cols=ncols, hspace_in=0.75, wspace_in=0.85, top=0.6, bottom=0.6)
        for j in range(dof):
            ax = axes[j]
            if excited is not None:
                ax.axvspan(*excited, color="#ffd166", alpha=0.35, lw=0, label="excited harmonics")
            ax.loglog(f, meas[:, j], color=F.NOMINAL, lw=0.8, alpha=0.7, label="measured torque")
            ax.loglog(f, spec[:, j], color=F.PREDICTED, lw=0.9, label="residual")
            top = np.nanmax(meas[:, j]) if np.any(np.isfinite(meas[:, j])) else 1.0
            ax.set_ylim(top * 1e-5, top * 3)
            F.light_log_axis(ax.xaxis)
            F.light_log_axis(ax.yaxis)
            ax.set_title(names[j], loc="left")
            ax.set_ylabel(f"amplitude [{units[j].torque}]")
            if j >= dof - ncols:
                ax.set_xlabel("frequency [Hz]")
        for ax in axes[dof:]:
            ax.set_visible(False)
        F.legend_on_top(fig, axes[0])
        return F.figure_html(
            fig,
            f"{run.label}: residual spectrum",
            f"{run.label}: amplitude spectrum of the residual (red) against that of the measured torque (blue), "
            "at the frequencies the processing kept. A residual that stands out at the excited harmonics points at "
            "unmodelled dynamics; a complete model leaves a flat residual at the noise level.",
        )


def averaged(run) -> bool:
    """Whether the run's series is one period averaged over several (robid.signals periodic path); every other run
    (one period, whole periods sample by sample, a rest-to-rest segment, a non-periodic record) is its own samples."""
    return run.mode == "periodic" and run.n_periods > 1


def run_time(run) -> tuple[np.ndarray, str]:
    """The x axis of a run's series and its label, by what the run is: the time in the period (from 0) for a
    period averaged over several; the record's own time for every run that was not averaged, so that a sample
    can be found in the file."""
    d = run.display
    t = np.asarray(d.t, dtype=float)  # from the first processed sample
    if averaged(run):
        return t, f"time in the period, averaged over {run.n_periods} periods [s]"
    t = t + float(d.t0)
    if run.mode == "periodic-samples":
        return t, f"time in the record: {run.n_periods} whole periods, every sample (not averaged) [s]"
    if run.mode == "periodic":
        return t, "time in the record: one period (not averaged) [s]"
    if run.mode == "rest-to-rest":
        return t, "time in the record: one rest-to-rest run (not averaged) [s]"
    return t, "time in the record (not averaged) [s]"


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
<p class="note">Prediction = filtered base regressor of the run \u00d7 the reported values. The 95 % band is
\u00b1{{ k }} \u00d7 sqrt(parameter variance along the regressor row + \u03c3\u00b2 of the joint), \u03c3 the
noise standard deviation of the run's processed torque (the "noise std" column, estimated by the signal stage;
for comparison, the residual standard deviation of the identification fit: {{ sigma }}). About 95 % of the used
samples of a run fall inside it when the model is right; far fewer means the model, or the noise estimate, is
wrong for that run.</p>
{% for r in runs %}
<h3>{{ r.label }}</h3>
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
            a = _run_arrays(data, run)
            figures = _time_figures(data, run, a)
            if run.spectrum is not None:
                figures.append(_spectrum_figure(data, run))
            runs.append({"label": run.label, "table": _table(data, run), "figures": figures})
        sigma = ", ".join(f"{n} {num(s, 3)}" for n, s in zip(data.robot.joint_names, data.sigma, strict=True))
        return {"runs": runs, "k": num(K95), "sigma": sigma}
