"""One measurement file turned into a least-squares block: processed signals, filtered base regressor, torque.

Parallel filtering (Gautier 1997): the base regressor is evaluated on the processed (filtered, differentiated)
states and then passed through the same linear filter that the signal stage already applied to the torque
(``ProcessedSignals.apply_filter``): the harmonic mask of the periodic path, or the zero-phase low-pass of the
non-periodic path, so that both sides of tau = W beta carry the same band.

Elastic joints with motor encoders (Spong model, Zollo et al. 2015 eq. 2-6): the motor torque is
tau = Ia thetadd + f(thetad) + [link-side rigid dynamics of q], whereas the rigid regressor carries the rotor at
the link acceleration (Ia qdd). When the measurement has motor positions, the difference Ia_nominal (thetadd -
qdd) -- with Ia_nominal = rotor_inertia * gear_ratio^2 from the robot file -- is moved to the torque side, and
likewise the drive-side friction difference fv_nom (thetad - qd) + fc_nom (sign thetad - sign qd), so the lumped
base parameters stay those of the rigid model; only (true - nominal) times the deflection terms remains,
second order in the deflection.

Elastic layout (terms with ``stiffness``; docs/elastic.md section 2): the regressor has the n link rows and one
motor row per elastic joint, evaluated on the processed link and motor states. An elastic joint's link row has
target zero (free motion: the spring carries the link); its motor row is replaced by the sum of its motor and link
rows, the **drive row**: target the measured drive torque, model u_J = [link row J without the spring] + [motor
row J without the spring], where the spring and damping terms cancel exactly. The rows span the same equations (an
invertible row transformation), but the drive row's error is the torque noise only, not k_J times the noise of
two encoders' difference: that noise, which also enters the link acceleration, would otherwise reach every
inertia through both rows (errors in variables; docs/elastic.md section 3 measures it), and the predicted drive
torque would carry it. A rigid joint's row keeps its torque. The regressor goes through the torque's filter on the
processed grid.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.elastic.layout_rows import drive_rows as drive_rows
from robid.elastic.layout_rows import elastic_rows as elastic_rows
from robid.errors import RobidInputError, RobidOptionError
from robid.estimation._lsq import used_rows
from robid.estimation.compressed import CompressedProblem, StreamingQR
from robid.estimation.correlated import NoiseModel, RowBlock, RowCorrelation, noise_trace
from robid.identification.compact_regressor import CompactRegressor
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.robot import Robot
from robid.signals import ProcessedSignals, ProcessingOptions, process


@dataclass(frozen=True, eq=False)
class DataSet:
    """A measurement ready for estimation: ``W`` (N, rows, nb) and ``tau`` (N, rows), rows not kept zeroed.

    ``rows`` is dof, plus the motor rows of the elastic layout; ``drive_rows`` then names, per joint, the row whose
    target is the measured drive torque (the motor row of an elastic joint), which :meth:`drive_view` keeps."""

    source: str
    processed: ProcessedSignals
    W: np.ndarray | CompactRegressor
    tau: np.ndarray
    rows_used: int
    notes: tuple[str, ...]
    drive_rows: tuple[int, ...] | None = None
    #: the link states were reconstructed from motor encoders (robid.elastic.motor_encoders_only), not measured
    reconstructed_link: bool = False

    def drive_view(self) -> DataSet:
        """The data set reduced to one row per joint, the measured drive torque (itself for the rigid layout)."""
        if self.drive_rows is None:
            return self
        rows = list(self.drive_rows)
        return dataclasses.replace(self, W=self.W[:, rows], tau=self.tau[:, rows], drive_rows=None)


def load_dataset(
    robot: Robot,
    path: str | Path,
    *,
    mapping: str | Path | None = None,
    options: ProcessingOptions | None = None,
    policy: ScreeningPolicy | None = None,
    coulomb: str = "noise",
    static_deflection: bool = False,
    motor_side_values: np.ndarray | None = None,
    linearise: bool = True,
    compact: bool = False,
) -> DataSet:
    """The least-squares block of one measurement (module docstring). ``compact``: a non-periodic run's regressor
    is evaluated and filtered block by block and kept as a :class:`CompactRegressor` (the same numbers; the
    dense (N, dof, nb) array is never formed). ``coulomb``: ``"noise"`` (the Coulomb
    columns are the expected sign of the velocity given its noise, robid.identification.coulomb) or ``"sign"``;
    ``static_deflection``: the file's positions are motor-side, corrected to the link (:func:`read_positions`);
    ``motor_side_values``: the file's positions are the motor encoders' and the link states are reconstructed
    with these base values, the block linearised there (``linearise``) or not
    (robid.elastic.motor_encoders_only)."""
    measurement, deflection_notes, step = read_positions(robot, path, mapping, policy, static_deflection)
    processed = process(measurement, with_position_step(options or ProcessingOptions(), step))
    notes = list(measurement.notes) + deflection_notes
    if motor_side_values is not None:
        return _motor_side_dataset(robot, processed, str(path), notes, motor_side_values, linearise)
    if robot.motor_joints:
        return _elastic_dataset(robot, processed, str(path), notes)
    tau = np.asarray(processed.tau, dtype=float)
    if processed.thetadd is not None and robot.model.is_elastic:
        tau = tau - rotor_correction(robot, processed)
        notes.append("elastic joints: rotor inertia and drive friction taken at the motor side (nominal "
                     "Ia (thetadd - qdd) + fv (thetad - qd) + fc (sign thetad - sign qd) moved to the torque side)")
    W_f, coulomb_notes = _filtered_regressor(robot, processed, coulomb, compact)
    notes += coulomb_notes
    if processed.mode == "nonperiodic":
        notes.append(
            "parallel filtering: the base regressor evaluated on the whole record (filter edges included) and "
            "passed through the torque's zero-phase low-pass"
        )
    else:
        notes.append("parallel filtering: the base regressor keeps the same harmonics as the torque")
    notes += _regressor_noise_notes(processed)
    keep = np.asarray(processed.keep, dtype=bool)
    if not keep.all():
        W_f = _kept(W_f, keep)
        tau = tau * keep
        notes.append(f"data selection: {int((~keep).sum())} (sample, joint) rows not used")
    return DataSet(
        source=str(path),
        processed=processed,
        W=W_f,
        tau=tau,
        rows_used=int(keep.sum()),
        notes=tuple(notes),
    )


def read_positions(robot: Robot, path, mapping, policy, static_deflection: bool):
    """The measurement, with its positions corrected from the motor to the link side by the static deflection
    q = theta - K^-1 G(q) when ``static_deflection`` (robid.elastic.static_deflection); (measurement, notes, the
    step of the positions as logged or None). The corrected positions are no longer on the log's grid, so the
    signal stage must be given the logged step (its rounding counts as noise, signals.noise.logged_step)."""
    measurement = read_measurement(path, robot.model, mapping=mapping, policy=policy)
    if not static_deflection:
        return measurement, [], None
    if measurement.theta is not None:
        raise RobidOptionError(None,
            f"{path}: {{static_deflection}} is for files with motor encoders only, and this one has motor positions "
            "(theta columns): its positions are link-side already"
        )
    from robid.elastic.static_deflection import corrected_measurement
    from robid.signals.noise import logged_step

    step = tuple(float(x) for x in logged_step(measurement.q))
    measurement, note = corrected_measurement(measurement, robot.model)
    return measurement, [note], step


def with_position_step(options: ProcessingOptions, step) -> ProcessingOptions:
    """``options`` with the logged position step ``step`` unless they give one (or there is none)."""
    if step is None or options.position_step is not None:
        return options
    return dataclasses.replace(options, position_step=step)


def _elastic_dataset(robot: Robot, processed: ProcessedSignals, source: str, notes: Sequence[str]) -> DataSet:
    """The least-squares block of the elastic layout (module docstring); its notes are ``notes`` and its own."""
    W, tau, keep = elastic_rows(robot, processed, source)
    n, rows, nb = W.shape
    W = processed.apply_filter(W.reshape(n, rows * nb)).reshape(n, rows, nb)
    motor = [robot.joint_names[j] for j in robot.motor_joints]
    own = [
        f"elastic layout: {rows} rows per sample, the link equations of the {robot.dof} joints and the motor "
        f"equations of {', '.join(motor)} (target zero on their link rows; the drive torque on their drive rows, "
        "motor + link row, where the spring cancels); Coulomb columns take sign(thetad) of the processed motor "
        "velocity",
        "parallel filtering: the base regressor passed through the torque's filter on the processed grid",
        *_regressor_noise_notes(processed),
    ]
    if not keep.all():
        W = W * keep[:, :, None]
        tau = tau * keep
        own.append(f"data selection: {int((~keep).sum())} (sample, row) rows not used")
    return DataSet(source=source, processed=processed, W=W, tau=tau, rows_used=int(keep.sum()),
                   notes=(*notes, *own), drive_rows=drive_rows(robot))


def _motor_side_dataset(robot: Robot, processed: ProcessedSignals, source: str, notes: Sequence[str], values,
                        linearise: bool) -> DataSet:
    """The drive rows of a run recorded with motor encoders only (robid.elastic.motor_encoders_only): one row per
    joint, like the rigid layout; its notes are ``notes`` and its own."""
    from robid.elastic.motor_encoders_only import motor_side_block

    W, tau, keep, states, note = motor_side_block(robot, processed, values, source, linearise)
    own = [note, "parallel filtering: the base regressor passed through the torque's filter on the processed grid"]
    if not keep.all():
        W = W * keep[:, :, None]
        tau = tau * keep
        own.append(f"data selection: {int((~keep).sum())} (sample, joint) rows not used")
    return DataSet(source=source, processed=states, W=W, tau=tau, rows_used=int(keep.sum()),
                   notes=(*notes, *own), reconstructed_link=True)


def regressor_of(robot: Robot, processed: ProcessedSignals, coulomb: str = "noise") -> tuple[np.ndarray, list[str]]:
    """The base regressor at the processed states (N, dof, nb), not filtered, with the Coulomb treatment
    ``coulomb`` (robid.identification.coulomb); (regressor, notes)."""
    evaluate, notes = regressor_function(robot, processed, coulomb)
    return evaluate(processed.q, processed.qd, processed.qdd, _sign_velocity(processed)), notes


def _sign_velocity(processed: ProcessedSignals) -> np.ndarray:
    """The velocity whose sign the Coulomb columns take on the processed grid: the controller's measured one when
    the file has it (robid.signals.measured_velocity), else the processed one."""
    return processed.qd_measured if processed.qd_measured is not None else processed.qd


def regressor_function(robot: Robot, processed: ProcessedSignals, coulomb: str):
    """(q, qd, qdd, v) -> base regressor (N, dof, nb) with the Coulomb treatment ``coulomb``: ``"noise"`` the
    expected sign of ``v`` -- the measured velocity when the file has one, else the processed -- given its noise;
    ``"differentiated"`` the same on the processed velocity ``qd`` whatever the file has; ``"sign"`` sign(qd).
    And the note that says which."""
    from robid.identification.coulomb import COULOMB_MODELS, smooth_coulomb_columns

    if coulomb not in COULOMB_MODELS:
        raise RobidInputError(f"coulomb: expected one of {', '.join(COULOMB_MODELS)}, got {coulomb!r}")
    base = robot.base_parameters()
    if coulomb == "sign":
        return (lambda q, qd, qdd, v: base.regressor(q, qd, qdd)), []
    measured = coulomb == "noise" and processed.qd_measured is not None
    noise = processed.qd_measured_std if measured else processed.noise.qd_std_processed
    source = "the controller's measured velocity" if measured else "the processed velocity"
    v0 = processed.qd_measured[:1] if measured else processed.qd[:1]
    couplings = robot.model.drive_couplings if "drive_coupling" in robot.terms else ()
    _, note = smooth_coulomb_columns(base.regressor(processed.q[:1], processed.qd[:1], processed.qdd[:1]), base,
                                     robot.joint_names, v0, noise, source, couplings)

    def evaluate(q, qd, qdd, v):
        v = v if measured else qd
        return smooth_coulomb_columns(base.regressor(q, qd, qdd), base, robot.joint_names, v, noise, source,
                                      couplings, copy=False)[0]

    return evaluate, [note] if note else []


def _filtered_regressor(robot: Robot, processed: ProcessedSignals, coulomb: str, compact: bool = False
                        ) -> tuple[np.ndarray | CompactRegressor, list[str]]:
    """The base regressor through the torque's filter, (N, dof, nb) on the processed grid: on the whole record
    when the path offers it (``parallel_filter``, non-periodic; block by block into a :class:`CompactRegressor`
    when ``compact``), else on the processed grid (``apply_filter``); and the notes of its Coulomb treatment."""
    evaluate, notes = regressor_function(robot, processed, coulomb)
    n, dof = processed.q.shape
    nb = len(robot.base_parameters().names)
    if processed.parallel_filter is not None:
        def flat(q, qd, qdd, v):
            return evaluate(q, qd, qdd, v).reshape(q.shape[0], dof * nb)

        if compact:
            columns, rows = processed.parallel_filter(flat, COMPACT_BLOCK)
            return CompactRegressor(columns=columns, data=rows, shape=(n, dof, nb)), notes
        return processed.parallel_filter(flat).reshape(n, dof, nb), notes
    W = evaluate(processed.q, processed.qd, processed.qdd, _sign_velocity(processed))
    return processed.apply_filter(W.reshape(n, dof * nb)).reshape(n, dof, nb), notes


#: recorded samples per block of the compact (streamed) parallel filter: a block of the dense regressor stays
#: below glibc's largest mmap threshold (32 MB for 7 x 64 channels), so its memory is reused, not faulted in anew
COMPACT_BLOCK = 8192


#: samples per streaming-QR update from a compact regressor (measured: as fast as any from 1k to 8k rows)
QR_BLOCK = 1 << 12


def _kept(W, keep: np.ndarray):
    """The regressor with the rows the data selection left out zeroed (dense or compact, in blocks)."""
    if not isinstance(W, CompactRegressor):
        return W * keep[:, :, None]
    joint = W.columns // W.shape[2]
    for lo in range(0, W.shape[0], COMPACT_BLOCK):
        W.data[lo : lo + COMPACT_BLOCK] *= keep[lo : lo + COMPACT_BLOCK][:, joint]
    return W


#: the relative noise of the processed accelerations above which the regressor's errors get a note
REGRESSOR_NOISE = 0.03


def _regressor_noise_notes(processed: ProcessedSignals) -> list[str]:
    """Errors in the regressor (docs/estimation.md, "Errors in the regressor"): where the processed accelerations
    carry noise above ``REGRESSOR_NOISE`` of the motion's rms, the inertial columns are noisy regressors -- biased
    towards zero by the attenuation noise^2 / (motion^2 + noise^2) -- and the residual holds M(q) times that noise,
    which the estimator counts as torque noise."""
    qdd = np.asarray(processed.qdd, dtype=float)
    keep = np.asarray(processed.keep, dtype=bool)
    total = np.sum((qdd * keep) ** 2, axis=0) / np.maximum(keep.sum(axis=0), 1)  # motion + noise
    noise = np.asarray(processed.noise.qdd_std_processed, dtype=float) ** 2
    ratio = np.sqrt(noise / np.maximum(total - noise, 1e-300))
    loud = [j for j in range(ratio.size) if total[j] > 0 and ratio[j] > REGRESSOR_NOISE]
    if not loud:
        return []
    # attenuation of a noisy regressor column: var(a) / (var(a) + var(noise)) = 1 - noise / total
    parts = ", ".join(
        f"joint {j + 1}: {100 * ratio[j]:.2g} % (bias ~{100 * min(noise[j] / total[j], 1.0):.2g} %)" for j in loud
    )
    return [
        "errors in the regressor: the processed accelerations carry noise of " + parts + " of the motion's rms; "
        "the inertial parameters of these joints are biased towards zero by about noise^2 / (motion^2 + noise^2) "
        "(errors in variables), and the residual counts the noise times the inertia as torque noise"
    ]


def rotor_correction(robot: Robot, processed: ProcessedSignals) -> np.ndarray:
    """Ia_nom (thetadd - qdd) + fv_nom (thetad - qd) + fc_nom (sign thetad - sign qd) on elastic joints."""
    joints = robot.model.joints
    elastic = np.array([j.elasticity is not None for j in joints])
    ia = np.array([j.drive.reflected_inertia if j.drive is not None else 0.0 for j in joints]) * elastic
    fv = np.array([j.friction.viscous for j in joints]) * elastic
    fc = np.array([j.friction.coulomb for j in joints]) * elastic
    qd, thd = np.asarray(processed.qd), np.asarray(processed.thetad)
    return (
        (np.asarray(processed.thetadd) - np.asarray(processed.qdd)) * ia
        + (thd - qd) * fv
        + (np.sign(thd) - np.sign(qd)) * fc
    )


def stack(datasets: list[DataSet]) -> tuple[np.ndarray, np.ndarray]:
    """Several runs combine into one problem: their rows are stacked."""
    return np.concatenate([d.W for d in datasets]), np.concatenate([d.tau for d in datasets])


def row_correlation(datasets: list[DataSet]) -> RowCorrelation:
    """How white torque noise reaches the stacked rows, data set by data set: the low-pass of a non-periodic run
    (its F^T and power gain), or independent rows (periodic averaging, docs/estimation.md "Correlated rows")."""
    blocks = []
    for d in datasets:
        noise = d.processed.row_noise
        if noise is None:
            blocks.append(RowBlock(samples=d.W.shape[0]))
        else:
            blocks.append(RowBlock(samples=d.W.shape[0], transpose=noise.transpose, power_gain=noise.power_gain,
                                   gram=noise.gram))
    return RowCorrelation(tuple(blocks))


def compressed_problem(datasets: list[DataSet]) -> tuple[CompressedProblem, NoiseModel | None]:
    """The stacked problem of ``datasets`` compressed by a streaming QR (robid.estimation.compressed), without
    stacking their regressors, and the correlated rows' noise model of :func:`row_correlation`
    (robid.estimation.correlated.prepare) computed block by block when a data set offers it
    (``RowNoise.transpose_gram``)."""
    dof, nb = datasets[0].W.shape[1], datasets[0].W.shape[2]
    acc = StreamingQR(dof, nb)
    for d in datasets:
        if isinstance(d.W, CompactRegressor):
            _compact_rows(acc, d.W, d.tau)
        else:
            acc.add(d.W, d.tau)
    correlation = row_correlation(datasets)
    if correlation.independent:
        return acc.problem(), None
    used = np.concatenate([d.W.used_rows(d.tau) if isinstance(d.W, CompactRegressor) else used_rows(d.W, d.tau)
                           for d in datasets])
    filtered = np.zeros((dof, nb, nb))
    for d in datasets:
        filtered += _filtered_gram(d)
    return acc.problem(), NoiseModel(filtered=filtered, trace=noise_trace(correlation, used))


def _compact_rows(acc: StreamingQR, W: CompactRegressor, tau: np.ndarray) -> None:
    """Every joint's rows of a compact regressor into the streaming QR, ``QR_BLOCK`` samples per update. The
    joints' factors are independent: they are accumulated on ``QR_WORKERS`` threads (LAPACK runs without the
    GIL), each joint's blocks in order, so every factor sees the same updates as on one thread."""

    start = acc.samples

    def joint(j: int) -> None:
        where, cols = W.row_columns(j)
        for lo in range(0, W.shape[0], QR_BLOCK):
            hi = min(W.shape[0], lo + QR_BLOCK)
            acc.add_rows(j, cols, W.data[lo:hi, where], tau[lo:hi, j], first=start + lo)

    dof = W.shape[1]
    order = sorted(range(dof), key=lambda j: -W.row_columns(j)[1].size)  # the widest first: balanced threads
    if QR_WORKERS > 1 and dof > 1:
        with ThreadPoolExecutor(max_workers=QR_WORKERS, thread_name_prefix="robid-qr") as pool:
            list(pool.map(joint, order))
    else:
        for j in order:
            joint(j)
    acc.count_samples(W.shape[0])


