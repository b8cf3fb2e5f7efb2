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
  |q| > 1e5); finished rows are copied to y with non-temporal stores when y is too large to stay in cache.
- :func:`portable_c_function`: the plain per-sample C99 loop (the batched form's fallback, and the standalone
  source of ``robid export-model --format c``).
"""

from __future__ import annotations

import re

from sympy.printing.c import C99CodePrinter

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
#: C prelude of the batched functions (emitted once per file, guarded): vector types of ROBID_W lanes (GCC/clang
#: vector extensions: 2 lanes on SSE2 (the portable x86-64 build; 4 lanes there took 5x the compile time and ran
#: slower), 4 with AVX, 8 with AVX-512), the vector sin/cos, lane-wise fallbacks and the copy of finished rows.
_PRELUDE = r"""
#ifndef ROBID_BATCH_PRELUDE
#define ROBID_BATCH_PRELUDE
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
/* lanes: the width of the vector registers (wider vectors on SSE2 only cost compile time and spills) */
#if defined(__AVX512F__)
#define ROBID_W 8
#elif defined(__AVX__)
#define ROBID_W 4
#else
#define ROBID_W 2
#endif
/* outputs of at least this many bytes are written with non-temporal stores (they would not stay in cache) */
#ifndef ROBID_STREAM_BYTES
#define ROBID_STREAM_BYTES (4L << 20)
#endif
#define ROBID_INLINE static inline __attribute__((always_inline))
typedef double robid_v __attribute__((vector_size(8 * ROBID_W)));
typedef unsigned long long robid_u __attribute__((vector_size(8 * ROBID_W)));
typedef long long robid_i __attribute__((vector_size(8 * ROBID_W)));

ROBID_INLINE robid_v robid_load(const double *p, long stride, long j) {
    robid_v v;
    for (int l = 0; l < ROBID_W; ++l) v[l] = p[l * stride + j];
    return v;
}
ROBID_INLINE void robid_put(double *p, long stride, robid_v v) {
    for (int l = 0; l < ROBID_W; ++l) p[l * stride] = v[l];
}
ROBID_INLINE robid_v robid_splat(double x) {
    robid_v v;
    for (int l = 0; l < ROBID_W; ++l) v[l] = x;
    return v;
}
ROBID_INLINE robid_v robid_lanes1(double (*f)(double), robid_v a) {
    robid_v r;
    for (int l = 0; l < ROBID_W; ++l) r[l] = f(a[l]);
    return r;
}
ROBID_INLINE robid_v robid_lanes2(double (*f)(double, double), robid_v a, robid_v b) {
    robid_v r;
    for (int l = 0; l < ROBID_W; ++l) r[l] = f(a[l], b[l]);
    return r;
}
ROBID_INLINE robid_v robid_vsqrt(robid_v a) {
    robid_v r;
    for (int l = 0; l < ROBID_W; ++l) r[l] = sqrt(a[l]);
    return r;
}
/* sign(x) in {-1, 0, 1}; a vector comparison gives -1 for true */
ROBID_INLINE robid_v robid_vsign(robid_v x) {
    const robid_v zero = robid_splat(0.0);
    return __builtin_convertvector((x < zero) - (x > zero), robid_v);
}

/* sin and cos of every lane. Reduction x = j pi/2 + r, |r| <= pi/4 (Cody and Waite 1980; pi/2 in three 33-bit
 * parts and a tail as in fdlibm's __ieee754_rem_pio2, so that j * part is exact for |j| < 2^20 and r keeps its
 * relative accuracy next to multiples of pi/2), j rounded to nearest by adding
 * 1.5 * 2^52 (its low bits then hold j mod 4). Kernels on [-pi/4, pi/4]: fdlibm / musl __sin and __cos (minimax
 * polynomials, error < 2^-58 relative; __cos written as w + ((1 - w) - z/2 + ...) so that 1 - z/2 keeps its
 * rounding error). Then the quadrant: sin = (s, c, -s, -c)[j mod 4], cos = (c, -s, -c, s)[j mod 4]. Lanes with
 * |x| > 1e5, infinite or NaN take libm's sin and cos. */
