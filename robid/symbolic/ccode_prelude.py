"""The C prelude of the batched regressors (robid.symbolic.ccode): a fixed C text emitted once per generated file.
Its vector types, sin/cos, fallbacks, transposes and stores are C, not Python: they live here so that the code
generator's module holds the generator only."""

#: C prelude of the batched functions (emitted once per file, guarded): vector types of ROBID_W lanes (GCC/clang
#: vector extensions: 2 lanes on SSE2 (the portable x86-64 build; 4 lanes there took 5x the compile time and ran
#: slower), 4 with AVX, 8 with AVX-512; ``-DROBID_W=...`` forces a width), the vector sin/cos, lane-wise fallbacks,
#: the in-register transpose of W entries of W rows and the stores of rows.
PRELUDE = r"""
#ifndef ROBID_BATCH_PRELUDE
#define ROBID_BATCH_PRELUDE
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
/* lanes: the width of the vector registers (wider vectors on SSE2 only cost compile time and spills) */
#if defined(ROBID_W)
/* set by the build (tests: the 2- and 8-lane code on any processor) */
#elif defined(__AVX512F__)
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
/* sign(x) in {-1, 0, 1}: a vector comparison gives all bits set for true, masking the bits of 1.0 (no
 * integer-to-double conversion: AVX2 has none for 64-bit lanes) */
ROBID_INLINE robid_v robid_vsign(robid_v x) {
    const robid_v zero = robid_splat(0.0);
    const robid_u one = (robid_u)robid_splat(1.0);
    return (robid_v)((robid_u)(x > zero) & one) - (robid_v)((robid_u)(x < zero) & one);
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
/* transpose W vectors of W lanes in place: r[e][l] -> r[l][e] (butterfly of unpack / lane-block shuffles) */
#if defined(__clang__)
#define ROBID_SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define ROBID_SHUF(a, b, ...) __builtin_shuffle(a, b, (robid_i){__VA_ARGS__})
#endif
ROBID_INLINE void robid_transpose(robid_v *r) {
#if ROBID_W == 2
    const robid_v a = ROBID_SHUF(r[0], r[1], 0, 2), b = ROBID_SHUF(r[0], r[1], 1, 3);
    r[0] = a, r[1] = b;
#elif ROBID_W == 4
    const robid_v a0 = ROBID_SHUF(r[0], r[1], 0, 4, 2, 6), a1 = ROBID_SHUF(r[0], r[1], 1, 5, 3, 7);
    const robid_v a2 = ROBID_SHUF(r[2], r[3], 0, 4, 2, 6), a3 = ROBID_SHUF(r[2], r[3], 1, 5, 3, 7);
    r[0] = ROBID_SHUF(a0, a2, 0, 1, 4, 5), r[1] = ROBID_SHUF(a1, a3, 0, 1, 4, 5);
    r[2] = ROBID_SHUF(a0, a2, 2, 3, 6, 7), r[3] = ROBID_SHUF(a1, a3, 2, 3, 6, 7);
#elif ROBID_W == 8
    robid_v a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = ROBID_SHUF(r[i], r[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
        a[i + 1] = ROBID_SHUF(r[i], r[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; ++j) {
            b[i + j] = ROBID_SHUF(a[i + j], a[i + j + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            b[i + j + 2] = ROBID_SHUF(a[i + j], a[i + j + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int j = 0; j < 4; ++j) {
        r[j] = ROBID_SHUF(b[j], b[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[j + 4] = ROBID_SHUF(b[j], b[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
#else
#error "ROBID_W must be 2, 4 or 8"
#endif
}
/* W consecutive entries of a row: non-temporal (p aligned to the vector) or plain (any p) */
ROBID_INLINE void robid_out(double *p, robid_v v, const int nt) {
    if (nt) {
#if defined(__AVX__) && ROBID_W % 4 == 0
        for (int i = 0; i < ROBID_W; i += 4) {
            __m256d c;
            memcpy(&c, (const double *)&v + i, sizeof c);
            _mm256_stream_pd(p + i, c);
        }
        return;
#elif defined(__SSE2__)
        for (int i = 0; i < ROBID_W; i += 2) {
            __m128d c;
            memcpy(&c, (const double *)&v + i, sizeof c);
            _mm_stream_pd(p + i, c);
        }
        return;
#endif
    }
    memcpy(p, &v, sizeof v);
}
/* the first m < W entries */
ROBID_INLINE void robid_out_part(double *p, robid_v v, int m) {
    for (int i = 0; i < m; ++i) p[i] = v[i];
}
static void robid_fence(void) {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
#endif
"""
