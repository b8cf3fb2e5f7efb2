"""Code generation: straight-line numpy code vectorised over N samples, and an exact rational evaluator.

The derived program (assignments + regressor entries) goes through sympy's common-subexpression elimination
once; every generated function then keeps only the assignments its outputs need (dead-code elimination). The
numpy module imports nothing but numpy. The exact evaluator (fractions.Fraction arithmetic on rational states)
serves the exact base-parameter grouping (robid.symbolic.base_parameters).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from robid.symbolic.geometry import JointSymbols
from robid.symbolic.program import operation_counts


@dataclass(frozen=True)
class OptimisedProgram:
    """Assignments in dependency order and named outputs.

    Output keys: ``(row, column)`` for regressor entries (non-zero ones only) and ``(name, row)`` for torque
    outputs such as ``("tau", i)``.
    """

    assignments: tuple[tuple[sp.Symbol, sp.Expr], ...]
    entries: dict[tuple, sp.Expr]
    dof: int
    n_columns: int


def optimise(
    assignments, columns: list[list[sp.Expr]], extra: dict | None = None, use_cse: bool = True
) -> OptimisedProgram:
    """Run CSE over the whole program (assignments, regressor columns, extra outputs), order by dependencies."""
    dof = len(columns[0]) if columns else 0
    entries = {}
    for k, col in enumerate(columns):
        for i, e in enumerate(col):
            if e != 0:
                entries[(i, k)] = e
    entries.update(extra or {})
    keys = list(entries)
    rhs = [e for _, e in assignments] + [entries[k] for k in keys]
    if use_cse:
        reps, reduced = sp.cse(rhs, symbols=sp.numbered_symbols("t", real=True), order="none")
    else:
        reps, reduced = [], rhs
    n_assign = len(assignments)
    nodes = [(s, e) for s, e in reps] + [(sym, reduced[k]) for k, (sym, _) in enumerate(assignments)]
    ordered = _topological(nodes)
    new_entries = {key: reduced[n_assign + m] for m, key in enumerate(keys)}
    return OptimisedProgram(tuple(ordered), new_entries, dof, len(columns))


def regressor_entries(program: OptimisedProgram) -> dict[tuple[int, int], sp.Expr]:
    return {k: e for k, e in program.entries.items() if isinstance(k[0], int)}


def regressor_outputs(program: OptimisedProgram, columns: list[int]) -> dict[tuple[int, int], sp.Expr]:
    """Entries of the selected standard columns, keyed (row, position of the column in ``columns``)."""
    col_pos = {c: k for k, c in enumerate(columns)}
    return {(i, col_pos[c]): e for (i, c), e in regressor_entries(program).items() if c in col_pos}


def _topological(nodes):
    """Order assignments so that every symbol is defined before use (Kahn's algorithm, stable)."""
    defined = {s for s, _ in nodes}
    deps = {s: {f for f in e.free_symbols if f in defined} for s, e in nodes}
    users: dict[sp.Symbol, list[sp.Symbol]] = {s: [] for s, _ in nodes}
    for s, d in deps.items():
        for f in d:
            users[f].append(s)
    expr_of = dict(nodes)
    position = {s: k for k, (s, _) in enumerate(nodes)}
    import heapq

    remaining = {s: len(d) for s, d in deps.items()}
    ready = [(position[s], s.name, s) for s, c in remaining.items() if c == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, _, s = heapq.heappop(ready)
        out.append((s, expr_of[s]))
        for u in users[s]:
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, (position[u], u.name, u))
    if len(out) != len(nodes):
        raise RuntimeError("cyclic program after CSE")
    return out


def needed_assignments(program: OptimisedProgram, exprs) -> list[tuple[sp.Symbol, sp.Expr]]:
    """The assignments the given expressions depend on, in program order."""
    defs = dict(program.assignments)
    need = set()
    stack = [f for e in exprs for f in e.free_symbols if f in defs]
    while stack:
        s = stack.pop()
        if s in need:
            continue
        need.add(s)
        stack.extend(f for f in defs[s].free_symbols if f in defs and f not in need)
    return [(s, e) for s, e in program.assignments if s in need]


class _NumpyPrinter(PythonCodePrinter):
    def _print_Rational(self, expr):
        return repr(float(expr.p) / float(expr.q))

    def _print_Integer(self, expr):
        return f"{int(expr)}.0"

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Pow(self, expr, rational=False):
        base, exp = expr.args
        if exp.is_Integer and 1 < int(exp) <= 3:
            b = self.parenthesize(base, 100)
            return "*".join([b] * int(exp))
        if exp.is_Integer and int(exp) == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        if exp == sp.Rational(1, 2):
            return f"np.sqrt({self._print(base)})"
        if exp == sp.Rational(-1, 2):
            return f"(1.0/np.sqrt({self._print(base)}))"
        return f"{self.parenthesize(base, 100)}**({self._print(exp)})"


class _ExactPrinter(PythonCodePrinter):
    def _print_Rational(self, expr):
        return f"F({expr.p}, {expr.q})"

    def _print_Integer(self, expr):
        return str(int(expr))

    def _print_Float(self, expr):
        return f"F({repr(float(expr))!r})"


_NP = _NumpyPrinter({"fully_qualified_modules": False})
_EX = _ExactPrinter({"fully_qualified_modules": False})


#: numpy spelling of the joint inputs (see :func:`input_statements`)
NUMPY_INPUTS = {
    "angle": "q[:, {k}]",
    "sin": "np.sin({angle})",
    "cos": "np.cos({angle})",
    "q": "q[:, {k}]",
    "qd": "qd[:, {k}]",
    "sign": "np.sign({qd})",
    "csign": "np.sign(qd[:, {k}] + {rho} * qd[:, {m}])",
    "qdd": "qdd[:, {k}]",
    "dl": "q[:, {k}] - theta[:, {k}]",
    "thd": "thetad[:, {k}]",
    "sgm": "np.sign({thd})",
    "thdd": "thetadd[:, {k}]",
}

#: array arguments of the generated functions: joint states, then motor states for the elastic layout
JOINT_ARRAYS = ("q", "qd", "qdd")
MOTOR_ARRAYS = ("theta", "thetad", "thetadd")


def input_statements(
    symbols: list[JointSymbols], used: set, angle_offsets: list[float], spelling: dict[str, str], motors=()
) -> list[tuple[str, str]]:
    """``(variable, expression)`` for every joint input the program reads, in declaration order.

    Per joint k: sin and cos of ``q_k + offset_k`` (revolute), ``q_k`` (prismatic), ``qd_k`` (also when only its
    sign is used), ``sign(qd_k)``, for a coupled drive the sign of its motor velocity ``sign(qd_k + rho qd_m)``
    (docs/model.md, "Coupled drives"), and ``qdd_k``. ``spelling`` gives each in the target language: format
    strings over ``k``, ``angle`` (the spelled ``angle`` entry plus the offset), ``qd`` (the velocity's variable),
    and ``m``, ``rho`` (the coupled joint and ratio).
    """
    out = []
    for k, js in enumerate(symbols):
        off = angle_offsets[k]
        angle = spelling["angle"].format(k=k) + (f" + {off!r}" if off else "")
        present = (
            ("sin", js.s, js.revolute and js.s in used),
            ("cos", js.c, js.revolute and js.c in used),
            ("q", js.q, not js.revolute and js.q in used),
            ("qd", js.qd, js.qd in used or js.sign in used),
            ("sign", js.sign, js.sign in used),
            ("csign", js.coupled_sign, js.coupled_sign is not None and js.coupled_sign in used),
            ("qdd", js.qdd, js.qdd in used),
        )
        rho = repr(float(js.coupled_ratio)) if js.coupled_ratio is not None else None
        for kind, sym, needed in present:
            if needed:
                text = spelling[kind].format(k=k, angle=angle, qd=js.qd.name, m=js.coupled_joint, rho=rho)
                out.append((sym.name, text))
        if js.sum_joints and (js.s_sum in used or js.c_sum in used):
            out += _sum_angle_statements(js, used, angle_offsets, spelling)
    for m in motors:  # elastic layout: deflection q - theta, motor velocity, its sign, motor acceleration
        present = (
            ("dl", m.dl, m.dl in used),
            ("thd", m.thd, m.thd in used or m.sign in used),
            ("sgm", m.sign, m.sign in used),
            ("thdd", m.thdd, m.thdd in used),
        )
        for kind, sym, needed in present:
            if needed:
                out.append((sym.name, spelling[kind].format(k=m.joint, thd=m.thd.name)))
    return out


def _sum_angle_statements(js: JointSymbols, used: set, angle_offsets: list[float], spelling: dict[str, str]):
    """sin and cos of the sum of a parallel run's angles (and offsets), e.g. ``np.sin(q[:, 1] + q[:, 2])``."""
    offset = sum(angle_offsets[j] for j in js.sum_joints)
    angle = " + ".join(spelling["angle"].format(k=j) for j in js.sum_joints) + (f" + {offset!r}" if offset else "")
    return [
        (sym.name, spelling[kind].format(k=js.index - 1, angle=angle))
        for kind, sym in (("sin", js.s_sum), ("cos", js.c_sum))
        if sym in used
    ]


def sum_angle_operations(symbols: list[JointSymbols], used: set) -> dict[str, int]:
    """Additions and function calls of the sum-angle inputs a program reads: a run of r angles costs r - 1
    additions and one sin or cos call per symbol used (constant DH offsets are part of the input, as for
    single joints' sin(q + offset))."""
    counts = {"add": 0, "call": 0}
    for js in symbols:
        calls = int(js.s_sum in used) + int(js.c_sum in used) if js.sum_joints else 0
        if calls:
            counts["add"] += len(js.sum_joints) - 1
            counts["call"] += calls
    return counts


def free_symbols(assigns, exprs) -> set:
    used = set()
    for _, e in assigns:
        used |= e.free_symbols
    for e in exprs:
        used |= e.free_symbols
    return used


#: samples evaluated per block: intermediates of a block stay in the processor cache, and each intermediate is
#: released after its last use (memory traffic, not arithmetic, bounds straight-line numpy code)
CHUNK = 4096


def numpy_function(
    name: str,
    program: OptimisedProgram,
    symbols: list[JointSymbols],
    angle_offsets: list[float],
    columns: list[int] | None = None,
    torque_output: str | None = None,
    n_params: int = 0,
    motors=(),
) -> tuple[str, dict[str, int]]:
    """Source of a vectorised function and its operation counts.

    Regressor (``columns`` given): ``name(q, qd, qdd)`` -> (N, rows, len(columns)) with those standard columns.
    Torque (``torque_output`` given, e.g. "tau"): ``name(q, qd, qdd, params)`` -> (N, rows) from the outputs
    ``(torque_output, i)``, whose parameter inputs are the symbols ``<torque_output>_k`` = params[k].
    With ``motors`` (elastic layout) the motor states follow the joint states: ``name(q, qd, qdd, theta,
    thetad, thetadd, ...)``, all (N, dof). The work is done by ``_<name>_block`` on blocks of CHUNK samples.
    """
    if columns is not None:
        outputs = regressor_outputs(program, columns)
        target = "y"
    else:
        outputs = {(i,): e for (tag, i), e in program.entries.items() if tag == torque_output}
        target = "tau"
    assigns = needed_assignments(program, outputs.values())
    used = free_symbols(assigns, outputs.values())
    block = f"_{name}_block"
    arrays = JOINT_ARRAYS + (MOTOR_ARRAYS if motors else ())
    lines = _wrapper_lines(name, block, arrays, program.dof, columns)
    args = ", ".join(arrays) + (", y" if columns is not None else ", p, tau")
    lines += ["", "", f"def {block}({args}):"]
    statements = input_statements(symbols, used, angle_offsets, NUMPY_INPUTS, motors)
    lines += [f"    {var} = {expr}" for var, expr in statements]
    if columns is None:
        for k in range(n_params):
            sym = sp.Symbol(f"{torque_output}_{k}", real=True)
            if sym in used:
                lines.append(f"    {sym.name} = p[{k}]")
    lines += _interleaved_body(assigns, outputs, target)
    return "\n".join(lines) + "\n", operation_counts(assigns, list(outputs.values()))



def _wrapper_lines(name: str, block: str, arrays: tuple[str, ...], dof: int, columns: list[int] | None) -> list[str]:
    """The public function of :func:`numpy_function`: its inputs as float arrays, ``block`` called on blocks of
    CHUNK samples, the regressor (N, rows, columns; into ``out`` when given) or the torque (N, rows) returned."""
    width = len(columns) if columns is not None else 0
    extra = "params" if columns is None else "out=None"
    sliced = ", ".join(f"{a}[s:s + {CHUNK}]" for a in arrays)
    lines = [f"def {name}({', '.join(arrays)}, {extra}):"]
    lines += [f"    {a} = np.asarray({a}, dtype=float)" for a in arrays]
    lines += ["    n = q.shape[0]"]
    if columns is not None:
        return lines + [
            f"    y = np.zeros(({dof}, {width}, n))",
            f"    for s in range(0, n, {CHUNK}):",
            f"        {block}({sliced}, y[:, :, s:s + {CHUNK}])",
            "    y = y.transpose(2, 0, 1)",
            "    if out is not None:",
            "        out[...] = y",
            "        return out",
            "    return y",
        ]
    return lines + [
        "    p = np.asarray(params, dtype=float)",
        f"    tau = np.zeros(({dof}, n))",
        f"    for s in range(0, n, {CHUNK}):",
        f"        {block}({sliced}, p, tau[:, s:s + {CHUNK}])",
        "    return tau.T",
    ]

def _interleaved_body(assigns, outputs, target: str) -> list[str]:
    """Statements with each output written as soon as its inputs exist and ``del`` after every last use."""
    position = {s: k for k, (s, _) in enumerate(assigns)}
    by_step: dict[int, list] = {}
    for key, e in sorted(outputs.items()):
        deps = [position[f] for f in e.free_symbols if f in position]
        by_step.setdefault(max(deps) if deps else -1, []).append((key, e))
    statements = []  # (text, symbols read)
    for key, e in by_step.get(-1, []):
        statements.append((f"{target}[{', '.join(map(str, key))}] = {_NP.doprint(e)}", set()))
    for k, (sym, e) in enumerate(assigns):
        statements.append((f"{sym.name} = {_NP.doprint(e)}", {f for f in e.free_symbols if f in position}))
        for key, out in by_step.get(k, []):
            statements.append(
                (
                    f"{target}[{', '.join(map(str, key))}] = {_NP.doprint(out)}",
                    {f for f in out.free_symbols if f in position},
                )
            )
    last_use = {}
    for idx, (_, reads) in enumerate(statements):
        for f in reads:
            last_use[f] = idx
    frees: dict[int, list[str]] = {}
    for f, idx in last_use.items():
        frees.setdefault(idx, []).append(f.name)
    lines = []
    for idx, (text, _) in enumerate(statements):
        lines.append(f"    {text}")
        if idx in frees:
            lines.append(f"    del {', '.join(sorted(frees[idx]))}")
    return lines


def _is_rational_expr(e: sp.Expr) -> bool:
    """True when e is built from +, *, integer powers and rational numbers only."""
    for node in sp.preorder_traversal(e):
        if node.is_Pow and not node.exp.is_Integer:
            return False
        if node.is_Function or (node.is_Number and not node.is_Rational):
            return False
    return True


def nonrational_columns(program: OptimisedProgram) -> set[int]:
    """Regressor columns whose entries need sqrt or non-integer powers (no exact rational evaluation)."""
    bad = set()
    for s, e in program.assignments:
        if not _is_rational_expr(e) or e.free_symbols & bad:
            bad.add(s)
    return {k for (i, k), e in regressor_entries(program).items() if not _is_rational_expr(e) or e.free_symbols & bad}


def exact_function(program: OptimisedProgram, symbols: list[JointSymbols], motors=()) -> str:
    """Source of ``exact(values) -> {(row, col): Fraction}`` for a dict of Fraction inputs by symbol name.

    Columns that need sqrt or non-integer powers (gas and spring compensators) are left out.
    """
    lines = ["def exact(x):"]
    skip = nonrational_columns(program)
    entries = {key: e for key, e in regressor_entries(program).items() if key[1] not in skip}
    assigns = needed_assignments(program, entries.values())
    used = free_symbols(assigns, entries.values())
    for js in symbols:
        for s in (js.s, js.c, js.q, js.qd, js.qdd, js.sign, js.coupled_sign):
            if s is not None and s in used:
                lines.append(f"    {s.name} = x[{s.name!r}]")
    for m in motors:
        for s in (m.dl, m.thd, m.thdd, m.sign):
            if s in used:
                lines.append(f"    {s.name} = x[{s.name!r}]")
    for s, e in assigns:
        lines.append(f"    {s.name} = {_EX.doprint(e)}")
    lines.append("    return {")
    for (i, k), e in sorted(entries.items()):
        lines.append(f"        ({i}, {k}): {_EX.doprint(e)},")
    lines.append("    }")
    return "\n".join(lines) + "\n"
