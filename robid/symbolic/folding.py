"""Optimising passes over a straight-line program after CSE, in the order of El-Rayyes' CLEAR post-processor.

El-Rayyes (1990) section 3.6 (../shared/reference/001_elrayyes_thesis.md, section 2.6) optimises generated
dynamics code by dead-code removal, trigonometric simplification, pre-computation of constant terms, renaming of
duplicate products and factoring. sympy's ``cse`` (robid.symbolic.codegen.optimise) already renames duplicate
products and needed_assignments removes dead code; this module adds the other passes:

* :func:`merge_sums` (constant pre-computation): a sum used once, as ``c*s`` inside another sum, is inlined there
  so that terms on the same variable merge, ``0.0203*f + (x - 0.154*f)`` -> ``x - 0.1337*f``;
* :func:`factor_sums` (factoring): in every sum the factor (numeric coefficient or symbol) shared by most terms
  is taken out, ``c*a + c*b`` -> ``c*(a + b)``, greedily and recursively; every inner sum becomes a new shared
  assignment, so that equal sums are computed once;
* :func:`trig_identities`: a sum whose terms expand, through assignments that are single products, to
  monomials of the joint inputs is reduced by sin^2 + cos^2 = 1 (``(qd1 s2)^2 + (c2 qd1)^2`` -> ``qd1^2``).

Each pass keeps the program's value: every rewrite is an algebraic identity (distributivity, or sin^2 + cos^2 = 1
on the exact sine and cosine inputs). :func:`customise` runs them and keeps a pass only when the count
(:func:`robid.symbolic.program.operation_counts` after dead-code removal) does not rise.
"""

from __future__ import annotations

import sympy as sp

from robid.symbolic.codegen import OptimisedProgram, _topological, needed_assignments
from robid.symbolic.program import operation_counts


def program_counts(program: OptimisedProgram, keys=None) -> dict[str, int]:
    """Multiplications, additions and calls of the assignments the outputs ``keys`` (default all) need."""
    exprs = [program.entries[k] for k in (keys if keys is not None else program.entries)]
    return operation_counts(needed_assignments(program, exprs), exprs)


def _total(counts: dict[str, int]) -> int:
    return counts["mul"] + counts["add"]


def fresh_symbols(program: OptimisedProgram, prefix: str):
    """New real symbols ``<prefix><k>`` whose names the program does not use yet."""
    taken = {s.name for s, _ in program.assignments}
    for _, e in program.assignments:
        taken |= {f.name for f in e.free_symbols}
    for e in program.entries.values():
        taken |= {f.name for f in e.free_symbols}
    return (s for s in sp.numbered_symbols(prefix, real=True) if s.name not in taken)


class _Factorer:
    """Greedy common-factor extraction (El-Rayyes' factoring pass, ``z = s*(-a - b)``), naming inner sums."""

    def __init__(self, names):
        self.names = names
        self.new: list[tuple[sp.Symbol, sp.Expr]] = []
        self._seen: dict[sp.Expr, sp.Symbol] = {}

    def name(self, expr: sp.Expr) -> sp.Expr:
        if expr in self._seen:
            return self._seen[expr]
        if -expr in self._seen:
            return -self._seen[-expr]
        sym = next(self.names)
        self.new.append((sym, expr))
        self._seen[expr] = sym
        return sym

    def expr(self, e: sp.Expr) -> sp.Expr:
        if e.is_Atom:
            return e
        e = e.func(*[self.expr(a) for a in e.args])
        return self.sum(list(e.args)) if e.is_Add else e

    def sum(self, terms: list[sp.Expr]) -> sp.Expr:
        """Take out of ``terms`` the factor most of them share (k terms: k - 1 multiplications saved)."""
        holders: dict[tuple, list[int]] = {}
        for idx, term in enumerate(terms):
            coeff, rest = term.as_coeff_Mul()
            if abs(coeff) != 1:
                holders.setdefault((0, abs(coeff)), []).append(idx)
            if rest != 1:
                for base in rest.as_powers_dict():
                    holders.setdefault((1, base), []).append(idx)
        best = None
        for key, idxs in holders.items():
            if len(idxs) < 2:
                continue
            rank = (-len(idxs), key[0], sp.default_sort_key(key[1]))
            if best is None or rank < best[0]:
                best = (rank, key[1], idxs)
        if best is None:
            return sp.Add(*terms)
        _, factor, idxs = best
        inner = self.sum([terms[i] / factor for i in idxs])
        if inner.is_Add:
            inner = self.name(inner)
        out = factor * inner
        rest = [t for i, t in enumerate(terms) if i not in set(idxs)]
        return out + self.sum(rest) if rest else out


def _factored_cost(expr: sp.Expr) -> int:
    f = _Factorer(sp.numbered_symbols("_dry", real=True))
    e = f.expr(expr)
    return _total(operation_counts(f.new, [e]))


