"""Optional compiled backend: the same optimised straight-line program as C.

The numpy code (codegen.py) is the reference and always exists. When a C compiler is available (``cc``/``gcc``
on PATH), the regressor functions are also emitted as C and compiled into the cache entry (robid.symbolic.cbuild:
a portable library, and one per processor with ``-march=native``; IEEE arithmetic, no fast-math), called through
ctypes on C-contiguous float64 arrays (robid.dynamics.compiled). Results agree with the numpy code to rounding
(tested on every built-in robot).

Two forms of a regressor function, same C signature and contract (q, qd, qdd (n, dof) row-major in, y (n, dof,
columns) row-major out, every entry written):

- :func:`c_function`, the library's: *batched* over samples. The program runs on GCC/clang vector types of
  ROBID_W lanes, one sample per lane, so that every arithmetic instruction serves 2 (SSE2), 4 (AVX2) or 8
  (AVX-512) samples;
  sin and cos come from one vector kernel (fdlibm's polynomials after a Cody-Waite reduction; libm for
  |q| > 1e5); a block's entries are kept one vector each and written to y transposed in registers, with
  non-temporal stores when y is too large to stay in cache.
- :func:`portable_c_function`: the plain per-sample C99 loop (the batched form's fallback, and the standalone
  source of ``robid export-model --format c``).
"""

from __future__ import annotations

import re

from sympy.printing.c import C99CodePrinter

from robid.symbolic.ccode_prelude import PRELUDE as _PRELUDE  # the batched functions' C prelude
from robid.symbolic.codegen import (
    OptimisedProgram,
    free_symbols,
    input_statements,
    needed_assignments,
    regressor_outputs,
)
from robid.symbolic.geometry import JointSymbols


class _CPrinter(C99CodePrinter):
    def _print_Pow(self, expr):
        base, exp = expr.args
        if exp.is_Integer and 1 < int(exp) <= 3:
            b = self.parenthesize(base, 100)
            return "(" + "*".join([b] * int(exp)) + ")"
        if exp.is_Integer and int(exp) == -1:
            return f"(1.0/{self.parenthesize(base, 100)})"
        return super()._print_Pow(expr)

    def _print_Rational(self, expr):
        return repr(float(expr.p) / float(expr.q))

    def _print_Integer(self, expr):
        return f"{int(expr)}.0"


_C = _CPrinter()

#: C spelling of the joint inputs (see :func:`robid.symbolic.codegen.input_statements`)
C_INPUTS = {
    "angle": "qk[{k}]",
    "sin": "sin({angle})",
    "cos": "cos({angle})",
    "q": "qk[{k}]",
    "qd": "qdk[{k}]",
    "sign": "({qd} > 0) - ({qd} < 0)",
    "csign": "((qdk[{k}] + {rho} * qdk[{m}]) > 0) - ((qdk[{k}] + {rho} * qdk[{m}]) < 0)",
    "qdd": "qddk[{k}]",
}


def portable_c_function(
    name: str,
    program: OptimisedProgram,
    symbols: list[JointSymbols],
    angle_offsets: list[float],
    columns: list[int],
) -> str:
    """``void name(const double *q, const double *qd, const double *qdd, long n, double *y)``: one sample after
    the other, plain C99 and libm (the standalone exported source; the batched library's scalar fallback).

    q, qd, qdd are (n, dof) row-major; y is (n, dof, len(columns)) row-major; every entry is written.
    """
    dof = program.dof
    width = len(columns)
    outputs = regressor_outputs(program, columns)
    # every entry, zeros included: y needs no clearing and is written sequentially
    writes = [(f"yk[{i * width + k}]", outputs.get((i, k))) for i in range(dof) for k in range(width)]
    return _c_loop(name, "y", dof * width, program, symbols, angle_offsets, outputs.values(), writes)


