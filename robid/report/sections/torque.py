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
    measured = np.where(mask, d.tau, np.nan)
    predicted = bands.mean
    residual = np.where(mask, d.tau - predicted, np.nan)
    return {
        "t": np.asarray(p.t) - float(p.t[0]),
        "measured": measured,
        "predicted": predicted,
        "lo": lo,
        "hi": hi,
        "std_model": bands.std_model,
        "residual": residual,
        "mask": mask,
        "coverage": band_coverage(d.tau, lo, hi, mask),
        "periodic": p.mode in ("periodic", "rest-to-rest") and p.period is not None,
        "rate": p.sample_rate,
        "noise": np.asarray(p.noise.tau_std_processed, dtype=float),
        "processed": p,
    }


def _time_figures(data, run, a) -> list:
    names = data.robot.joint_names
    units = joint_units(data.robot)
    t = a["t"]
    sl = F.decimate_for_display(t.size)
    xlabel = "time in the averaged period [s]" if a["periodic"] else "time from the start of the used record [s]"
    figs = []
    for group in F.joint_groups(data.robot.dof):
        with F.style():
            fig = F.new_figure(3.0 * len(group) + 0.4)
            gs = fig.add_gridspec(2 * len(group), 1, height_ratios=[2.2, 1.0] * len(group))
            first = None
            for row, j in enumerate(group):
                ax = fig.add_subplot(gs[2 * row], sharex=first)
                first = first or ax
                axr = fig.add_subplot(gs[2 * row + 1], sharex=first)
                ax.fill_between(t[sl], a["lo"][sl, j], a["hi"][sl, j], color=F.BAND, alpha=0.55, lw=0,
                                label="95 % prediction band")
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
                axr.fill_between(t[sl], (a["lo"] - a["predicted"])[sl, j], (a["hi"] - a["predicted"])[sl, j],
                                 color=F.BAND, alpha=0.55, lw=0)
                axr.plot(t[sl], a["residual"][sl, j], color=F.DATA, lw=0.8)
                axr.axhline(0.0, color=F.MEASURED, lw=0.6)
                axr.set_ylabel("residual")
                if row == 0:
                    ax.legend(loc="upper right", ncols=3)
                if row < len(group) - 1:
                    axr.tick_params(labelbottom=False)
            axr.set_xlabel(xlabel)
            label = ", ".join(names[j] for j in group)
            figs.append(
                F.figure_html(
                    fig,
                    f"{run.label}: predicted and measured torque, joints {label}",
                    f"{run.label}, joints {label}: measured (black) and predicted (red dashed) torque with the 95 % "
                    "prediction band; below each, the residual measured \u2212 predicted with the same band.",
                )
            )
    return figs


def _spectrum_figure(data, run, a):
    names = data.robot.joint_names
    units = joint_units(data.robot)
    dof = data.robot.dof
    res = np.nan_to_num(a["residual"])
    freq, spec = amplitude_spectrum(res, a["rate"], a["periodic"])
    meas_freq, meas = amplitude_spectrum(np.nan_to_num(a["measured"]), a["rate"], a["periodic"])
    p = a["processed"]
    if p.harmonics and p.period:
        fmax = 1.15 * max(p.harmonics) / p.period
    elif p.cutoff_hz:
        fmax = 2.0 * p.cutoff_hz
    else:
        fmax = freq[-1]
    keep = (freq > 0) & (freq <= fmax)
    ncols = min(3, dof)
    nrows = -(-dof // ncols)
    with F.style():
        fig = F.new_figure(2.5 * nrows + 0.5)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        for j in range(dof):
            ax = axes[j]
            ax.semilogy(meas_freq[keep], np.maximum(meas[keep, j], 1e-300), color=F.NOMINAL, lw=0.8, alpha=0.6,
                        label="measured torque")
            ax.semilogy(freq[keep], np.maximum(spec[keep, j], 1e-300), color=F.PREDICTED, lw=0.9,
                        label="residual")
            top = max(float(np.max(meas[keep, j], initial=0.0)), 1e-300)
            ax.set_ylim(top * 1e-6, top * 2)
            ax.set_title(names[j], loc="left")
            ax.set_ylabel(f"amplitude [{units[j].torque}]")
            if j >= dof - ncols:
                ax.set_xlabel("frequency [Hz]")
        for ax in axes[dof:]:
            ax.set_visible(False)
        axes[0].legend(loc="upper right")
        return F.figure_html(
            fig,
            f"{run.label}: residual spectrum",
            f"{run.label}: amplitude spectrum of the residual (red) against that of the measured torque (blue). "
            "Peaks in the residual at the excited harmonics point at unmodelled dynamics; a flat residual at the "
            "noise level is what a complete model leaves.",
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
<td class="n">{{ t.coverage | pct }}</td><td class="n">{{ t.model_std | num(3) }}</td><td class="n">{{ t.noise | num(3) }}</td>
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
            runs.append({"label": f"{run.role}: {Path(run.source).name}", "missing": None,
                         "table": _table(data, run, a), "figures": figures})
        sigma = ", ".join(f"{n} {num(s, 3)}" for n, s in zip(data.robot.joint_names, data.sigma, strict=False))
        return {"runs": runs, "k": num(K95), "sigma": sigma or "not stored"}
