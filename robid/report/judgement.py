"""The verdict of every run and joint, and of the identified model against each reference model, computed from the
record alone (docs/report.md, "Verdicts").

A verdict judges only what the run can judge:

* **A joint at rest** in a run (its peak processed speed below ``REST_SPEED``, the data selection's default
  minimum speed) is not judged: its torque is static friction and gravity holding, which the identified model
  does not predict (no standstill model), so its NRMSE -- often hundreds of per cent of a small holding torque --
  says nothing about the fit. The verdict lists it as "at rest, not judged". A joint without used samples is left
  out the same way.
* **A moving joint** is judged on the samples the fit used: NRMSE against ``nrmse_good_percent`` and
  ``nrmse_acceptable_percent``, and the share of those samples inside the 95 % prediction band. The band counts
  the model error (robid.identification.run_records.model_error_std), so a run predicted as well as the
  identification data are fitted holds about 95 % of its samples inside. The share needed for GOOD is
  ``band_coverage_good_percent``, lowered by three binomial standard errors of a 95 % share over the run's
  effectively independent samples (:func:`coverage_needed`): a band-limited signal of bandwidth B sampled at f_s
  holds about 2 B / f_s independent samples per sample (Nyquist), so a few hundred smooth samples are a few
  dozen independent draws, whose share inside the band scatters by several per cent.
* **Against a reference model** (a published or nominal parameter set scored on the same samples), per moving
  joint: better, as good (NRMSE within ``TIE_RELATIVE`` of the reference's) or worse; a run is "better" when no
  joint is worse and one is better, "worse" when no joint is better and one is worse, "as good" when every joint
  ties, and "mixed" otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from robid.defaults import DEFAULT_MIN_SPEED

#: rad/s (m/s): a joint whose peak processed speed in a run stays below this is at rest in that run
REST_SPEED = DEFAULT_MIN_SPEED
#: NRMSE of robid and a reference within this fraction of the reference's: as good
TIE_RELATIVE = 0.05
#: the share of samples inside the 95 % band expected of a right model, percent
BAND_PERCENT = 95.0
#: binomial standard errors the needed share may lie below BAND_PERCENT on few independent samples
COVERAGE_SIGMAS = 3.0

LEVELS = ("good", "warn", "bad")
#: the order of severity of levels (not judged first)
SEVERITY = {"rest": -1, "info": 0, "good": 1, "warn": 2, "bad": 3}


@dataclass(frozen=True)
class JointJudgement:
    """The verdict on one joint of one run: ``level`` good, warn, bad, or ``rest`` (at rest or without used
    samples: not judged); ``reason`` one line that says why."""

    joint: str
    level: str
    nrmse: float | None
    coverage: float | None
    coverage_needed: float | None
    samples: int
    reason: str

    @property
    def judged(self) -> bool:
        return self.level != "rest"


@dataclass(frozen=True)
class ReferenceComparison:
    """robid against one reference model on one run, over the run's moving joints: ``outcome`` better, as good,
    worse or mixed; per joint (moving ones) robid's and the reference's NRMSE."""

    label: str
    outcome: str
    joints: tuple[str, ...]
    ours: tuple[float, ...]
    theirs: tuple[float, ...]

    @property
    def level(self) -> str:
        return {"better": "good", "as good": "info", "mixed": "warn", "worse": "bad"}[self.outcome]

    def counts(self) -> dict[str, int]:
        out = {"better": 0, "as good": 0, "worse": 0}
        for a, b in zip(self.ours, self.theirs, strict=True):
            out[_joint_outcome(a, b)] += 1
        return out

    @property
    def verb(self) -> str:
        """'better than', 'as good as', 'worse than' or 'mixed against' (the reference)."""
        return {"better": "better than", "as good": "as good as", "worse": "worse than",
                "mixed": "mixed against"}[self.outcome]

    @property
    def text(self) -> str:
        pairs = ", ".join(f"{j} {a:.3g} vs {b:.3g} %" for j, a, b in zip(self.joints, self.ours, self.theirs,
                                                                         strict=True))
        return f"{self.verb} {self.label}" + (f" (NRMSE robid vs reference: {pairs})" if pairs else "")


@dataclass(frozen=True)
class RunJudgement:
    """The verdicts of one run: per joint, and against each reference model."""

    label: str
    file: str
    role: str
    joints: tuple[JointJudgement, ...]
    comparisons: tuple[ReferenceComparison, ...]

    @property
    def name(self) -> str:
        return Path(self.file).name

    @property
    def moving(self) -> tuple[str, ...]:
        return tuple(j.joint for j in self.joints if j.judged)

    @property
    def at_rest(self) -> tuple[str, ...]:
        return tuple(j.joint for j in self.joints if not j.judged)

    @property
    def kind(self) -> str:
        """``excitation`` (two or more joints move), ``single-joint`` or ``at rest`` (no joint moves)."""
        n = len(self.moving)
        return "excitation" if n >= 2 else ("single-joint" if n == 1 else "at rest")

    @property
    def level(self) -> str:
        judged = [j.level for j in self.joints if j.judged]
        return max(judged, key=SEVERITY.get) if judged else "rest"


def _joint_outcome(ours: float, theirs: float) -> str:
    if abs(ours - theirs) <= TIE_RELATIVE * abs(theirs):
        return "as good"
    return "better" if ours < theirs else "worse"


def run_outcome(outcomes) -> str:
    """The outcome of a run from its joints' (module docstring)."""
    kinds = set(outcomes)
    if not kinds or kinds == {"as good"}:
        return "as good"
    if "worse" not in kinds:
        return "better"
    return "worse" if "better" not in kinds else "mixed"


