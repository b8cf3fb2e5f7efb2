"""The springs run by run: how far the stiffness the link and motor encoders give on each run scatters beyond its
own uncertainty, and the identified stiffness's standard deviation widened by that scatter (elastic layout).

The elastic layout identifies k_J in the torque domain from the identification runs. Its covariance counts the
noise of those runs only; what differs from run to run -- the encoders' reference, backlash, a model error of the
link side that the runs excite differently -- does not show in it. Each run with both encoders measures the
spring again: with the identified model's link torque (link row J without its spring, tau_link = L_J beta'), the
deflection-domain fit of robid.elastic.stiffness gives k_J,r +- s_r per run r (identification and validation
runs alike: it uses their encoders, not their torques). When those disagree beyond their own std, the
between-run variance is estimated as in a random-effects meta-analysis (DerSimonian and Laird 1986, Controlled
Clinical Trials 7:177-188)::

    w_r = 1 / s_r^2,   k_bar = sum w_r k_r / sum w_r,   Q = sum w_r (k_r - k_bar)^2
    tau^2 = max(0, (Q - (R - 1)) / (sum w_r - sum w_r^2 / sum w_r))

and, where the runs disagree beyond chance (Cochran's Q above the 95th percentile of chi^2 with R - 1 degrees of
freedom, the conventional heterogeneity test), k_J's standard deviation becomes sqrt(std^2 + tau^2) (its
correlations kept): one run's spring is known to the run-to-run scatter, not to its own noise. With runs that
agree nothing changes (on the virtual robot, where the runs differ only by noise, one spring in twenty is widened
by chance, and then by about its own std). Measured on the
KR300 (docs/validation.md, "Why the campaign's k is low"): k_A2 from runs A, B, C 3.1e6 +- 0.27e6, 7.8e6 +- 1.6e6,
1.6e7 +- 1.6e7 N m/rad -- the 10-s runs do not agree on the spring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from robid.elastic.stiffness import StiffnessRun, joint_stiffness
from robid.estimation.results import EstimationResult
from robid.identification.datasets import elastic_rows

#: the runs disagree when Cochran's Q exceeds this quantile of chi^2 with R - 1 degrees of freedom
HETEROGENEITY_LEVEL = 0.95


@dataclass(frozen=True)
class SpringSpread:
    """One elastic joint's stiffness per run from its encoders (``per_run``, ``per_run_std``, runs named by
    ``sources``), the between-run standard deviation ``tau`` (0 when the runs agree) and Cochran's ``q``."""

    joint: str
    sources: tuple[str, ...]
    per_run: tuple[float, ...]
    per_run_std: tuple[float, ...]
    tau: float
    q: float


def spring_spreads(robot, datasets: Sequence, values: np.ndarray, names: Sequence[str]) -> list[SpringSpread]:
    """Per elastic joint with a stiffness column, the run-by-run stiffness of the encoders over ``datasets`` (each
    with link and motor positions; module docstring); empty with fewer than two such runs."""
    runs = [d for d in datasets if getattr(d.processed, "theta", None) is not None]
    springs = [(j, names.index(f"k_{robot.joint_names[j]}")) for j in robot.motor_joints
               if f"k_{robot.joint_names[j]}" in names]
    if len(runs) < 2 or not springs:
        return []
    without = np.asarray(values, dtype=float).copy()
    damping = {}
    for j, k in springs:
        without[k] = 0.0
        d_name = f"d_{robot.joint_names[j]}"
        if d_name in names:
            damping[j] = float(values[names.index(d_name)])
            without[names.index(d_name)] = 0.0
    link_torque = [elastic_rows(robot, d.processed, d.source)[0] @ without for d in runs]
    out = []
    for j, _k in springs:
        fits = [joint_stiffness(robot.joint_names[j], [_run(d.processed, tau[:, j], j)], damping.get(j, 0.0))
                for d, tau in zip(runs, link_torque, strict=True)]
        k = np.array([f.stiffness for f in fits])
        s = np.array([f.std for f in fits])
        tau_, q = _between_run(k, s)
        out.append(SpringSpread(robot.joint_names[j], tuple(d.source for d in runs), tuple(map(float, k)),
                                tuple(map(float, s)), tau_, q))
    return out


def widened(est: EstimationResult, spreads: Sequence[SpringSpread]) -> tuple[EstimationResult, tuple[str, ...]]:
    """(``est`` with each spring's std widened by its between-run scatter (module docstring), one note each)."""
    names = list(est.names)
    notes: list[str] = []
    scale = np.ones(len(names))
    for spread in spreads:
        i = names.index(f"k_{spread.joint}")
        runs = ", ".join(f"{k:.3g} +- {s:.2g}" for k, s in zip(spread.per_run, spread.per_run_std, strict=True))
        if spread.tau <= 0.0:
            notes.append(f"springs: k_{spread.joint} from each run's encoders {runs} N m/rad: the runs agree "
                         f"(Q = {spread.q:.3g} on {len(spread.per_run) - 1} dof)")
            continue
        std = float(est.std[i])
        scale[i] = np.hypot(std, spread.tau) / std if std > 0 else 1.0
        notes.append(f"springs: k_{spread.joint} from each run's encoders {runs} N m/rad disagree beyond their std "
                     f"(Q = {spread.q:.3g} on {len(spread.per_run) - 1} dof): its std includes the run-to-run "
                     f"scatter {spread.tau:.3g} ({std:.3g} -> {std * scale[i]:.3g}; DerSimonian-Laird)")
    if np.all(scale == 1.0):
        return est, tuple(notes)
    cov = np.asarray(est.covariance) * np.outer(scale, scale)
    return est.with_estimate(np.asarray(est.values), cov, notes=tuple(est.notes)), tuple(notes)


def _run(processed, tau_link: np.ndarray, j: int) -> StiffnessRun:
    """Joint j of one processed run, whole (the deflection fit needs the uniform grid; rows the data selection
    leaves out of the torque fit still carry the encoders' deflection)."""
    return StiffnessRun(np.asarray(processed.t, dtype=float), np.asarray(processed.q)[:, j],
                        np.asarray(processed.theta)[:, j], np.asarray(processed.qd)[:, j], np.asarray(tau_link))


def _between_run(k: np.ndarray, s: np.ndarray) -> tuple[float, float]:
    """(tau, Q): the DerSimonian-Laird between-run standard deviation and Cochran's Q."""
    ok = np.isfinite(k) & np.isfinite(s) & (s > 0)
    if ok.sum() < 2:
        return 0.0, 0.0
    w = 1.0 / s[ok] ** 2
    mean = np.sum(w * k[ok]) / np.sum(w)
    q = float(np.sum(w * (k[ok] - mean) ** 2))
    denominator = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    dof = int(ok.sum()) - 1
    if q <= chi2.ppf(HETEROGENEITY_LEVEL, dof) or denominator <= 0:
        return 0.0, q
    return float(np.sqrt(max(0.0, (q - dof) / denominator))), q
