"""Predicted versus measured torque per joint on every identification and validation run: the prediction with
its 95 % band (robid.estimation.prediction_bands: parameter uncertainty plus the residual noise of each joint),
the residual, and the residual spectrum."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robid.report import _figures as F
from robid.report._compute import amplitude_spectrum, band_coverage, joint_units
from robid.report._html import Section, num

K95 = 1.96


def _run_arrays(data, run) -> dict:
    from robid.estimation import prediction_bands

    d = run.dataset
    p = d.processed
    bands = prediction_bands(d.W, values=data.values, covariance=data.covariance, sigma=data.sigma)
    lo, hi = bands.interval(K95, total=True)
    mask = np.asarray(p.keep, dtype=bool)
    coverage = band_coverage(d.tau, lo, hi, mask)

    def used(x):  # rows the data selection left out have a zeroed regressor: not drawn
        return np.where(mask, x, np.nan)

    return {
        "t": np.asarray(p.t) - float(p.t[0]),
        "measured": used(d.tau),
        "predicted": used(bands.mean),
        "lo": used(lo),
        "hi": used(hi),
        "std_model": bands.std_model,
        "residual": used(d.tau - bands.mean),
        "mask": mask,
        "coverage": coverage,
        "periodic": p.mode in ("periodic", "rest-to-rest") and p.period is not None,
        "rate": p.sample_rate,
        "noise": np.asarray(p.noise.tau_std_processed, dtype=float),
        "processed": p,
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
    sl = F.decimate_for_display(t.size)
    xlabel = "time in the averaged period [s]" if a["periodic"] else "time from the start of the used record [s]"
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
                    t[sl], a["lo"][sl, j], a["hi"][sl, j], color=F.BAND, alpha=0.55, lw=0, label="95 % prediction band"
                )
                ax.plot(t[sl], a["measured"][sl, j], color=F.MEASURED, lw=1.0, label="measured")
                ax.plot(t[sl], a["predicted"][sl, j], color=F.PREDICTED, lw=1.1, ls="--", label="predicted")
                ax.set_ylabel(f"{names[j]} [{units[j].torque}]")
                m = run.metrics["per_joint"][j] if run.metrics else {}
                ax.set_title(
                    f"{names[j]}: NRMSE {num(m.get('nrmse_percent'), 3)} %, RMS error {num(m.get('rms'), 3)} "
                    f"{units[j].torque}, {num(a['coverage'][j], 3)} % of samples inside the band",
                    loc="left",
                )
                ax.tick_params(labelbottom=False)
                axr.fill_between(
                    t[sl],
                    (a["lo"] - a["predicted"])[sl, j],
                    (a["hi"] - a["predicted"])[sl, j],
                    color=F.BAND,
                    alpha=0.55,
                    lw=0,
                )
                axr.plot(t[sl], a["residual"][sl, j], color=F.DATA, lw=0.8)
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


def _spectrum_figure(data, run, a):
    names = data.robot.joint_names
    units = joint_units(data.robot)
    dof = data.robot.dof
    freq, spec = amplitude_spectrum(np.nan_to_num(a["residual"]), a["rate"], a["periodic"])
    _, meas = amplitude_spectrum(np.nan_to_num(a["measured"]), a["rate"], a["periodic"])
    p = a["processed"]
    if p.harmonics and p.period:
        fmax = 1.15 * max(p.harmonics) / p.period
    elif p.cutoff_hz:
        fmax = 2.0 * p.cutoff_hz
    else:
        fmax = freq[-1]
    keep = (freq > 0) & (freq <= fmax)
    f = freq[keep]
    # bins the processing removed are exactly zero in both spectra: leave them out of a log plot
    floor = 1e-12 * max(float(np.max(meas[keep], initial=0.0)), 1e-300)
    spec = np.where(spec[keep] > floor, spec[keep], np.nan)
    meas = np.where(meas[keep] > floor, meas[keep], np.nan)
    excited = None
    traj = data.trajectory.trajectory if data.trajectory is not None else None
    # shade the excited band only for a run of that trajectory (a validation run may have its own period)
    if traj is not None and a["periodic"] and abs(p.period - traj.period) <= 1e-3 * traj.period:
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


def _table(data, run, a) -> list[dict]:
    rows = []
    units = joint_units(data.robot)
    for j, name in enumerate(data.robot.joint_names):
        m = run.metrics["per_joint"][j] if run.metrics else {}
        mask = a["mask"][:, j]
        meas_rms = float(np.sqrt(np.mean(np.square(a["measured"][mask, j])))) if mask.any() else None
        noise = a["noise"][j] if j < a["noise"].size else None
        rms = m.get("rms")
        rows.append(
            {
                "joint": name,
                "unit": units[j].torque,
                "measured_rms": meas_rms,
                "rms": rms,
                "nrmse": m.get("nrmse_percent"),
                "max": m.get("max_error"),
                "coverage": float(a["coverage"][j]),
                "model_std": float(np.mean(a["std_model"][mask, j])) if mask.any() else None,
                "noise": noise,
                "ratio": rms / noise if rms is not None and noise else None,
            }
        )
    return rows


class TorqueSection(Section):
    title = "Predicted versus measured torque"
    anchor = "torque"
    template = """
<p class="note">Prediction = filtered base regressor of the run \u00d7 the reported values. The 95 % band is
\u00b1{{ k }} \u00d7 sqrt(parameter variance along the regressor row + \u03c3\u00b2 of the joint), \u03c3 the
residual standard deviation per joint of the identification fit ({{ sigma }}). About 95 % of the samples of a run
should fall inside it; far fewer means the model or the noise level is wrong for that run.</p>
{% for r in runs %}
<h3>{{ r.label }}</h3>
{% if r.missing %}<p class="note">No plots: {{ r.missing }}.</p>{% else %}
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
{% endif %}
{% endfor %}
{% if not runs %}<p class="note">No measurement data available for plots.</p>{% endif %}
"""

    def context(self, data) -> dict:
        runs = []
        for run in data.runs:
            if run.dataset is None:
                runs.append({"label": run.label, "missing": run.missing or "data not available"})
                continue
            a = _run_arrays(data, run)
            figures = _time_figures(data, run, a)
            figures.append(_spectrum_figure(data, run, a))
            runs.append(
                {
                    "label": f"{run.role}: {Path(run.source).name}",
                    "missing": None,
                    "table": _table(data, run, a),
                    "figures": figures,
                }
            )
        sigma = ", ".join(f"{n} {num(s, 3)}" for n, s in zip(data.robot.joint_names, data.sigma, strict=False))
        stored = np.any(np.asarray(data.sigma) > 0)
        return {"runs": runs, "k": num(K95), "sigma": sigma if stored else "not stored in the result: taken as 0"}