def c_torque_function(
    name: str,
    program: OptimisedProgram,
    symbols: list[JointSymbols],
    angle_offsets: list[float],
    output_tag: str,
) -> str:
    """``void name(const double *q, const double *qd, const double *qdd, long n, double *tau)``: the program's
    outputs ``(output_tag, i)`` (torques whose parameters are numbers, e.g. an exported model's inverse
    dynamics), tau (n, dof) row-major."""
    dof = program.dof
    outputs = {i: e for (tag, i), e in program.entries.items() if tag == output_tag}
    writes = [(f"tauk[{i}]", outputs.get(i)) for i in range(dof)]
    return _c_loop(name, "tau", dof, program, symbols, angle_offsets, outputs.values(), writes)


def _c_loop(name, out, stride, program, symbols, angle_offsets, exprs, writes) -> str:
    """``void name(q, qd, qdd, n, out)``: per sample, the joint inputs, the program's assignments that ``exprs``
    need, then ``writes`` (target, expression or None for 0)."""
    dof = program.dof
    assigns = needed_assignments(program, exprs)
    used = free_symbols(assigns, exprs)
    lines = [
        f"void {name}(const double *q, const double *qd, const double *qdd, long n, double *{out}) {{",
        "    for (long k = 0; k < n; ++k) {",
        f"        const double *qk = q + {dof} * k, *qdk = qd + {dof} * k, *qddk = qdd + {dof} * k;",
        f"        double *{out}k = {out} + {stride} * k;",
    ]
    lines += [f"        const double {v} = {e};" for v, e in input_statements(symbols, used, angle_offsets, C_INPUTS)]
    for s, e in assigns:
        lines.append(f"        const double {s.name} = {_C.doprint(e)};")
    lines += [f"        {target} = {_C.doprint(e) if e is not None else '0.0'};" for target, e in writes]
    lines += ["    }", "}"]
    return "\n".join(lines) + "\n"


# ---- the batched form of the compiled library ---------------------------------------------------------------------
#: vector spelling of the joint inputs (ROBID_W samples: row-major (ROBID_W, dof) blocks of q, qd, qdd)
V_INPUTS = {
    "angle": "robid_load(q, {dof}, {k})",
    "sin": "robid_vsin({angle})",
    "cos": "robid_vcos({angle})",
    "q": "robid_load(q, {dof}, {k})",
    "qd": "robid_load(qd, {dof}, {k})",
    "sign": "robid_vsign({qd})",
    "csign": "robid_vsign(robid_load(qd, {dof}, {k}) + {rho} * robid_load(qd, {dof}, {m}))",
    "qdd": "robid_load(qdd, {dof}, {k})",
}


#: pieces in which a block's rows are written out during the next block's arithmetic (the memory writes overlap
#: the arithmetic; in one burst the non-temporal stores back up and stall it). Measured (UR10e-like base regressor,
#: 81 groups of 4 entries per block, N = 10^4, streamed; 200 rounds interleaved in one process, loaded 2-core VM),
#: time per round relative to generator 10: 1 piece 0.79, 4 pieces 0.90, 8 1.01, 16 0.90, 32 0.67, 81 0.64
DRAIN_PIECES = 32


class _Unsupported(Exception):
    """An expression the vector printer does not spell; the function is then emitted in the scalar form only."""


class _VectorPrinter(_CPrinter):
    """C of an expression on ``robid_v`` vectors: arithmetic as is (scalar constants broadcast), sqrt, sign and
    math functions lane-wise; anything else (comparisons, piecewise) is refused."""

    def _print_Pow(self, expr):
        base, exp = expr.args
        b = self.parenthesize(base, 100)
        if exp.is_Integer and 1 < int(exp) <= 3:
            return "(" + "*".join([b] * int(exp)) + ")"
        if exp.is_Integer and -3 <= int(exp) <= -1:
            return "(1.0/(" + "*".join([b] * -int(exp)) + "))"
        if exp == 0.5:
            return f"robid_vsqrt({self._print(base)})"
        if exp == -0.5:
            return f"(1.0/robid_vsqrt({self._print(base)}))"
        return f"robid_lanes2(pow, {self._print(base)}, robid_splat({self._print(exp)}))"

    def _print_sign(self, expr):
        return f"robid_vsign({self._print(expr.args[0])})"

    def _print_math_func(self, expr, nest=False, known=None):
        name = known if known is not None else self.known_functions.get(expr.__class__.__name__)
        if not isinstance(name, str) or len(expr.args) not in (1, 2):
            raise _Unsupported(str(expr.func))
        args = ", ".join(self._print(a) for a in expr.args)
        return f"robid_lanes{len(expr.args)}({name}, {args})"

    def _print_Relational(self, expr):
        raise _Unsupported(str(expr))

    def _print_Piecewise(self, expr):
        raise _Unsupported("Piecewise")

    def _print_Function(self, expr):
        raise _Unsupported(str(expr.func))


