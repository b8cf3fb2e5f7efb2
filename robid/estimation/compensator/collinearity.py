"""Collinearity of compensator parameters with the gravity terms of their joint (docs/compensator.md, section 3).

Arrays only: the caller passes an estimate's covariance, values and names, and each compensator parameter's
"partners"; robid.identification.compensator_analysis finds the partners on a robot.

A compensator torque is a function of the joint angle only, like the gravity torque and a constant offset. With
a known geometry, the spring's stiffness column ``l dl/dq`` is even *exactly* a first harmonic of the joint
angle: on a robot whose axis-2 compensator is anchored on a body that does not tilt (axis 1 vertical), it is a
multiple of the gravity column of the first moment ``mx`` of the same joint's row, and only the *dynamic*
appearances of ``mx`` (coupling and centrifugal terms) separate the two. For every compensator parameter
``c`` and its "partners" p (the base parameters of the same joint row that also act at standstill: gravity,
offset, other compensator parameters) the report gives

* the pairwise correlation of the estimates ``rho_cp = S_cp / sqrt(S_cc S_pp)``, flagged by name when
  ``|rho_cp| > threshold``;
* the multiple correlation of ``c`` with all its gravity-related partners P (gravity and offset kinds),
  ``R^2 = 1 - 1 / (S_cc [S_BB^-1]_cc)`` with ``B = {c} u P`` (the squared correlation between the estimate of
  c and its best linear prediction from the estimates of P), flagged when ``R > threshold``. This is the
  k x k generalisation of the pair test: ``c`` can be confounded with a *combination* of gravity terms
  (e.g. ``mx`` and ``my`` of the same link: any first harmonic of the angle) while no single pair exceeds the
  threshold;
* the well-identified combined quantity: the direction of smallest variance of the covariance block ``S_BB``
  of ``c`` and its collinear partners, normalised so that the compensator parameter has coefficient 1::

      minimise  w^T S_BB w   subject to  w_c = 1    =>   w = S_BB^-1 e_c / [S_BB^-1]_cc,
      var(w^T theta) = 1 / [S_BB^-1]_cc = S_cc (1 - R_B^2)

  i.e. ``c + sum_p b_p p`` with ``b = -S_PP^-1 S_Pc`` (the regression of c on its partners). It is written
  as ``'comp_k_A2 - 9.11*mx_A2 + ...'`` with its value and standard deviation; ``std_ratio =
  sqrt(S_cc) / std(w^T theta) = 1 / sqrt(1 - R_B^2)`` says how much better it is determined than ``c`` alone.
  The partners in B are chosen greedily (largest gain in R first) until ``1 - R_B^2`` is within 25 % of the
  value with every partner, so the expression names the few terms that matter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.compensator._numbers import finite_or_none as _num
from robid.estimation.statistics import correlation_matrix

#: partner kinds that count as gravity-related (the multiple correlation is taken over these)
GRAVITY_KINDS = ("gravity", "offset")


@dataclass(frozen=True)
class PartnerCorrelation:
    """Correlation of a compensator parameter's estimate with one partner's."""

    name: str
    kind: str  # "gravity" | "offset" | "compensator" | any label the caller gives
    correlation: float
    flagged: bool


@dataclass(frozen=True)
class CombinedQuantity:
    """``sum_i coefficients[i] * theta[names[i]]``, the compensator parameter (first) with coefficient 1."""

    names: tuple[str, ...]
    coefficients: tuple[float, ...]
    value: float
    std: float
    std_alone: float  # standard deviation of the compensator parameter by itself
    multiple_correlation: float  # R of the compensator parameter with the other members

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    @property
    def std_ratio(self) -> float:
        """How many times better the combination is determined than the compensator parameter alone."""
        return self.std_alone / self.std if self.std > 0 else float("inf")

    def expression(self, digits: int = 4) -> str:
        parts = []
        for k, (c, n) in enumerate(zip(self.coefficients, self.names, strict=True)):
            mag = f"{abs(c):.{digits}g}"
            term = n if mag == "1" else f"{mag}*{n}"
            if k == 0:
                parts.append(term if c >= 0 else f"-{term}")
            else:
                parts.append(("+ " if c >= 0 else "- ") + term)
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {
            "expression": self.expression(),
            "names": list(self.names),
            "coefficients": [_num(c) for c in self.coefficients],
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "std_alone": _num(self.std_alone),
            "std_ratio": _num(self.std_ratio),
            "multiple_correlation": _num(self.multiple_correlation),
        }


@dataclass(frozen=True)
class CompensatorCollinearity:
    """Collinearity of one compensator parameter with the gravity-related parameters of its joint."""

    name: str
    joint: str | None
    value: float
    std: float
    partners: tuple[PartnerCorrelation, ...]  # strongest first
    multiple_correlation: float  # with every gravity-related partner (NaN: none)
    static_correlation: float | None  # R of the columns themselves at standstill (caller's, optional)
    flagged_pairs: tuple[str, ...]
    flagged: bool
    group: tuple[str, ...]  # partners in the combined quantity
    combined: CombinedQuantity | None
    threshold: float

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    def summary(self) -> str:
        """One line: what is collinear with what, and the quantity that is well identified."""
        rel = self.relative_std_percent
        head = f"{self.name} = {self.value:.6g} +- {self.std:.3g} ({rel:.3g} %)"
        if not self.flagged:
            best = self.partners[0] if self.partners else None
            tail = f"; strongest partner {best.name} (corr {best.correlation:+.3f})" if best else ""
            return (
                f"{head}: not collinear with the gravity terms of its joint (multiple corr "
                f"{self.multiple_correlation:.3f} <= {self.threshold:g}){tail}"
            )
        why = []
        if self.flagged_pairs:
            why.append(
                ", ".join(
                    f"{p.name} (corr {p.correlation:+.4f})" for p in self.partners if p.name in self.flagged_pairs
                )
            )
        if self.multiple_correlation > self.threshold:
            why.append(f"gravity terms of {self.joint or 'its joint'} together (multiple corr "
                       f"{self.multiple_correlation:.4f})")
        line = f"COLLINEAR {head} with " + "; ".join(why)
        if self.combined is not None:
            c = self.combined
            line += (
                f"; well identified: {c.expression()} = {c.value:.6g} +- {c.std:.3g} "
                f"({c.std_ratio:.3g}x better than {self.name} alone)"
            )
        return line

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "joint": self.joint,
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "flagged": self.flagged,
            "flagged_pairs": list(self.flagged_pairs),
            "multiple_correlation": _num(self.multiple_correlation),
            "static_correlation": None if self.static_correlation is None else _num(self.static_correlation),
            "partners": [
                {"name": p.name, "kind": p.kind, "correlation": _num(p.correlation), "flagged": p.flagged}
                for p in self.partners
            ],
            "group": list(self.group),
            "combined": None if self.combined is None else self.combined.to_dict(),
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class CollinearityReport:
    threshold: float
    entries: tuple[CompensatorCollinearity, ...]
    notes: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return any(e.flagged for e in self.entries)

    def by_name(self, name: str) -> CompensatorCollinearity:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    def lines(self) -> list[str]:
        return [e.summary() for e in self.entries]

    def to_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "flagged": self.flagged,
            "entries": [e.to_dict() for e in self.entries],
            "notes": list(self.notes),
        }


def multiple_correlation(covariance: np.ndarray, target: int, others: Sequence[int]) -> float:
    """R of estimate ``target`` with estimates ``others``: ``R^2 = 1 - 1/(S_cc [S_BB^-1]_cc)``, B = target + others.

    Computed on the correlation block (unit free). 1.0 when the block is singular (exact collinearity), NaN when
    the target's variance is not finite or there are no others.
    """
    others = [int(o) for o in others if int(o) != int(target)]
    if not others:
        return float("nan")
    idx = [int(target)] + others
    block = np.asarray(covariance, dtype=float)[np.ix_(idx, idx)]
    if not np.all(np.isfinite(block)):
        return float("nan")
    rho = correlation_matrix(block)
    if not np.all(np.isfinite(rho)):
        return float("nan")
    try:
        inv00 = np.linalg.solve(rho, np.eye(len(idx))[:, 0])[0]
    except np.linalg.LinAlgError:
        return 1.0
    if not np.isfinite(inv00) or inv00 <= 0:
        return 1.0
    return float(np.sqrt(np.clip(1.0 - 1.0 / inv00, 0.0, 1.0)))


def combined_quantity(
    covariance: np.ndarray, values: np.ndarray, names: Sequence[str], target: int, others: Sequence[int]
) -> CombinedQuantity:
    """Smallest-variance combination of ``target`` and ``others`` with coefficient 1 on ``target``:
    ``w = S^-1 e_c / [S^-1]_cc``, ``var = 1/[S^-1]_cc`` (S = covariance block; solved on the correlation block
    for conditioning and scaled back)."""
    idx = [int(target)] + [int(o) for o in others if int(o) != int(target)]
    cov = np.asarray(covariance, dtype=float)
    block = cov[np.ix_(idx, idx)]
    d = np.sqrt(np.diag(block))
    rho = block / np.outer(d, d)
    u = np.linalg.lstsq(rho, np.eye(len(idx))[:, 0], rcond=1e-14)[0]  # rho^-1 e_0
    w = (u / d) / (u[0] / d[0])  # back to parameter units, coefficient 1 on the target
    var = float(w @ block @ w)
    r = multiple_correlation(cov, idx[0], idx[1:])
    return CombinedQuantity(
        names=tuple(names[i] for i in idx),
        coefficients=tuple(float(x) for x in w),
        value=float(w @ np.asarray(values, dtype=float)[idx]),
        std=float(np.sqrt(max(var, 0.0))),
        std_alone=float(d[0]),
        multiple_correlation=r,
    )


def _greedy_group(covariance: np.ndarray, target: int, candidates: list[int], full_r: float) -> list[int]:
    """Partners in order of the largest gain in multiple correlation, until 1 - R^2 is within 25 % of the full
    group's (at least one partner)."""
    chosen: list[int] = []
    remaining = list(candidates)
    goal = 1.25 * (1.0 - full_r**2)
    while remaining:
        gains = [multiple_correlation(covariance, target, chosen + [c]) for c in remaining]
        best = int(np.nanargmax(np.nan_to_num(gains, nan=-1.0)))
        chosen.append(remaining.pop(best))
        if 1.0 - gains[best] ** 2 <= goal + 1e-15:
            break
    return chosen


