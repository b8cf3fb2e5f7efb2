"""The payload's least-squares rows: torque that the load adds, and the payload columns on the same samples.

Two references for the torque without the load (Khalil & Dombre 2002, section 12.6, "identification of the
load inertial parameters"):

* **an unloaded run of the same trajectory** (preferred): ``dtau(t) = tau_loaded(t) - tau_unloaded(t + s)``,
  ``s`` the time shift that lines the unloaded run's velocities up with the loaded run's (the logs start at
  different instants). Friction, the drive gains' error and every error of the robot's model cancel in the
  difference as long as both runs move alike; only the payload's own torque, Y_last pi_p, remains.
* **the identified model** (RESULT.json): ``dtau = tau_loaded - W(q, qd, qdd) beta``, the record's base parameters
  beta on the loaded run (robid.identification.datasets.load_dataset, the same Coulomb treatment). The model's
  own error stays in ``dtau``.

The payload columns Y_last (robid.payload.regressor) are evaluated on the loaded run's processed states and
passed through the same filter as its torque (parallel filtering, robid.identification.datasets). The rows kept
are the signal stage's data selection of both runs (``--min-speed``: a joint at standstill carries stiction).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.defaults import PERIODIC
from robid.errors import RobidInputError, RobidOptionError
from robid.estimation.correlated import RowBlock, RowCorrelation
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.payload.regressor import payload_regressor
from robid.robot import Robot
from robid.signals import ProcessedSignals, ProcessingOptions, process


@dataclass(frozen=True, eq=False)
class PayloadRows:
    """``Y`` (N, dof, 10) filtered payload columns and ``dtau`` (N, dof) torque of the load, rows not kept zeroed;
    ``keep`` (N, dof); ``correlation`` how white noise reaches the rows; ``reference`` ``"unloaded run"`` or
    ``"model"``; ``shift`` the unloaded run's time shift (s) or None; ``sigma_reference`` (dof,) the noise of the
    processed torque of the unloaded run (0 for the model); ``friction`` (N, dof, 2) the loaded run's filtered
    ``sign(qd_j)`` and ``qd_j`` of each joint, rows not kept zeroed (the columns of a change of Coulomb and viscous
    friction between the runs, robid.payload.gains), or None."""

    source: str
    reference: str
    Y: np.ndarray
    dtau: np.ndarray
    keep: np.ndarray
    correlation: RowCorrelation
    shift: float | None
    notes: tuple[str, ...]
    friction: np.ndarray | None = None


def processed_run(robot: Robot, path: str | Path, *, mapping=None, options: ProcessingOptions | None = None,
                  policy: ScreeningPolicy | None = None) -> ProcessedSignals:
    """One measurement read, screened and processed by the signal stage (docs/signals.md)."""
    measurement = read_measurement(path, robot.model, mapping=mapping, policy=policy)
    return process(measurement, options or ProcessingOptions())


def filtered_columns(rigid: Robot, processed: ProcessedSignals) -> np.ndarray:
    """Y_last on the processed states through the torque's filter (the whole record first when the path offers
    it, as robid.identification.datasets does for the base regressor)."""
    n, dof = processed.q.shape
    if processed.parallel_filter is not None:
        y = processed.parallel_filter(
            lambda q, qd, qdd, v: payload_regressor(rigid, q, qd, qdd).reshape(q.shape[0], dof * 10))
        return y.reshape(n, dof, 10)
    y = payload_regressor(rigid, processed.q, processed.qd, processed.qdd)
    return processed.apply_filter(y.reshape(n, dof * 10)).reshape(n, dof, 10)


def friction_columns(processed: ProcessedSignals) -> np.ndarray:
    """(N, dof, 2): each joint's ``sign(qd_j)`` and ``qd_j`` through the torque's filter, like the payload columns
    (the whole record first when the path offers it)."""
    n, dof = processed.q.shape

    def columns(qd: np.ndarray) -> np.ndarray:
        return np.stack([np.sign(qd), qd], axis=2).reshape(qd.shape[0], dof * 2)

    if processed.parallel_filter is not None:
        return processed.parallel_filter(lambda q, qd, qdd, v: columns(qd)).reshape(n, dof, 2)
    return processed.apply_filter(columns(processed.qd)).reshape(n, dof, 2)


def correlation_of(processed: ProcessedSignals) -> RowCorrelation:
    """Independent rows (periodic paths) or the low-pass's noise model (non-periodic path)."""
    noise = processed.row_noise
    n = processed.q.shape[0]
    if noise is None:
        return RowCorrelation((RowBlock(samples=n),))
    return RowCorrelation((RowBlock(samples=n, transpose=noise.transpose, power_gain=noise.power_gain),))