_V = _VectorPrinter()
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def _vector_text(e) -> str:
    text = _V.doprint(e)
    stray = {m for m in _CALL.findall(text) if not m.startswith("robid_")}
    if stray:  # a call the printer did not spell lane-wise (nested in an argument list, say)
        raise _Unsupported(", ".join(sorted(stray)))
    return text


def c_function(
    name: str,
    program: OptimisedProgram,
    symbols: list[JointSymbols],
    angle_offsets: list[float],
    columns: list[int],
) -> str:
    """The compiled library's ``void name(const double *q, const double *qd, const double *qdd, long n,
    double *y)``: q, qd, qdd (n, dof) row-major, y (n, dof, len(columns)) row-major, every entry written.

    Batched: ROBID_W samples at a time (2 with SSE2, 4 with AVX, 8 with AVX-512) evaluate the program on
    vectors, one lane per sample (structure of arrays in registers), sin and cos of each angle from one vector kernel
    (``robid_vsincos``), each joint input read just before its first use and the statements in an order that keeps
    few values live (:func:`_pressure_order`). Each variable entry of the rows is stored as one vector (one of two
    small buffers: the block's and the previous one's); while the next block computes, the previous one is written
    to y in ``DRAIN_PIECES`` pieces spread over its statements: W consecutive entries of the W rows at a time,
    transposed in registers (a W x W butterfly of shuffles), one vector store per row; groups that hold only
    structural zeros and constants are stored from the constant template. The stores are non-temporal when y is
    larger than ``ROBID_STREAM_BYTES`` (writing the 2.6 kB row of a 6-axis robot through the cache would read every
    line of y first) and go straight to y when each group is an aligned vector there (y aligned to a vector, row
    length a multiple of W); otherwise through a buffer of W rows copied to y. Compiled with
    ``-DROBID_SCALAR_ONLY`` (or when the vector printer cannot spell an expression) it is the plain per-sample loop
    of :func:`portable_c_function`.
    """
    scalar = portable_c_function(f"{name}_scalar", program, symbols, angle_offsets, columns)
    try:
        batched = _batched_function(name, program, symbols, angle_offsets, columns)
    except _Unsupported:
        batched = None
    forward = (
        f"void {name}(const double *q, const double *qd, const double *qdd, long n, double *y) {{\n"
        f"    {name}_scalar(q, qd, qdd, n, y);\n}}\n"
    )
    if batched is None:
        return "#include <math.h>\n" + scalar + forward
    return (
        _PRELUDE
        + "#ifdef ROBID_SCALAR_ONLY\n"
        + scalar.replace(f"void {name}_scalar(", f"static void {name}_scalar(", 1)
        + forward
        + "#else\n"
        + batched
        + "#endif\n"
    )


def _demand_order(assigns, exprs) -> list:
    """The assignments in the order the outputs ``exprs`` first need them (depth first, dependencies before their
    user): every intermediate is computed next to its first use, which shortens live ranges in the straight-line
    vector code (a vector register holds a value of every lane; spilled ones cost a store and a load each)."""
    defs = dict(assigns)
    order, seen = [], set()
    for e in exprs:
        stack = [(f, False) for f in sorted(e.free_symbols & defs.keys(), key=str, reverse=True)]
        while stack:
            sym, ready = stack.pop()
            if ready:
                order.append((sym, defs[sym]))
                continue
            if sym in seen:
                continue
            seen.add(sym)
            stack.append((sym, True))
            stack += [
                (f, False) for f in sorted(defs[sym].free_symbols & defs.keys(), key=str, reverse=True) if f not in seen
            ]
    return order