def collinearity_report(
    covariance: np.ndarray,
    names: Sequence[str],
    values: np.ndarray,
    partners: Mapping[str, Mapping[str, str]],
    *,
    threshold: float = 0.95,
    joints: Mapping[str, str] | None = None,
    static_correlation: Mapping[str, float] | None = None,
    notes: Sequence[str] = (),
) -> CollinearityReport:
    """Collinearity of every compensator parameter with the gravity-related parameters of its joint.

    ``partners`` maps each compensator parameter name to ``{partner name: kind}``; kinds ``"gravity"`` and
    ``"offset"`` enter the multiple correlation, any other kind (``"compensator"``: the other parameters of the
    same compensator) only the pairwise test. ``joints`` ({compensator parameter: joint name}) and
    ``static_correlation`` ({compensator parameter: R of the columns at standstill}) are carried into the report.
    See the module docstring for the equations; ``threshold`` applies to |pairwise correlation| and to R.
    """
    names = [str(n) for n in names]
    cov = np.asarray(covariance, dtype=float)
    values = np.asarray(values, dtype=float)
    if cov.shape != (len(names), len(names)) or values.shape != (len(names),):
        raise RobidInputError(
            f"collinearity_report: covariance {cov.shape} and values {values.shape} must match {len(names)} names"
        )
    if not 0.0 < threshold < 1.0:
        raise RobidInputError(f"collinearity_report: threshold must lie in (0, 1), got {threshold!r}")
    index = {n: k for k, n in enumerate(names)}
    rho = correlation_matrix(cov)
    entries = []
    for comp, kinds in partners.items():
        if comp not in index:
            raise RobidInputError(f"collinearity_report: {comp!r} is not one of the parameters")
        missing = [p for p in kinds if p not in index]
        if missing:
            raise RobidInputError(f"collinearity_report: partner {missing[0]!r} of {comp} is not a parameter")
        joint = None if joints is None else joints.get(comp)
        static = None if static_correlation is None else static_correlation.get(comp)
        entries.append(_entry(cov, rho, values, names, comp, kinds, threshold, joint, static))
    all_notes = [
        f"compensator collinearity: flagged when |corr| with a partner > {threshold:g} or the multiple correlation "
        f"with the gravity-related partners (gravity, offset) > {threshold:g}; the combined quantity is the "
        "smallest-variance combination with coefficient 1 on the compensator parameter"
    ] + list(notes)
    return CollinearityReport(threshold, tuple(entries), tuple(all_notes))


