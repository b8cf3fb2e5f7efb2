"""Straight-line programs: ordered assignments ``x_k = expr`` plus output expressions.

The derivation never expands the recursion into one expression (El-Rayyes 1990, section 2.5; see
../shared/reference/001_elrayyes_thesis.md): every non-trivial intermediate quantity (a component of an angular
velocity, an acceleration, a wrench) becomes a new symbol with its definition stored in order. Identical
definitions are shared (hash-consing), which is a first common-subexpression pass; sympy's ``cse`` runs over the
whole program afterwards (robid.symbolic.codegen).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp


@dataclass
class ProgramBuilder:
    """Collects intermediate assignments while a derivation runs."""

    prefix: str = "v"
    assignments: list[tuple[sp.Symbol, sp.Expr]] = field(default_factory=list)
    _seen: dict[sp.Expr, sp.Symbol] = field(default_factory=dict)

    def name(self, expr: sp.Expr) -> sp.Expr:
        """Return ``expr`` itself when trivial (number, symbol, +-number*symbol), else a shared new symbol."""
        expr = sp.sympify(expr)
        if _is_trivial(expr):
            return expr
        hit = self._seen.get(expr)
        if hit is not None:
            return hit
        neg = self._seen.get(-expr)
        if neg is not None:
            return -neg
        sym = sp.Symbol(f"{self.prefix}{len(self.assignments)}", real=True)
        self.assignments.append((sym, expr))
        self._seen[expr] = sym
        return sym

    def vector(self, exprs) -> sp.Matrix:
        return sp.Matrix([self.name(e) for e in exprs])


def _is_trivial(expr: sp.Expr) -> bool:
    if expr.is_Number or expr.is_Symbol:
        return True
    if expr.is_Mul and len(expr.args) == 2:
        a, b = expr.args
        return (a.is_Number and b.is_Symbol) or (b.is_Number and a.is_Symbol)
    return False


@dataclass(frozen=True)
class Program:
    """A derived straight-line program: inputs, ordered assignments and named outputs."""

    assignments: tuple[tuple[sp.Symbol, sp.Expr], ...]
    outputs: tuple[sp.Expr, ...]


def operation_counts(assignments, outputs) -> dict[str, int]:
    """Multiplications, additions and function calls of a straight-line program.

    Counting follows El-Rayyes (1990) section 4: a product of k factors is k-1 multiplications (a factor -1 is a
    sign change and not counted), a sum of k terms k-1 additions, an integer power x**n is n-1 multiplications,
    division counts as a multiplication; sin/cos/sign calls are counted separately.
    """
    counts = {"mul": 0, "add": 0, "call": 0}

    def visit(e):
        if e.is_Atom:
            return
        if e.is_Add:
            counts["add"] += len(e.args) - 1
        elif e.is_Mul:
            factors = [a for a in e.args if a not in (sp.S.NegativeOne,)]
            counts["mul"] += max(len(factors) - 1, 0)
        elif e.is_Pow:
            exp = e.exp
            if exp.is_Integer and exp > 0:
                counts["mul"] += int(exp) - 1
            elif exp.is_Integer and exp < 0:
                counts["mul"] += int(-exp)
            else:
                counts["call"] += 1
        elif e.is_Function:
            counts["call"] += 1
        for a in e.args:
            visit(a)

    for _, rhs in assignments:
        visit(rhs)
    for out in outputs:
        visit(out)
    return counts