def _batched_function(name, program, symbols, angle_offsets, columns) -> str:
    """The batched C of :func:`c_function`: the constant template, the drain pieces for 2, 4 and 8 lanes, the
    block function (the program's statements with the previous block's drains spread over them) and the driver
    (:func:`_batched_driver`)."""
    dof = program.dof
    width = len(columns)
    stride = dof * width
    outputs = regressor_outputs(program, columns)
    template = [0.0] * stride
    variable = []
    for (i, k), e in sorted(outputs.items()):
        if e.free_symbols:
            variable.append((i * width + k, e))
        else:
            template[i * width + k] = float(e)
    slot = {idx: j for j, (idx, _) in enumerate(variable)}
    assigns = _demand_order(needed_assignments(program, outputs.values()), [e for _, e in variable])
    used = free_symbols(assigns, outputs.values())
    spelling = {key: text.replace("{dof}", str(dof)) for key, text in V_INPUTS.items()}
    # each joint input is read just before its first use, the statements in an order that keeps few values live
    # (a vector register holds a value of every lane; spilled ones cost a store and loads)
    pending = _input_lines(input_statements(symbols, used, angle_offsets, spelling))
    order = {text: k for k, (_, text) in enumerate(pending)}
    body = []

    def emit(line, e):
        names, inputs = {f.name for f in e.free_symbols}, []
        while True:  # the inputs it reads, and the inputs those read (a sign reads its velocity)
            needed = [item for item in pending if item[0] & names]
            if not needed:
                break
            names = set().union(*(set(_IDENT.findall(text)) for _, text in needed))
            for item in needed:
                pending.remove(item)
                inputs.append(item[1])
        body.extend(sorted(inputs, key=order.__getitem__))  # declaration order: a velocity before its sign
        body.append(line)

    for kind, target, e in _pressure_order(assigns, [(slot[idx], e) for idx, e in variable]):
        text = _vector_text(e)
        emit(f"    const robid_v {target.name} = {text};" if kind == "a" else f"    T[{target}] = {text};", e)
    drained = _with_drains(name, body, DRAIN_PIECES)
    nvar = max(len(variable), 1)
    values = ", ".join(repr(v) for v in template + [0.0] * 8)
    lines = [
        f"static const double {name}_template[{stride + 8}] __attribute__((aligned(64))) = {{{values}}};",
        "",
        "/* rows of the block whose variable entries are T (one vector per entry, a lane per sample) to d, W rows of",
        f" * {stride} doubles: W entries of the W rows at a time, transposed in registers (non-temporal when nt) */",
    ]
    for w in (2, 4, 8):
        lines.append(f"#{'if' if w == 2 else 'elif'} ROBID_W == {w}")
        lines += _drain_pieces(name, w, stride, template, slot, DRAIN_PIECES)
    lines += ["#endif", ""]
    lines += _batched_driver(name, dof, stride, nvar, drained)
    return "\n".join(lines) + "\n"