typedef struct { robid_v s, c; } robid_sc;
ROBID_INLINE robid_sc robid_vsincos(robid_v x) {
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    const double invpio2 = 6.36619772367581382433e-01, pio2_1 = 1.57079632673412561417e+00,
                 pio2_2 = 6.07710050630396597660e-11, pio2_3 = 2.02226624871116645580e-21,
                 pio2_3t = 8.47842766036889956997e-32, magic = 6755399441055744.0;
    robid_v t = x * invpio2 + magic;
    robid_v j = t - magic;
    robid_u q = (robid_u)t;
    robid_v r = (((x - j * pio2_1) - j * pio2_2) - j * pio2_3) - j * pio2_3t;
    robid_v z = r * r, w = z * z;
    robid_v sr = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    robid_v sn = r + (z * r) * (S1 + z * sr);
    robid_v cr = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    robid_v hz = 0.5 * z, one = robid_splat(1.0);
    robid_v wc = one - hz;
    robid_v cs = wc + (((one - wc) - hz) + z * cr);
    robid_u odd = -(q & 1);
    robid_u sbits = (odd & (robid_u)cs) | (~odd & (robid_u)sn);
    robid_u cbits = (odd & (robid_u)sn) | (~odd & (robid_u)cs);
    robid_sc out;
    out.s = (robid_v)(sbits ^ ((q & 2) << 62));
    out.c = (robid_v)(cbits ^ (((q + 1) & 2) << 62));
    robid_v ax = robid_lanes1(fabs, x);
    robid_i big = ~(ax <= robid_splat(1e5)); /* NaN compares false: big */
    int any = 0;
    for (int l = 0; l < ROBID_W; ++l) any |= (int)big[l];
    if (__builtin_expect(any, 0)) {
        for (int l = 0; l < ROBID_W; ++l) {
            if (big[l]) {
                out.s[l] = sin(x[l]);
                out.c[l] = cos(x[l]);
            }
        }
    }
    return out;
}
ROBID_INLINE robid_v robid_vsin(robid_v x) { return robid_vsincos(x).s; }
ROBID_INLINE robid_v robid_vcos(robid_v x) { return robid_vsincos(x).c; }

/* copy finished rows to the output; large outputs bypass the cache (non-temporal stores, aligned part only) */
ROBID_INLINE void robid_copy(double *dst, const double *src, long n, int stream) {
#if defined(__AVX__)
    if (stream) {
        long i = 0;
        for (; i < n && ((uintptr_t)(dst + i) & 31); ++i) dst[i] = src[i];
        for (; i + 4 <= n; i += 4) _mm256_stream_pd(dst + i, _mm256_loadu_pd(src + i));
        for (; i < n; ++i) dst[i] = src[i];
        return;
    }
#elif defined(__SSE2__)
    if (stream) {
        long i = 0;
        for (; i < n && ((uintptr_t)(dst + i) & 15); ++i) dst[i] = src[i];
        for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
        for (; i < n; ++i) dst[i] = src[i];
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, (size_t)n * sizeof(double));
}
/* piece p of `parts` of the finished rows src (n doubles) to dst, the pieces' boundaries on dst's 64-byte lines:
 * called between the statements of the next block, so that the memory writes overlap the arithmetic */