def factor_sums(program: OptimisedProgram, prefix: str = "fz") -> OptimisedProgram:
    """Factoring pass (El-Rayyes 1990 section 3.6 item 5, ``-Z2*sy2 - Y4*sy2`` -> ``sy2*(-Z2 - Y4)``)."""
    f = _Factorer(fresh_symbols(program, prefix))
    out: list[tuple[sp.Symbol, sp.Expr]] = []
    for sym, e in program.assignments:
        rhs = f.expr(e)
        out += f.new
        f.new = []
        out.append((sym, rhs))
    entries = {}
    for key, e in program.entries.items():
        entries[key] = f.expr(e)
        out += f.new
        f.new = []
    return OptimisedProgram(tuple(out), entries, program.dof, program.n_columns)


def _uses(assigns, entries, defined) -> dict[sp.Symbol, list[tuple[str, object]]]:
    uses: dict[sp.Symbol, list[tuple[str, object]]] = {}
    for k, (_, e) in enumerate(assigns):
        for f in e.free_symbols & defined:
            uses.setdefault(f, []).append(("a", k))
    for key, e in entries.items():
        for f in e.free_symbols & defined:
            uses.setdefault(f, []).append(("o", key))
    return uses


def merge_sums(program: OptimisedProgram) -> OptimisedProgram:
    """Constant pre-computation (El-Rayyes 1990 section 3.6 item 3): inline a sum ``s`` used by exactly one sum,
    as a term ``c*s`` with a numeric c, when the factored cost of the result is not higher than that of both;
    repeated until nothing changes. Terms on the same symbol then merge with their constants folded."""
    assigns = list(program.assignments)
    entries = dict(program.entries)
    changed = True
    while changed:
        changed = False
        defined = {s for s, _ in assigns}
        uses = _uses(assigns, entries, defined)
        for sym, e in assigns:
            if not e.is_Add or len(uses.get(sym, ())) != 1:
                continue
            kind, where = uses[sym][0]
            user = assigns[where][1] if kind == "a" else entries[where]
            if not user.is_Add:
                continue
            coeff = user.coeff(sym)
            if not coeff.is_Number or coeff == 0 or (user - coeff * sym).has(sym):
                continue
            merged = user - coeff * sym + coeff * e
            if _factored_cost(merged) > _factored_cost(user) + _factored_cost(e):
                continue
            if kind == "a":
                assigns[where] = (assigns[where][0], merged)
            else:
                entries[where] = merged
            assigns = [(s, x) for s, x in assigns if s != sym]
            changed = True
            break
    return OptimisedProgram(tuple(assigns), entries, program.dof, program.n_columns)


def recse(program: OptimisedProgram, prefix: str = "rc") -> OptimisedProgram:
    """sympy ``cse`` once more over the whole program (new common products after factoring)."""
    keys = list(program.entries)
    rhs = [e for _, e in program.assignments] + [program.entries[k] for k in keys]
    reps, reduced = sp.cse(rhs, symbols=fresh_symbols(program, prefix), order="none")
    n = len(program.assignments)
    nodes = list(reps) + [(s, reduced[i]) for i, (s, _) in enumerate(program.assignments)]
    entries = {k: reduced[n + m] for m, k in enumerate(keys)}
    return OptimisedProgram(tuple(_topological(nodes)), entries, program.dof, program.n_columns)


def expand_scalings(program: OptimisedProgram) -> OptimisedProgram:
    """Undo CSE's naming of scaled products ``t = c*x*...`` (numeric c) by inlining them into their users, so that
    :func:`factor_sums` can take c out of a whole sum (``c*x*y - c*z`` -> ``c*(x*y - z)``); run
    :func:`factor_sums` and :func:`recse` after it."""
    scaled = {}
    for sym, e in program.assignments:
        e = e.xreplace(scaled)
        if e.is_Mul and e.as_coeff_Mul()[0].is_Number and abs(e.as_coeff_Mul()[0]) != 1:
            scaled[sym] = e
    assigns = tuple((s, e.xreplace(scaled)) for s, e in program.assignments if s not in scaled)
    entries = {k: e.xreplace(scaled) for k, e in program.entries.items()}
    return OptimisedProgram(assigns, entries, program.dof, program.n_columns)