def time_shift(loaded: ProcessedSignals, unloaded: ProcessedSignals) -> float:
    """The shift s (s) minimising sum_t |qd_L(t) - qd_U(t + s)|^2 over the loaded samples, times counted from each
    record's first sample; the unloaded run is at rest outside its record (rest-to-rest logs) or repeats (two
    periodic runs of one period). A coarse grid search (4 sample steps), refined around the best shift on a grid
    40 times finer."""
    tl, tu = loaded.t - loaded.t[0], unloaded.t - unloaded.t[0]
    period = _common_period(loaded, unloaded)
    step = 4.0 * float(np.median(np.diff(tl)))  # coarse: the velocities are smooth over a few samples
    if period is not None:
        shifts = np.arange(-period / 2, period / 2 + step / 2, step)
    else:
        shifts = np.arange(-tl[-1], tu[-1] + step / 2, step)
    cost = np.array([_mismatch(loaded.qd, tl, unloaded.qd, tu, s, period) for s in shifts])
    k = int(np.argmin(cost))
    fine = np.linspace(shifts[k] - step, shifts[k] + step, 81)
    cost = np.array([_mismatch(loaded.qd, tl, unloaded.qd, tu, s, period) for s in fine])
    return float(fine[int(np.argmin(cost))])


def _common_period(a: ProcessedSignals, b: ProcessedSignals) -> float | None:
    """The period both runs were averaged over (periodic paths), else None."""
    if a.mode == PERIODIC and b.mode == PERIODIC and a.period and b.period:
        if abs(a.period - b.period) > 1e-6 * a.period:
            raise RobidOptionError("unloaded", f"the runs have different periods ({a.period:g} s loaded, "
                                  f"{b.period:g} s unloaded): they must run the same trajectory")
        return float(a.period)
    return None


def _interp(t_query: np.ndarray, t: np.ndarray, x: np.ndarray, period: float | None) -> np.ndarray:
    """Linear interpolation of every column of x; periodic, or at rest (the end values) outside the record."""
    if period is not None:
        return np.column_stack([np.interp(t_query, t, x[:, j], period=period) for j in range(x.shape[1])])
    return np.column_stack([np.interp(t_query, t, x[:, j]) for j in range(x.shape[1])])


def _mismatch(qd_l, tl, qd_u, tu, s, period) -> float:
    qd = _interp(tl + s, tu, qd_u, period)
    if period is None:
        outside = (tl + s < tu[0]) | (tl + s > tu[-1])
        qd[outside] = 0.0
    return float(np.sum((qd_l - qd) ** 2))