ROBID_INLINE void robid_drain(double *dst, const double *src, long n, int p, int parts, int stream) {
    if (!dst) return;
    const long head = (long)((((uintptr_t)0 - (uintptr_t)dst) & 63) / 8);
    const long lines = (n - head) / 8;
    const long a = p == 0 ? 0 : head + 8 * (lines * p / parts);
    const long b = p == parts - 1 ? n : head + 8 * (lines * (p + 1) / parts);
    robid_copy(dst + a, src + a, b - a, stream);
}
static void robid_fence(void) {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
#endif
"""

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


#: pieces in which a block's finished rows are written out during the next block's arithmetic. Measured (UR10e-like
#: base regressor, N = 10^4, loaded 2-core machine, interleaved runs): 4 pieces 0.188 us/sample, one burst after
#: the block 0.197, 16 pieces 0.211, 64 pieces 0.269 (each piece adds code that competes for registers)
DRAIN_PIECES = 4


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
    (``robid_vsincos``), intermediates in the order of first use (:func:`_demand_order`) and every entry stored
    as soon as its inputs exist. A block's rows are completed in one of two small buffers that hold the
    structural zeros and constant entries once; while the next block computes, the finished one is written to y
    in ``DRAIN_PIECES`` pieces spread over its statements, with non-temporal stores when y is larger than
    ``ROBID_STREAM_BYTES`` (writing the 2.6 kB row of a 6-axis robot is the largest cost; going through the
    cache would read every line of y first, and writing it in one burst would leave the arithmetic waiting on
    the memory). Compiled with ``-DROBID_SCALAR_ONLY`` (or when the vector printer
    cannot spell an expression) it is the plain per-sample loop of :func:`portable_c_function`.
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
    assigns = _demand_order(needed_assignments(program, outputs.values()), [e for _, e in variable])
    used = free_symbols(assigns, outputs.values())
    spelling = {key: text.replace("{dof}", str(dof)) for key, text in V_INPUTS.items()}
    body = [f"    const robid_v {v} = {e};" for v, e in input_statements(symbols, used, angle_offsets, spelling)]
    # each entry is stored as soon as its last input exists: short live ranges, fewer registers spilled
    position = {s: k for k, (s, _) in enumerate(assigns)}
    after: dict[int, list[str]] = {}
    for idx, e in variable:
        last = max((position[f] for f in e.free_symbols if f in position), default=-1)
        after.setdefault(last, []).append(f"    robid_put(rows + {idx}, {stride}, {_vector_text(e)});")
    body += after.get(-1, [])
    for k, (s, e) in enumerate(assigns):
        body.append(f"    const robid_v {s.name} = {_vector_text(e)};")
        body += after.get(k, [])
    total = f"ROBID_W * {stride}"
    parts = DRAIN_PIECES
    drained, done = [], 0  # the previous block's rows go out in `parts` pieces spread over this block's statements
    for k, statement in enumerate(body):
        drained.append(statement)
        while done < (k + 1) * parts // len(body):
            drained.append(f"    robid_drain(dst, prev, {total}, {done}, {parts}, stream);")
            done += 1
    values = ", ".join(repr(v) for v in template)
    lines = [
        f"static const double {name}_template[{stride}] = {{{values}}};",
        "",
        "/* ROBID_W samples: q, qd, qdd (ROBID_W, dof) row-major; their rows' variable entries into rows; meanwhile",
        " * the previous block's rows prev to dst (none when dst is NULL) */",
        f"static void {name}_block(const double *q, const double *qd, const double *qdd, double *rows,",
        "                         double *dst, const double *prev, int stream) {",
        *drained,
        "}",
        "",
        f"void {name}(const double *q, const double *qd, const double *qdd, long n, double *y) {{",
        f"    double buffers[2][{total}];  /* the rows of two blocks: one computed while the other is written out */",
        "    for (int b = 0; b < 2; ++b)",
        "        for (int l = 0; l < ROBID_W; ++l)",
        f"            memcpy(buffers[b] + l * {stride}, {name}_template, sizeof {name}_template);",
        f"    const int stream = (double)n * {stride * 8} >= (double)ROBID_STREAM_BYTES;",
        "    double *dst = 0;",
        "    const double *prev = 0;",
        "    long k = 0;",
        "    for (int b = 0; k + ROBID_W <= n; k += ROBID_W, b ^= 1) {",
        f"        {name}_block(q + {dof} * k, qd + {dof} * k, qdd + {dof} * k, buffers[b], dst, prev, stream);",
        f"        dst = y + {stride} * k;",
        "        prev = buffers[b];",
        "    }",
        f"    if (dst) robid_copy(dst, prev, {total}, stream);",
        "    if (k < n) {  /* the last samples, padded with zero states */",
        f"        double tq[ROBID_W * {dof}] = {{0}}, tqd[ROBID_W * {dof}] = {{0}}, tqdd[ROBID_W * {dof}] = {{0}};",
        f"        const size_t m = (size_t)(n - k) * {dof} * sizeof(double);",
        f"        memcpy(tq, q + {dof} * k, m);",
        f"        memcpy(tqd, qd + {dof} * k, m);",
        f"        memcpy(tqdd, qdd + {dof} * k, m);",
        f"        {name}_block(tq, tqd, tqdd, buffers[0], 0, 0, 0);",
        f"        memcpy(y + {stride} * k, buffers[0], (size_t)(n - k) * {stride} * sizeof(double));",
        "    }",
        "    if (stream) robid_fence();",
        "}",
    ]
    return "\n".join(lines) + "\n"