def bandwidth_hz(run) -> float | None:
    """The bandwidth of a run's processed torque: the highest kept harmonic of a periodic grid, else the low-pass
    cut-off; None when neither is recorded (every sample counts as independent)."""
    if run.harmonics and run.period_s:
        return max(run.harmonics) / run.period_s
    return run.cutoff_hz or None


def effective_samples(run, used: int) -> float:
    """Effectively independent samples among ``used`` ones of a run: ``used * min(1, 2 B / f_s)`` (module
    docstring)."""
    band = bandwidth_hz(run)
    if band is None or not run.sample_rate_hz:
        return float(used)
    return used * min(1.0, 2.0 * band / run.sample_rate_hz)


def coverage_needed(run, used: int, thresholds) -> float:
    """The share of samples inside the band a good fit needs on this run (percent): ``band_coverage_good_percent``,
    or lower on few independent samples, ``95 - 3 sqrt(95 * 5 / n_eff)`` (module docstring)."""
    n_eff = max(effective_samples(run, used), 1.0)
    spread = COVERAGE_SIGMAS * math.sqrt(BAND_PERCENT * (100.0 - BAND_PERCENT) / n_eff)
    return max(0.0, min(thresholds.band_coverage_good_percent, BAND_PERCENT - spread))


def nrmse_level(value, thresholds) -> str:
    if value is None:
        return "info"
    if value < thresholds.nrmse_good_percent:
        return "good"
    return "warn" if value < thresholds.nrmse_acceptable_percent else "bad"


def judge_joint(run, j: int, thresholds, speed_unit: str = "rad/s") -> JointJudgement:
    """The verdict on joint ``j`` of ``run`` (module docstring)."""
    m = run.fit.per_joint[j]
    used = int(run.samples - run.unused_rows_per_joint[j])
    peak = run.ranges[j].qd_peak
    if peak < REST_SPEED:
        reason = f"at rest (peak speed {peak:.2g} < {REST_SPEED:g} {speed_unit}): not judged"
        return JointJudgement(m.joint, "rest", m.nrmse_percent, m.inside_band_percent, None, used, reason)
    if used <= 0 or m.nrmse_percent is None:
        reason = "no sample the fit used (all slower than the minimum speed or left out): not judged"
        return JointJudgement(m.joint, "rest", m.nrmse_percent, m.inside_band_percent, None, used, reason)
    needed = coverage_needed(run, used, thresholds)
    level = nrmse_level(m.nrmse_percent, thresholds)
    reason = f"NRMSE {m.nrmse_percent:.3g} % on {used} samples"
    if m.inside_band_percent is not None:
        reason += f", {m.inside_band_percent:.3g} % inside the 95 % band (good needs {needed:.3g} %)"
        if level == "good" and m.inside_band_percent < needed:
            level = "warn"
    return JointJudgement(m.joint, level, m.nrmse_percent, m.inside_band_percent, needed, used, reason)


def compare(run, reference, joints: tuple[JointJudgement, ...]) -> ReferenceComparison:
    """robid against a reference fit (robid.record.ReferenceFit) on the run's judged joints."""
    pairs = [(j.joint, j.nrmse, r.nrmse_percent) for j, r in zip(joints, reference.fit.per_joint, strict=True)
             if j.judged and j.nrmse is not None and r.nrmse_percent is not None]
    names = tuple(p[0] for p in pairs)
    ours = tuple(float(p[1]) for p in pairs)
    theirs = tuple(float(p[2]) for p in pairs)
    outcome = run_outcome(_joint_outcome(a, b) for a, b in zip(ours, theirs, strict=True))
    return ReferenceComparison(reference.label, outcome, names, ours, theirs)


def judge_run(run, thresholds, speed_units=None) -> RunJudgement:
    """Every verdict of one run (robid.record.RunRecord)."""
    units = speed_units or ["rad/s"] * len(run.fit.per_joint)
    joints = tuple(judge_joint(run, j, thresholds, units[j]) for j in range(len(run.fit.per_joint)))
    comparisons = tuple(compare(run, ref, joints) for ref in run.references)
    return RunJudgement(run.label, run.file, run.role, joints, comparisons)


def judge_runs(data) -> tuple[RunJudgement, ...]:
    """The verdicts of every run of the report data (identification runs first)."""
    units = ["rad/s" if j.revolute else "m/s" for j in data.robot.model.joints]
    return tuple(judge_run(run, data.thresholds, units) for run in data.runs)
