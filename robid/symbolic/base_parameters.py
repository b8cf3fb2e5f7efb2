"""Base parameters: numeric rank and column selection, exact grouping coefficients, classes.

1. Rank and selection (Gautier 1990, "Numerical calculation of the base inertial parameters of robots"):
   the standard regressor is stacked on random states, columns are scaled to unit norm and put in a
   priority order (per body: Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m, then Ia, Iam; friction last), and an
   unpivoted QR keeps a column when the norm of its component orthogonal to the earlier columns exceeds
   ``RANK_TOLERANCE`` (relative to its own norm). Earlier parameters thus absorb later ones, which gives the
   classical groupings such as ``Izz_A1 + Iyy_A2 + ...`` named after the kept parameter.
2. Grouping, exactly: the same regressor is evaluated in rational arithmetic on rational states (sin and cos
   from rational points of the unit circle, c = (1 - t^2)/(1 + t^2), s = 2t/(1 + t^2)); the coefficients of
   the dependent columns on the kept ones solve W_kept B = W_dep exactly (normal equations over QQ). They are
   accepted when they reproduce the exact rows exactly and the float rows to 1e-9; otherwise (constants that
   are not exactly representable, e.g. URDF angles) the float least-squares coefficients are used and the
   result says so (``exact = False``).
3. Classes: ``unidentifiable`` (zero column), ``identifiable`` (kept, nothing grouped into it), ``grouped``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

#: relative norm below which a column counts as zero, and the QR tolerance on unit-norm columns
ZERO_TOLERANCE = 1e-10
RANK_TOLERANCE = 1e-8

_INERTIAL_PRIORITY = {
    "Ixx": 0,
    "Ixy": 1,
    "Ixz": 2,
    "Iyy": 3,
    "Iyz": 4,
    "Izz": 5,
    "mx": 6,
    "my": 7,
    "mz": 8,
    "m": 9,
    "Ia": 10,
    "Iam": 11,
}


@dataclass(frozen=True)
class BaseDerivation:
    """What the derivation stores in the cache about the base parameters."""

    indices: tuple[int, ...]  # kept standard columns, in standard order
    grouping: tuple[tuple[float, ...], ...]  # (nb, P)
    grouping_exact: tuple[tuple[str, ...], ...] | None  # rational strings, or None when numeric
    expressions: tuple[str, ...]
    classes: dict[str, str]
    exact: bool
    check_error: float  # max relative |Y theta - Yb beta| on fresh random states


def priority_order(names: list[str], joint_names: list[str]) -> list[int]:
    """Standard column indices sorted by selection priority (earlier ones are kept)."""
    joint_rank = {n: k for k, n in enumerate(joint_names)}

    def key(idx):
        prefix, _, joint = names[idx].partition("_")
        j = joint_rank.get(joint, len(joint_names))
        if prefix in _INERTIAL_PRIORITY:
            return (0, j, _INERTIAL_PRIORITY[prefix], idx)
        return (1, idx, 0, idx)

    return sorted(range(len(names)), key=key)


def random_states(rng: np.random.Generator, n: int, dof: int, revolute: list[bool], motors: bool = False):
    """Random (q, qd, qdd), followed by (theta, thetad, thetadd) for the elastic layout."""
    q = rng.uniform(-np.pi, np.pi, (n, dof))
    for k, r in enumerate(revolute):
        if not r:
            q[:, k] = rng.uniform(-0.5, 0.5, n)
    qd = rng.uniform(-2.0, 2.0, (n, dof))
    qdd = rng.uniform(-5.0, 5.0, (n, dof))
    if not motors:
        return q, qd, qdd
    theta = q - rng.uniform(-0.5, 0.5, (n, dof))
    return q, qd, qdd, theta, rng.uniform(-2.0, 2.0, (n, dof)), rng.uniform(-5.0, 5.0, (n, dof))


def select_columns(w: np.ndarray, order: list[int]) -> tuple[list[int], list[int]]:
    """(kept, zero) standard column indices from the stacked float regressor w (rows, P)."""
    norms = np.linalg.norm(w, axis=0)
    scale = max(float(norms.max()), 1e-300)
    zero = [k for k in range(w.shape[1]) if norms[k] <= ZERO_TOLERANCE * scale]
    candidates = [k for k in order if k not in zero]
    wn = w[:, candidates] / norms[candidates]
    r = np.linalg.qr(wn, mode="r")
    kept = [c for c, d in zip(candidates, np.abs(np.diag(r)), strict=True) if d > RANK_TOLERANCE]
    return sorted(kept), zero


def rational_states(seed: int, n: int, symbols, motors=()) -> list[dict[str, Fraction]]:
    rnd = random.Random(seed)
    states = []
    for _ in range(n):
        x = {}
        for js in symbols:
            if js.revolute:
                t = Fraction(rnd.randint(-7, 7), rnd.randint(1, 5))
                x[js.s.name] = 2 * t / (1 + t * t)
                x[js.c.name] = (1 - t * t) / (1 + t * t)
            else:
                x[js.q.name] = Fraction(rnd.randint(-5, 5), rnd.randint(1, 9))
            x[js.qd.name] = Fraction(rnd.choice([-3, -2, -1, 1, 2, 3]), rnd.randint(1, 3))
            x[js.qdd.name] = Fraction(rnd.randint(-4, 4), rnd.randint(1, 3))
            x[js.sign.name] = Fraction(1 if x[js.qd.name] > 0 else -1)
        for js in symbols:  # coupled drives: the sign of the motor velocity qd_J + rho qd_K (0 when it is 0)
            if js.coupled_sign is not None:
                rho = Fraction(int(js.coupled_ratio.p), int(js.coupled_ratio.q))
                v = x[js.qd.name] + rho * x[symbols[js.coupled_joint].qd.name]
                x[js.coupled_sign.name] = Fraction((v > 0) - (v < 0))
        for m in motors:
            x[m.dl.name] = Fraction(rnd.randint(-5, 5), rnd.randint(1, 9))
            x[m.thd.name] = Fraction(rnd.choice([-3, -2, -1, 1, 2, 3]), rnd.randint(1, 3))
            x[m.thdd.name] = Fraction(rnd.randint(-4, 4), rnd.randint(1, 3))
            x[m.sign.name] = Fraction(1 if x[m.thd.name] > 0 else -1)
        states.append(x)
    return states


def exact_grouping(exact_eval, states, rows: int, kept: list[int], dependent: list[int]):
    """Exact B with W[:, dependent] = W[:, kept] B on the rational states, or None if inconsistent."""
    rows_kept, rows_dep = [], []
    for x in states:
        values = exact_eval(x)
        for i in range(rows):
            rows_kept.append([QQ.convert(values.get((i, k), 0)) for k in kept])
            rows_dep.append([QQ.convert(values.get((i, k), 0)) for k in dependent])
    wk = DomainMatrix(rows_kept, (len(rows_kept), len(kept)), QQ)
    wd = DomainMatrix(rows_dep, (len(rows_dep), len(dependent)), QQ)
    wkt = wk.transpose()
    normal = wkt.matmul(wk)
    try:
        b = normal.lu_solve(wkt.matmul(wd))
    except Exception:  # singular: the numeric rank decision and the exact rows disagree
        return None
    if wk.matmul(b) != wd:
        return None
    return [[Fraction(int(v.numerator), int(v.denominator)) for v in row] for row in b.to_Matrix().tolist()]


def format_coefficient(c: Fraction) -> str:
    """Exact decimal when the denominator has only factors 2 and 5, else p/q."""
    den = c.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den == 1 and max(twos, fives) <= 24:
        digits = max(twos, fives)
        text = f"{c.numerator * 10**digits // c.denominator}"
        sign = "-" if text.startswith("-") else ""
        text = text.lstrip("-").rjust(digits + 1, "0")
        whole, frac = text[: len(text) - digits], text[len(text) - digits :]
        frac = frac.rstrip("0")
        return sign + whole + ("." + frac if frac else "")
    return f"{c.numerator}/{c.denominator}"


def expression(name: str, terms: list[tuple[str, object]]) -> str:
    """'name + coeff*other ...' with exact (Fraction) or float coefficients."""
    parts = [name]
    for other, c in terms:
        value = float(c)
        if isinstance(c, Fraction):
            text = format_coefficient(abs(c))
        else:
            text = f"{abs(value):.15g}"
        sign = "-" if value < 0 else "+"
        parts.append(f" {sign} {other}" if text == "1" else f" {sign} {text}*{other}")
    return "".join(parts)


def classify(names, kept, zero, grouping) -> dict[str, str]:
    classes = {}
    for k, name in enumerate(names):
        if k in zero:
            classes[name] = "unidentifiable"
    for row, k in enumerate(kept):
        others = [j for j in range(len(names)) if j != k and grouping[row][j] != 0]
        classes[names[k]] = "grouped" if others else "identifiable"
    for name in names:
        classes.setdefault(name, "grouped")
    return classes


def derive_base(
    names: list[str],
    joint_names: list[str],
    revolute: list[bool],
    numeric_regressor,
    exact_eval,
    symbols,
    seed: int = 20261125,
    inexact_columns: set[int] | frozenset[int] = frozenset(),
    motors=(),
    priority_joints: list[str] | None = None,
    state_sampler=None,
) -> BaseDerivation:
    """Rank, selection, grouping and classes (module docstring).

    ``inexact_columns`` (compensator columns with sqrt) have no exact rational evaluation: the exact solve runs
    without them when they are kept and nothing groups into them; if one of them is dependent, or carries a
    grouping coefficient, the float grouping is used. ``motors`` (the elastic layout's motor symbols): the
    states then include motor positions, velocities and accelerations, and each state has their rows too.

    Closed chains (robid.symbolic.closed_chain): ``priority_joints`` orders the bodies of the whole tree (default
    ``joint_names``); ``state_sampler(rng, n)`` draws states where the loops close (default
    :func:`random_states`); ``exact_eval`` None (a numeric chain) keeps the float grouping.
    """
    p = len(names)
    dof = len(joint_names)
    rows = dof + len(motors)
    rng = np.random.default_rng(seed)
    n_states = max(int(math.ceil(3 * p / rows)), 40)

    def draw(generator, n):
        if state_sampler is not None:
            return state_sampler(generator, n)
        return random_states(generator, n, dof, revolute, bool(motors))

    w = numeric_regressor(*draw(rng, n_states)).reshape(-1, p)
    kept, zero = select_columns(w, priority_order(names, priority_joints or joint_names))
    dependent = [k for k in range(p) if k not in kept and k not in zero]
    states = rational_states(seed, int(math.ceil(1.5 * len(kept) / rows)) + 4, symbols, motors)
    b_float, fractions_b = grouping_coefficients(w, kept, dependent, exact_eval, states, rows, inexact_columns)
    exact = not dependent or fractions_b is not None
    grouping, grouping_exact, exprs = grouping_rows(names, kept, dependent, b_float, fractions_b)
    # check back on fresh states: Y theta == Yb (G theta) for random theta
    y2 = numeric_regressor(*draw(np.random.default_rng(seed + 1), 25))
    theta = np.random.default_rng(seed + 2).normal(size=p)
    full = y2 @ theta
    base = y2[:, :, kept] @ (grouping @ theta)
    check = float(np.abs(full - base).max() / max(np.abs(full).max(), 1e-300))
    return BaseDerivation(
        indices=tuple(kept),
        grouping=tuple(tuple(float(v) for v in row) for row in grouping),
        grouping_exact=tuple(tuple(r) for r in grouping_exact) if grouping_exact is not None else None,
        expressions=tuple(exprs),
        classes=classify(names, kept, zero, grouping),
        exact=exact,
        check_error=check,
    )


def grouping_coefficients(
    w: np.ndarray, kept: list[int], dependent: list[int], exact_eval, states, rows: int, inexact_columns
) -> tuple[np.ndarray, list[list[Fraction]] | None]:
    """``B`` with ``W[:, dependent] = W[:, kept] B`` (module docstring, step 2): the float least-squares ``B``,
    and the exact one (then also as floats) when it exists and reproduces the float rows to 1e-9, else None."""
    b_float = np.linalg.lstsq(w[:, kept], w[:, dependent], rcond=None)[0] if dependent else np.zeros((len(kept), 0))
    if not dependent:
        return b_float, None
    rational_kept = [k for k in kept if k not in inexact_columns]
    inexact_kept_rows = [r for r, k in enumerate(kept) if k in inexact_columns]
    exact_possible = exact_eval is not None and not any(d in inexact_columns for d in dependent) and (
        not inexact_kept_rows or np.abs(b_float[inexact_kept_rows]).max(initial=0.0) < 1e-9
    )
    sub = exact_grouping(exact_eval, states, rows, rational_kept, dependent) if exact_possible else None
    if sub is None:
        return b_float, None
    zero_row = [Fraction(0)] * len(dependent)
    by_kept = dict(zip(rational_kept, sub, strict=True))
    fractions_b = [by_kept.get(k, zero_row) for k in kept]
    b_exact = np.array([[float(v) for v in row] for row in fractions_b])
    scale = max(float(np.abs(w).max()), 1e-300)
    if np.abs(w[:, kept] @ b_exact - w[:, dependent]).max() <= 1e-9 * scale:
        return b_exact, fractions_b
    return b_float, None


def grouping_rows(names: list[str], kept: list[int], dependent: list[int], b_float: np.ndarray, fractions_b):
    """The grouping matrix G (nb, P), its exact entries as strings (None without exact ``B``) and the base
    parameter expressions: row r is 1 on kept column r and ``B[r, d]`` on dependent column d."""
    p = len(names)
    grouping = np.zeros((len(kept), p))
    exact = not dependent or fractions_b is not None
    grouping_exact = [["0"] * p for _ in kept] if exact else None
    exprs = []
    for row, k in enumerate(kept):
        grouping[row, k] = 1.0
        terms = []
        if grouping_exact is not None:
            grouping_exact[row][k] = "1"
        for col, d in enumerate(dependent):
            coeff = fractions_b[row][col] if fractions_b is not None else float(b_float[row, col])
            if coeff == 0 or (not isinstance(coeff, Fraction) and abs(coeff) < 1e-12):
                continue
            grouping[row, d] = float(coeff)
            if grouping_exact is not None:
                grouping_exact[row][d] = str(coeff)
            terms.append((names[d], coeff))
        exprs.append(expression(names[k], terms))
    return grouping, grouping_exact, exprs