def _entry(
    cov: np.ndarray,
    rho: np.ndarray,
    values: np.ndarray,
    names: list[str],
    comp: str,
    kinds: Mapping[str, str],
    threshold: float,
    joint: str | None,
    static: float | None,
) -> CompensatorCollinearity:
    """One compensator parameter's entry: pairwise and multiple correlation, combined quantity (module docstring)."""
    index = {n: k for k, n in enumerate(names)}
    c = index[comp]
    plist = []
    for p, kind in kinds.items():
        r = float(rho[c, index[p]])
        plist.append(PartnerCorrelation(p, str(kind), r, bool(np.isfinite(r) and abs(r) > threshold)))
    plist.sort(key=lambda x: -abs(np.nan_to_num(x.correlation)))
    gravity = [index[p.name] for p in plist if p.kind in GRAVITY_KINDS]
    full_r = multiple_correlation(cov, c, gravity) if gravity else float("nan")
    flagged_pairs = tuple(p.name for p in plist if p.flagged)
    group_flag = bool(np.isfinite(full_r) and full_r > threshold)
    group: list[int] = []
    if group_flag:
        group = _greedy_group(cov, c, gravity, full_r)
        group += [index[p] for p in flagged_pairs if index[p] not in group]
    elif flagged_pairs:
        group = [index[p] for p in flagged_pairs]
    combined = None
    finite = np.isfinite(cov[c, c]) and cov[c, c] > 0
    if group and finite and all(np.isfinite(cov[g, g]) and cov[g, g] > 0 for g in group):
        combined = combined_quantity(cov, values, names, c, group)
    return CompensatorCollinearity(
        name=comp,
        joint=joint,
        value=float(values[c]),
        std=float(np.sqrt(cov[c, c])) if cov[c, c] >= 0 else float("nan"),
        partners=tuple(plist),
        multiple_correlation=full_r,
        static_correlation=static,
        flagged_pairs=flagged_pairs,
        flagged=bool(flagged_pairs) or group_flag,
        group=tuple(names[g] for g in group),
        combined=combined,
        threshold=threshold,
    )