def difference_rows(rigid: Robot, loaded: ProcessedSignals, unloaded: ProcessedSignals,
                    sources: tuple[str, str] = ("loaded", "unloaded")) -> PayloadRows:
    """Rows from a loaded and an unloaded run of the same trajectory (module docstring); ``sources`` name the two
    files in messages."""
    if loaded.q.shape[1] != unloaded.q.shape[1]:
        raise RobidInputError(f"{sources[1]}: has {unloaded.q.shape[1]} joints, the loaded run "
                              f"{loaded.q.shape[1]}")
    period = _common_period(loaded, unloaded)
    s = time_shift(loaded, unloaded)
    tl, tu = loaded.t - loaded.t[0], unloaded.t - unloaded.t[0]
    tq = tl + s
    inside = np.ones(tl.shape, bool) if period is not None else (tq >= tu[0]) & (tq <= tu[-1])
    tau_u = _interp(tq, tu, np.asarray(unloaded.tau, float), period)
    qd_u = _interp(tq, tu, np.asarray(unloaded.qd, float), period)
    keep_u = _interp(tq, tu, np.asarray(unloaded.keep, float), period) > 0.999
    keep = np.asarray(loaded.keep, bool) & keep_u & inside[:, None]
    # the runs must move alike: a row where the velocities disagree in sign carries a friction difference
    keep &= np.sign(loaded.qd) == np.sign(qd_u)
    tracking = np.sqrt(np.mean((loaded.qd - qd_u)[inside] ** 2, axis=0))
    peak = np.max(np.abs(loaded.qd), axis=0)
    Y = filtered_columns(rigid, loaded) * keep[:, :, None]
    dtau = (np.asarray(loaded.tau, float) - tau_u) * keep
    from robid.signals.processing_summary import processing_summary

    notes = [
        f"processing loaded {sources[0]}: {processing_summary(loaded).line()}",
        f"processing unloaded {sources[1]}: {processing_summary(unloaded).line()}",
        f"reference: the unloaded run {sources[1]}, shifted by {s:+.4f} s to match the loaded run's velocities "
        f"(rms velocity difference per joint after alignment: "
        + ", ".join(f"{x:.3g}" for x in tracking) + " rad/s; for scale, the loaded run's peak speeds: "
        + ", ".join(f"{x:.3g}" for x in peak) + " rad/s)",
        f"rows used per joint: {', '.join(str(int(k)) for k in keep.sum(axis=0))} of {keep.shape[0]} samples "
        "(both runs faster than --min-speed, velocities of the same sign, inside both records)",
    ]
    if int(keep.sum()) < 10:
        raise RobidInputError(f"{sources[0]}: only {int(keep.sum())} (sample, joint) rows are usable against "
                              f"{sources[1]}: do the runs execute the same trajectory?")
    friction = friction_columns(loaded) * keep[:, :, None]
    return PayloadRows(sources[0], "unloaded run", Y, dtau, keep, correlation_of(loaded), s, tuple(notes),
                       friction=friction)


def model_rows(robot: Robot, rigid: Robot, path, base_values, *, mapping=None,
               options: ProcessingOptions | None = None, policy: ScreeningPolicy | None = None,
               coulomb: str = "noise") -> PayloadRows:
    """Rows from the loaded run and the identified model of ``robot`` (module docstring): ``base_values``, its
    base values, or the identified model itself (robid.identification.identified_model.IdentifiedModel, which
    adds an adopted nonlinear friction model)."""
    from robid.identification.datasets import load_dataset
    from robid.identification.identified_model import IdentifiedModel

    if isinstance(base_values, IdentifiedModel):
        model = base_values
    else:
        values = np.asarray(base_values, dtype=float)
        model = IdentifiedModel(tuple(robot.base_parameters().names), values, np.zeros((values.size,) * 2),
                                coulomb=coulomb)

    ds = load_dataset(robot, path, mapping=mapping, options=options, policy=policy, coulomb=coulomb)
    if ds.drive_rows is not None:
        raise RobidInputError(f"{path}: payload identification from a model needs the rigid layout "
                              "(terms without 'stiffness')")
    if ds.W.shape[2] != len(model.values):
        raise RobidOptionError("result", f"has {len(model.values)} base parameters, the robot's model "
                              f"{ds.W.shape[2]}: identify and payload must use the same robot and terms")
    keep = np.asarray(ds.processed.keep, bool)
    dtau = (ds.tau - model.dataset_torque(robot, ds)[0]) * keep
    Y = filtered_columns(rigid, ds.processed) * keep[:, :, None]
    from robid.signals.processing_summary import processing_summary

    notes = [f"processing loaded {path}: {processing_summary(ds.processed).line()}",
             "reference: the identified model (RESULT.json) on the loaded run; its own error stays in the "
             "payload's torque (prefer an unloaded run of the same trajectory)",
             f"rows used per joint: {', '.join(str(int(k)) for k in keep.sum(axis=0))} of {keep.shape[0]} samples"]
    return PayloadRows(str(path), "model", Y, dtau, keep, correlation_of(ds.processed), None, tuple(notes))
