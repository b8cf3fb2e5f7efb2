"""The figures of the torque section: per run, predicted versus measured torque of every joint with its 95 %
prediction band and the residual beneath (one figure per run, the joints in two columns from four joints on), and
the residual spectrum. Every series is drawn through at most robid.report._figures.MAX_POINTS points taken from
every row (:func:`robid.report._figures.thin_indices`)."""

from __future__ import annotations

import numpy as np

from robid.defaults import PERIODIC
from robid.estimation.metrics import K95
from robid.report import _figures as F
from robid.report._compute import joint_units
from robid.report.section import num


def run_arrays(data, run) -> dict:
    """The run's display series as arrays (rows the data selection left out are NaN: not drawn)."""
    d = run.display
    mask = np.asarray(d.used, dtype=bool).T
    noise = np.array([np.nan if s is None else s for s in run.noise.tau_std_processed], dtype=float)
    error = model_error(data)
    std_total = np.sqrt(d.array("tau_std_model") ** 2 + noise[None, :] ** 2 + error[None, :] ** 2)

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


def model_error(data) -> np.ndarray:
    """The record's model error std per joint (zeros for a record written before schema 2.1, whose bands lack it)."""
    stored = data.record.model_error_std or (0.0,) * data.robot.dof
    return np.array([0.0 if e is None else e for e in stored], dtype=float)


def averaged(run) -> bool:
    """Whether the run's series is one period averaged over several (robid.signals periodic path); every other run
    (one period, whole periods sample by sample, a rest-to-rest segment, a non-periodic record) is its own samples."""
    return run.mode == PERIODIC and run.n_periods > 1


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
    if run.mode == PERIODIC:
        return t, "time in the record: one period (not averaged) [s]"
    if run.mode == "rest-to-rest":
        return t, "time in the record: one rest-to-rest run (not averaged) [s]"
    return t, "time in the record (not averaged) [s]"


def _robust_limits(residual: np.ndarray, half_band: np.ndarray) -> tuple[float, float]:
    """Symmetric limits showing the band and 99.5 % of the residual: a few spikes (e.g. at velocity reversals)
    must not flatten the rest; the largest residual is in the table."""
    r = residual[np.isfinite(residual)]
    spread = float(np.percentile(np.abs(r), 99.5)) if r.size else 0.0
    hb = half_band[np.isfinite(half_band)]
    top = 1.25 * max(spread, float(np.max(hb, initial=0.0)), 1e-12)
    return -top, top


def _layout(fig, dof: int, ncols: int, height: float):
    """The outer grid of a time figure: one cell per joint, ``ncols`` columns, margins in inches."""
    rows = -(-dof // ncols)
    top, bottom, gap = 0.6, 0.55, 0.5
    cell = (height - top - bottom - gap * (rows - 1)) / rows
    return fig.add_gridspec(rows, ncols, left=0.85 / F.WIDTH_IN, right=1 - 0.15 / F.WIDTH_IN, top=1 - top / height,
                            bottom=bottom / height, hspace=gap / cell, wspace=0.9 / ((F.WIDTH_IN - 1.0) / ncols))


def _panel(fig, cell, t, a, j: int, title: str, ylabel: str, first):
    """One joint: measured and predicted torque with the band above, the residual with the band below; every
    series through at most MAX_POINTS points from every row."""
    inner = cell.subgridspec(2, 1, height_ratios=[2.2, 1.0], hspace=0.1)
    ax = fig.add_subplot(inner[0], sharex=first)
    axr = fig.add_subplot(inner[1], sharex=ax)
    band = F.thin_indices(a["lo"][:, j], a["hi"][:, j])
    ax.fill_between(t[band], a["lo"][band, j], a["hi"][band, j], color=F.BAND, alpha=0.55, lw=0,
                    label="95 % prediction band")
    for key, color, lw, ls, label in (("measured", F.MEASURED, 0.9, "-", "measured"),
                                      ("predicted", F.PREDICTED, 1.0, "--", "predicted")):
        k = F.thin_indices(a[key][:, j])
        ax.plot(t[k], a[key][k, j], color=color, lw=lw, ls=ls, label=label, antialiased=False)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    ax.tick_params(labelbottom=False)
    half = a["hi"][:, j] - a["predicted"][:, j]
    axr.fill_between(t[band], -half[band], half[band], color=F.BAND, alpha=0.55, lw=0)
    k = F.thin_indices(a["residual"][:, j])
    axr.plot(t[k], a["residual"][k, j], color=F.DATA, lw=0.7, antialiased=False)
    axr.axhline(0.0, color=F.MEASURED, lw=0.6)
    axr.set_ylim(*_robust_limits(a["residual"][:, j], half))
    axr.set_ylabel("residual")
    return ax, axr


def time_figure(data, run):
    """Predicted versus measured torque of every joint of one run, with the band and the residual (module
    docstring)."""
    names = data.robot.joint_names
    units = joint_units(data.robot)
    dof = data.robot.dof
    a = run_arrays(data, run)
    t = a["t"]
    _, xlabel = run_time(run)
    ncols = 1 if dof <= 3 else 2
    rows = -(-dof // ncols)
    with F.style():
        height = (3.0 if ncols == 1 else 2.3) * rows + 0.7
        fig = F.new_figure(height)
        grid = _layout(fig, dof, ncols, height)
        first = None
        for j in range(dof):
            m = run.fit.per_joint[j]
            title = f"{names[j]}: NRMSE {num(m.nrmse_percent, 3)} %, {num(m.inside_band_percent, 3)} % in band"
            ax, axr = _panel(fig, grid[j // ncols, j % ncols], t, a, j, title, f"{names[j]} [{units[j].torque}]",
                             first)
            first = first or ax
            if j == 0:
                F.legend_on_top(fig, ax)
            if j // ncols == rows - 1 or j + ncols >= dof:
                axr.set_xlabel(xlabel)
            else:
                axr.tick_params(labelbottom=False)
        label = ", ".join(names)
        return F.figure_html(
            fig,
            f"{run.label}: predicted and measured torque, joints {label}",
            f"{run.label}: measured (black) and predicted (red dashed) torque of every joint with the 95 % prediction "
            "band (noise, parameter uncertainty and model error); below each, the residual measured \u2212 predicted "
            "with the same band (its axis shows 99.5 % of the samples; the largest residual is in the table). Rows "
            "the data selection left out are not drawn; each line runs through the extremes of every row.",
        )


def spectrum_figure(data, run):
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
        fig = F.new_figure(2.2 * nrows + 0.9)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        F.margins(fig, rows=nrows, cols=ncols, hspace_in=0.75, wspace_in=0.85, top=0.6, bottom=0.6)
        for j in range(dof):
            ax = axes[j]
            if excited is not None:
                ax.axvspan(*excited, color="#ffd166", alpha=0.35, lw=0, label="excited harmonics")
            for series, color, lw, label in ((meas, F.NOMINAL, 0.8, "measured torque"),
                                             (spec, F.PREDICTED, 0.9, "residual")):
                k = F.log_peak_indices(f, series[:, j])
                ax.loglog(f[k], series[k, j], color=color, lw=lw, label=label, antialiased=False)
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