def _batched_driver(name, dof: int, stride: int, nvar: int, drained: list[str]) -> list[str]:
    """C: ``{name}_drain_all``, ``{name}_block`` (the statements ``drained``) and ``void {name}(q, qd, qdd, n, y)``,
    which runs the blocks two by two (one computed while the other is written: direct to y or through a bounce
    buffer, non-temporal above ROBID_STREAM_BYTES) and the last samples padded with zero states."""
    total = f"ROBID_W * {stride}"
    parts = DRAIN_PIECES
    return [
        f"static __attribute__((noinline)) void {name}_drain_all(double *dst, const robid_v *prev, int nt) {{",
        *[f"    if (nt) {name}_drain{p}(dst, prev, 1); else {name}_drain{p}(dst, prev, 0);" for p in range(parts)],
        "}",
        "",
        "/* ROBID_W samples: q, qd, qdd (ROBID_W, dof) row-major; their variable entries into T; meanwhile the",
        " * previous block's rows (variable entries prev) to dst (none when dst is NULL) */",
        f"static void {name}_block(const double *q, const double *qd, const double *qdd, robid_v *restrict T,",
        "                         double *dst, const robid_v *restrict prev, int nt) {",
        *drained,
        "}",
        "",
        f"void {name}(const double *q, const double *qd, const double *qdd, long n, double *y) {{",
        f"    robid_v T[2][{nvar}];  /* the variable entries of two blocks: one computed while the other is written */",
        f"    double bounce[{total} + 8] __attribute__((aligned(64)));",
        f"    const int stream = (double)n * {stride * 8} >= (double)ROBID_STREAM_BYTES;",
        "    /* rows straight to y when every W entries of a row are one aligned vector there; else through bounce */",
        f"    const int direct = {stride} % ROBID_W == 0 && (uintptr_t)y % sizeof(robid_v) == 0;",
        "    const int nt = stream && direct;",
        "    double *dst = 0;",
        "    const robid_v *prev = 0;",
        "    long k = 0;",
        "    for (int b = 0; k + ROBID_W <= n; k += ROBID_W, b ^= 1) {",
        f"        {name}_block(q + {dof} * k, qd + {dof} * k, qdd + {dof} * k, T[b], direct ? dst : (dst ? bounce : 0),"
        " prev, nt);",
        f"        if (dst && !direct) robid_copy(dst, bounce, {total}, stream);",
        f"        dst = y + {stride} * k;",
        "        prev = T[b];",
        "    }",
        "    if (dst) {",
        f"        {name}_drain_all(direct ? dst : bounce, prev, nt);",
        f"        if (!direct) robid_copy(dst, bounce, {total}, stream);",
        "    }",
        "    if (k < n) {  /* the last samples, padded with zero states */",
        f"        double tq[ROBID_W * {dof}] = {{0}}, tqd[ROBID_W * {dof}] = {{0}}, tqdd[ROBID_W * {dof}] = {{0}};",
        f"        const size_t m = (size_t)(n - k) * {dof} * sizeof(double);",
        f"        memcpy(tq, q + {dof} * k, m);",
        f"        memcpy(tqd, qd + {dof} * k, m);",
        f"        memcpy(tqdd, qdd + {dof} * k, m);",
        f"        {name}_block(tq, tqd, tqdd, T[0], 0, 0, 0);",
        f"        {name}_drain_all(bounce, T[0], 0);",
        f"        memcpy(y + {stride} * k, bounce, (size_t)(n - k) * {stride} * sizeof(double));",
        "    }",
        "    if (stream) robid_fence();",
        "}",
    ]


def _with_drains(name, body: list[str], parts: int) -> list[str]:
    """``body`` with the previous block's rows going out in ``parts`` pieces spread evenly over its statements."""
    drained, done = [], 0  # the previous block's rows go out in `parts` pieces spread over this block's statements
    for k, statement in enumerate(body):
        drained.append(statement)
        while done < (k + 1) * parts // len(body):
            drained.append(
                f"    if (dst) {{ if (nt) {name}_drain{done}(dst, prev, 1); else {name}_drain{done}(dst, prev, 0); }}"
            )
            done += 1
    return drained + [  # (a program without statements)
        f"    if (dst) {{ if (nt) {name}_drain{p}(dst, prev, 1); else {name}_drain{p}(dst, prev, 0); }}"
        for p in range(done, parts)
    ]