def fold_scalings(program: OptimisedProgram) -> OptimisedProgram:
    """Constant folding across assignments: a term ``d*s*...`` (numeric d) of an assignment ``s = c*x`` (numeric
    c, one symbol x) becomes ``(d*c)*x*...``, one multiplication instead of two; ``s`` dies when no other use is
    left (El-Rayyes' constant pre-computation, ``x001 = j32 - j22`` folded offline)."""
    scaled = {}
    for sym, e in program.assignments:
        coeff, rest = e.as_coeff_Mul()
        if e.is_Mul and coeff.is_Number and abs(coeff) != 1 and rest.is_Symbol:
            scaled[sym] = (coeff, rest)

    def fold(e: sp.Expr) -> sp.Expr:
        if e.is_Atom:
            return e
        e = e.func(*[fold(a) for a in e.args])
        if not e.is_Mul:
            return e
        coeff, rest = e.as_coeff_Mul()
        if abs(coeff) == 1:
            return e
        for f in sp.Mul.make_args(rest):
            if f in scaled:
                c, x = scaled[f]
                return coeff * c * (rest / f) * x
        return e

    assigns = tuple((s, fold(e)) for s, e in program.assignments)
    entries = {k: fold(e) for k, e in program.entries.items()}
    return OptimisedProgram(assigns, entries, program.dof, program.n_columns)


def _is_monomial(e: sp.Expr) -> bool:
    return e.is_Atom or (e.is_Mul or e.is_Pow) and all(a.is_Atom for a in e.args)


def trig_identities(program: OptimisedProgram, pairs: list[tuple[sp.Symbol, sp.Symbol]]) -> OptimisedProgram:
    """sin^2 + cos^2 = 1 (El-Rayyes 1990 section 3.6 item 2, ``-C2*QD1*C2*QD1 - S2*QD1*S2*QD1`` -> ``-QD1*QD1``).

    ``pairs`` are the (sine, cosine) input symbols. A sum is expanded, either to monomials of the inputs (when
    its terms are products of inputs and of assignments that are themselves such products) or one level deep
    (its operands that are short sums, such as the components (c x - s y, -c y - s x) of a rotated vector, whose
    squares add to x^2 + y^2), and reduced with s^2 -> 1 - c^2; when that leaves fewer terms the sum is replaced
    by the reduced (factored) form, kept only if the program's count drops (the operands it read may die).
    """
    monomial: dict[sp.Symbol, sp.Expr] = {}
    for sym, e in program.assignments:
        if _is_monomial(e):
            monomial[sym] = e.xreplace(monomial)
    best = program
    best_total = _total(program_counts(program))
    names = fresh_symbols(program, "tg")
    defs = dict(program.assignments)
    candidates = []
    for sym, e in program.assignments:
        if not e.is_Add:
            continue
        if all(_is_monomial(t) for t in e.args):
            candidates.append((sym, e, e.xreplace(monomial)))
        # one level: operands that are short sums of products (a rotated vector component c*x - s*y)
        short = {f: defs[f] for f in e.free_symbols if f in defs and len(sp.Add.make_args(defs[f])) <= 3}
        if short:
            candidates.append((sym, e, e.xreplace(short)))
    for sym, _, inlined in candidates:
        present = inlined.free_symbols
        both = [(s, c) for s, c in pairs if s in present and c in present]
        if not both:
            continue
        expanded = sp.expand(inlined)
        squares = {s**2: 1 - c**2 for s, c in both if expanded.has(s**2)}
        if not squares:
            continue
        reduced = sp.expand(expanded.xreplace(squares))
        if len(sp.Add.make_args(reduced)) >= len(sp.Add.make_args(expanded)):
            continue
        f = _Factorer(names)
        rhs = f.expr(reduced)
        trial_assigns = []
        for s, x in best.assignments:
            if s == sym:
                trial_assigns += f.new
                x = rhs
            trial_assigns.append((s, x))
        trial = OptimisedProgram(tuple(trial_assigns), best.entries, best.dof, best.n_columns)
        total = _total(program_counts(trial))
        if total < best_total:
            best, best_total = trial, total
    return best


def customise(
    program: OptimisedProgram, pairs: list[tuple[sp.Symbol, sp.Symbol]], stages: list | None = None
) -> OptimisedProgram:
    """The passes in CLEAR's order (trigonometric identities, constants, common products, factoring; a second
    round after undoing the naming of scaled products), each kept only when the operation count does not rise;
    dead code is left out by the count and by code generation. ``stages``, when a list, receives
    ``(pass name, counts after it)`` like CLEAR's statistics report (El-Rayyes 1990 Fig. 3.9)."""
    passes = (
        ("trigonometric identities", lambda p: trig_identities(p, pairs)),
        ("constants merged", merge_sums),
        ("factoring", factor_sums),
        ("common products (CSE)", recse),
        ("trigonometric identities", lambda p: trig_identities(p, pairs)),
        ("scaled products re-factored", lambda p: recse(factor_sums(expand_scalings(p)))),
        ("trigonometric identities", lambda p: trig_identities(p, pairs)),
        ("constant chains folded", fold_scalings),
    )
    best = program
    best_counts = program_counts(program)
    for name, step in passes:
        trial = step(best)
        counts = program_counts(trial)
        if _total(counts) <= _total(best_counts):
            best, best_counts = trial, counts
        if stages is not None:
            stages.append((name, dict(best_counts)))
    return best
