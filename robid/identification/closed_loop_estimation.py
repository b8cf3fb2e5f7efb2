"""IDIM-IV and DIDIM: identification through the simulated closed loop (docs/estimation.md, "Closed-loop
estimators").

Both iterate on the base values beta_k, starting from the least-squares estimate (WLS): the closed loop is simulated
with beta_k (robid.identification.closed_loop), and its states give ``Z_k``, the base regressor on the simulated
states, on exactly the processed grid of each run and through the same filter as the measured torque (the
periods averaged as the torque was, the harmonic mask, or the non-periodic low-pass on the whole record):

* **IDIM-IV** (Janot, Vandanjon & Gautier, IEEE TCST 22(1) 2014): ``Z_k`` are the instruments of the measured
  observation matrix W, ``beta_{k+1} = (Z_k^T W)^-1 Z_k^T tau`` (robid.estimation.instrumental). The noise of
  the measured positions reaches W but not Z_k, so the errors-in-variables bias of least squares goes; W keeps
  the measured motion, so the estimate does not hinge on the simulation reproducing every detail of it.
* **DIDIM** (Gautier, Janot & Vandanjon, IEEE TCST 21(2) 2013): the output-error estimate of the closed loop in
  the torque. Its Gauss-Newton step takes the simulated regressor as the Jacobian, ``beta_{k+1} = argmin
  ||tau - Z_k beta||`` (per-joint weighted, as WLS), i.e. the simulated torque Z_k beta fitted to the measured
  one. It uses no derivative of the measured positions at all.

Stopped when no value moves by more than ``tolerance`` of its standard deviation; at most ``max_iterations``.
The reported covariance is that of the last step (the papers' choice): the instruments, or the simulated
regressor, are treated as noise-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.defaults import CLOSED_LOOP_METHODS, PERIODIC, WLS
from robid.errors import RobidInputError, RobidOptionError
from robid.estimation import EstimationResult, estimate
from robid.estimation.instrumental import iv
from robid.identification.closed_loop import FEEDFORWARD, ControllerModel, EstimatedClosedLoop, Reference
from robid.identification.datasets import DataSet, regressor_function, row_correlation, stack


@dataclass(frozen=True)
class ClosedLoopOptions:
    """What the closed-loop estimators must know of the robot's controller (robid.identification.closed_loop):
    the excitation trajectory of every run (``trajectory`` for all, ``file_trajectory`` by run key; a trajectory
    file path or object), the feed-forward the controller used, the log's time of the trajectory's time 0, and
    for a rest-to-rest trajectory the periods it ran (default: as many as the processed samples reach)."""

    trajectory: object = None
    file_trajectory: dict = field(default_factory=dict)
    feedforward: str = "rigid"
    time_offset: float = 0.0
    periods: int | None = None
    max_iterations: int = 20
    tolerance: float = 0.05

    def __post_init__(self) -> None:
        if self.feedforward not in FEEDFORWARD:
            raise RobidOptionError("feedforward", f"expected one of {', '.join(FEEDFORWARD)}, got {self.feedforward!r}")
        if not (self.max_iterations >= 1 and self.tolerance > 0):
            raise RobidInputError("closed loop: max_iterations must be >= 1 and tolerance > 0")

    def trajectory_for(self, key: str):
        found = self.file_trajectory.get(key, self.trajectory)
        if found is None:
            raise RobidOptionError(None,
                f"{key}: IDIM-IV and DIDIM simulate the closed loop along the reference the robot ran: give its "
                "excitation trajectory ({trajectory} TRAJ.json, or trajectory: in the campaign)"
            )
        if isinstance(found, (str, Path)):
            from robid.excitation.trajectory_file import load_trajectory

            return load_trajectory(found).trajectory
        return getattr(found, "trajectory", found)


@dataclass(frozen=True)
class ClosedLoopAccount:
    """How a closed-loop estimate went: ``moves`` the largest change of a value per iteration, in its standard
    deviations; ``tracking`` per run the rms of measured minus simulated positions per joint (rad or m) at the
    last iteration's start values."""

    method: str
    iterations: int
    converged: bool
    moves: tuple[float, ...]
    feedforward: str
    tracking: tuple[tuple[float, ...], ...]

    def describe(self) -> str:
        state = "converged" if self.converged else "did NOT converge"
        return (f"{self.method}: closed loop simulated with the estimate (feed-forward {self.feedforward}); "
                f"{state} in {self.iterations} iterations (largest move per iteration, in std: "
                + ", ".join(f"{m:.3g}" for m in self.moves) + ")")