def _drain_pieces(name, w, stride, template, slot, parts) -> list[str]:
    """``{name}_drain{p}(d, T, nt)`` for p < parts, for ``w`` lanes: the rows d (w rows of ``stride`` entries) in
    groups of w consecutive entries; a group of constants is the template's (the same in every row), any other
    the transpose of its entries' vectors (``T[slot]``, a lane per row; constants broadcast): one vector per row.
    The last group of rows whose length is not a multiple of w is stored entry by entry."""
    groups = []
    for g in range(0, stride, w):
        m = min(w, stride - g)
        rows = [f"d + {row * stride + g}" for row in range(w)]

        def store(r, v, m=m):
            return f"robid_out({r}, {v}, nt);" if m == w else f"robid_out_part({r}, {v}, {m});"

        if not any(g + e in slot for e in range(m)):
            code = [f"robid_v c; memcpy(&c, {name}_template + {g}, sizeof c);"] + [store(r, "c") for r in rows]
        else:
            vectors = [
                f"T[{slot[g + e]}]" if g + e in slot else f"robid_splat({template[g + e] if e < m else 0.0!r})"
                for e in range(w)
            ]
            code = [f"robid_v r[{w}] = {{{', '.join(vectors)}}};", "robid_transpose(r);"]
            code += [store(r, f"r[{row}]") for row, r in enumerate(rows)]
        groups.append("    { " + " ".join(code) + " }")
    out = []
    for p in range(parts):
        out.append(f"ROBID_INLINE void {name}_drain{p}(double *d, const robid_v *T, const int nt) {{")
        out += groups[len(groups) * p // parts : len(groups) * (p + 1) // parts]
        out.append("}")
    return out


_SIN, _COS = re.compile(r"^robid_vsin\((.*)\)$"), re.compile(r"^robid_vcos\((.*)\)$")


def _input_lines(statements) -> list[tuple[set, str]]:
    """``(names, declaration)`` of the joint inputs; the sine and cosine of one angle from one ``robid_vsincos``
    call (the compiler does not merge two calls: each has its own libm branch)."""
    cosines = {m.group(1): v for v, e in statements if (m := _COS.match(e))}
    sines = {m.group(1): v for v, e in statements if (m := _SIN.match(e))}
    lines = []
    for v, e in statements:
        s, c = _SIN.match(e), _COS.match(e)
        if s and s.group(1) in cosines:
            cv = cosines[s.group(1)]
            text = (
                f"    const robid_sc sc_{v} = robid_vsincos({s.group(1)});\n"
                f"    const robid_v {v} = sc_{v}.s, {cv} = sc_{v}.c;"
            )
            lines.append(({v, cv}, text))
        elif c and c.group(1) in sines:
            continue
        else:
            lines.append(({v}, f"    const robid_v {v} = {e};"))
    return lines


def _pressure_order(assigns, stores) -> list[tuple]:
    """A list schedule of the assignments ``(symbol, expression)`` (in demand order, :func:`_demand_order`) and of
    the stores ``(slot, expression)`` of the output entries that keeps few values live: of the statements whose
    inputs exist, the one that ends the most live ranges net of the one it starts (Sethi and Ullman's aim on a
    DAG, greedily), on ties the earliest in demand order (an entry's store as soon as its last input exists).
    Returns ``("a", symbol, expression)`` and ``("s", slot, expression)`` in that order."""
    defs = {s for s, _ in assigns}
    position = {s: k for k, (s, _) in enumerate(assigns)}
    nodes = [("a", s, e) for s, e in assigns] + [("s", j, e) for j, e in stores]
    deps = [{f for f in e.free_symbols if f in defs} for _, _, e in nodes]
    rank = [
        (position[t], 0) if kind == "a" else (max((position[f] for f in d), default=-1), 1)
        for (kind, t, _), d in zip(nodes, deps, strict=True)
    ]
    uses: dict = {}  # remaining uses of each value
    users: dict = {}
    for k, d in enumerate(deps):
        for f in d:
            uses[f] = uses.get(f, 0) + 1
            users.setdefault(f, []).append(k)
    missing = [len(d) for d in deps]
    ready = {k for k, m in enumerate(missing) if m == 0}

    def score(k):
        kind, t, _ = nodes[k]
        ended = sum(1 for f in deps[k] if uses[f] == 1)
        started = 1 if kind == "a" and uses.get(t, 0) > 0 else 0
        return started - ended, rank[k]

    out = []
    while ready:
        k = min(ready, key=score)
        ready.remove(k)
        out.append(nodes[k])
        for f in deps[k]:
            uses[f] -= 1
        if nodes[k][0] == "a":
            for u in users.get(nodes[k][1], ()):
                missing[u] -= 1
                if missing[u] == 0:
                    ready.add(u)
    return out