#: threads of the streaming QR over joints (two cores are the machines robid is measured on); 1: no threads. The
#: noise model's filtered Gram matrices (_filtered_gram) stay one joint at a time: each holds its forward-filtered
#: channels over the whole record (300 MB for 64 channels of 600 000 samples), two at once broke the 2 GB budget
QR_WORKERS = min(2, os.cpu_count() or 1)


def _filtered_gram(d: DataSet) -> np.ndarray:
    """U_j = (F^T W_j)^T (F^T W_j) (dof, nb, nb) of one data set (robid.estimation.correlated.NoiseModel)."""
    dof, nb = d.W.shape[1], d.W.shape[2]
    noise = d.processed.row_noise
    out = np.zeros((dof, nb, nb))
    for j in range(dof):
        if noise is None:
            part = np.asarray(d.W[:, j, :])
            out[j] = part.T @ part
        elif isinstance(d.W, CompactRegressor) and noise.gram is not None:
            where, cols = d.W.row_columns(j)
            out[j][np.ix_(cols, cols)] = noise.gram(d.W.data[:, where])
        elif noise.gram is not None:
            out[j] = noise.gram(np.asarray(d.W[:, j, :]))
        elif isinstance(d.W, CompactRegressor) and noise.transpose_gram is not None:
            where, cols = d.W.row_columns(j)
            out[j][np.ix_(cols, cols)] = noise.transpose_gram(functools.partial(_stored_rows, d.W.data, where),
                                                              cols.size)
        else:
            z = np.asarray(noise.transpose(np.asarray(d.W[:, j, :])), dtype=float)
            out[j] = z.T @ z
    return out


def _stored_rows(data: np.ndarray, where: slice, lo: int, hi: int) -> np.ndarray:
    return data[lo:hi, where]