def closed_loop_estimate(robot, sets: tuple[DataSet, ...], method: str, start: EstimationResult,
                         options: ClosedLoopOptions, processing_for, coulomb: str
                         ) -> tuple[EstimationResult, ClosedLoopAccount]:
    """The IDIM-IV or DIDIM estimate from the data sets ``sets`` (module docstring), from ``start``;
    ``processing_for(key)`` gives a run's processing options."""
    if method not in CLOSED_LOOP_METHODS:
        raise RobidInputError(f"closed loop: method must be one of {', '.join(CLOSED_LOOP_METHODS)}")
    if robot.motor_joints or any(d.reconstructed_link for d in sets):
        raise RobidOptionError("method", f"{method}: the elastic layout and motor-encoder-only runs are not simulated "
                               "by the closed-loop estimators; identify the rigid model")
    names = tuple(robot.base_parameters().names)
    references = [_reference(d, options) for d in sets]
    W, tau = stack(list(sets))
    values = np.asarray(start.values, dtype=float)
    moves: list[float] = []
    est = start
    for _ in range(options.max_iterations):
        runs = [simulated_regressor(robot, values, d, ref, options.feedforward, d.processed.decimation,
                                    coulomb) for d, ref in zip(sets, references, strict=True)]
        Z = np.concatenate([r[0] for r in runs])
        tracking = tuple(r[1] for r in runs)
        if not moves:
            _check_tracking(sets, tracking, robot.joint_names)
        if method == "idim-iv":
            est = iv(W, Z, tau, names, method="idim-iv", correlation=row_correlation(list(sets)))
        else:
            est = estimate(Z, tau, names, method=WLS, correlation=row_correlation(list(sets)))
        std = np.asarray(est.std, dtype=float)
        finite = np.isfinite(std) & (std > 0)
        move = float(np.max(np.abs(est.values - values)[finite] / std[finite])) if finite.any() else 0.0
        moves.append(move)
        values = np.asarray(est.values, dtype=float)
        if move < options.tolerance:
            break
    converged = moves[-1] < options.tolerance
    account = ClosedLoopAccount(method, len(moves), converged, tuple(moves), options.feedforward, tracking)
    notes = list(est.notes) + [account.describe()]
    if method == "didim":
        notes.append("didim: output error in the torque; Gauss-Newton with the simulated regressor as Jacobian, "
                     "each step a WLS fit of the measured torque on it")
    return est.with_estimate(est.values, est.covariance, method=method, notes=notes, converged=converged,
                             iterations=len(moves)), account


#: the simulated closed loop must follow the run: rms of processed minus simulated positions at most this share of
#: the run's rms motion about its mean, per joint, at the first iteration
TRACKING_SHARE = 0.1


def _reference(dataset: DataSet, options: ClosedLoopOptions) -> Reference:
    trajectory = options.trajectory_for(dataset.source)
    period = dataset.processed.period
    if period is not None and abs(float(period) - float(trajectory.period)) > 1e-6 * float(period):
        raise RobidInputError(
            f"{dataset.source}: the trajectory's period is {float(trajectory.period):g} s, the run was processed with "
            f"a period of {float(period):g} s: the trajectory is not the one this run followed"
        )
    periods = options.periods
    if periods is None:
        t = np.asarray(dataset.processed.t, dtype=float)
        end = max(float(t.max()), dataset.processed.segment[1] if dataset.processed.segment else -np.inf)
        periods = max(1, int(np.ceil((end - options.time_offset) / float(trajectory.period) - 1e-9)))
    return Reference(trajectory, float(periods), options.time_offset)


def _check_tracking(sets, tracking, joints) -> None:
    """Refuse a reference that the run did not follow (module docstring of robid.identification.closed_loop)."""
    for d, rms in zip(sets, tracking, strict=True):
        q = np.asarray(d.processed.q, dtype=float)
        motion = np.sqrt(np.mean((q - q.mean(axis=0)) ** 2, axis=0))
        bad = [f"{j} {r:.3g} against {m:.3g}" for j, r, m in zip(joints, rms, motion, strict=True)
               if m > 0 and r > TRACKING_SHARE * m]
        if bad:
            raise RobidOptionError(None,
                f"{d.source}: the closed loop simulated along the given trajectory does not follow the measured "
                f"motion (rms difference against rms motion: {'; '.join(bad)}): check {{trajectory}} (the excitation "
                "this run followed, its time 0 at the log's), the controller gains and the feed-forward"
            )


def simulated_regressor(robot, values, dataset: DataSet, reference: Reference, feedforward: str, decimate: int,
                        coulomb: str) -> tuple[np.ndarray, tuple[float, ...]]:
    """Z: the base regressor of the closed loop simulated with ``values``, on the run's processed grid and through
    its torque's filter, rows the run does not use zeroed (N, dof, nb); and the rms of the processed measured
    minus simulated positions per joint on the grid."""
    processed = dataset.processed
    loop = EstimatedClosedLoop(robot, values, ControllerModel(robot, reference, feedforward, dataset.source))
    evaluate, _ = regressor_function(robot, processed, coulomb)
    n, dof = processed.q.shape
    nb = dataset.W.shape[2]
    grid = np.asarray(processed.t, dtype=float)
    if processed.parallel_filter is not None:  # non-periodic: the whole record, filtered as the torque was
        step = 1.0 / (processed.sample_rate * decimate)
        edge = processed.trimmed[0]
        states = {}

        def on_record(q, qd, qdd, v):
            times = grid[0] + (np.arange(q.shape[0]) - edge) * step
            states["grid"] = loop.simulate(times)
            sq, sqd, sqdd = states["grid"]
            return evaluate(sq, sqd, sqdd, sqd).reshape(q.shape[0], dof * nb)

        Z = processed.parallel_filter(on_record).reshape(n, dof, nb)
        q_sim = states["grid"][0][edge::decimate][:n]
    else:
        if processed.mode == PERIODIC:  # one averaged period: average the simulated periods used
            period = float(processed.period)
            segment = processed.segment or (grid[0], grid[0] + processed.n_periods * period)
            total = int(round((segment[1] - segment[0]) / period))
            used = [k for k in range(total) if k + 1 not in processed.rejected_periods]
            times = np.concatenate([grid + k * period for k in used])
        else:
            used, times = [0], grid
        q_all, qd_all, qdd_all = loop.simulate(times)
        Y = evaluate(q_all, qd_all, qdd_all, qd_all).reshape(len(used), n, dof * nb).mean(axis=0)
        Z = processed.apply_filter(Y).reshape(n, dof, nb)
        q_sim = q_all.reshape(len(used), n, dof).mean(axis=0)
    keep = np.asarray(processed.keep, dtype=bool)
    tracking = tuple(float(x) for x in np.sqrt(np.mean((np.asarray(processed.q) - q_sim) ** 2, axis=0)))
    return Z * keep[:, :, None], tracking
