/* The virtual robot's rigid-body dynamics of ONE state in C: the same arithmetic as
 * robid/simulation/single_state.py (ScalarChain), operation for operation and in the same order, so that with
 * IEEE double arithmetic and no contraction into fused multiply-adds (-ffp-contract=off) it gives the same bits.
 * Hand-written, like single_state.py: it shares nothing with robid's symbolic regressor.
 *
 * Per joint, ROBID_CHAIN_FIELDS doubles (robid.simulation.single_state_c.pack):
 *   u[3] offset rc[9] rk[9] rk2[9] pc[3] rcu[3] m h[3] io[6]  (io: xx xy xz yy yz zz about the frame origin)
 * work: 18 doubles per joint (placements R[9] p[3], body forces f[3] n[3]).
 * mass: n*n row-major; bias: n.
 */
#include <math.h>

#define ROBID_CHAIN_FIELDS 47

enum { U = 0, OFF = 3, RC = 4, RK = 13, RK2 = 22, PC = 31, RCU = 34, M = 37, H = 38, IO = 41 };

static void sym_times(const double *s, double x0, double x1, double x2, double *y)
{
    y[0] = s[0] * x0 + s[1] * x1 + s[2] * x2;
    y[1] = s[1] * x0 + s[3] * x1 + s[4] * x2;
    y[2] = s[2] * x0 + s[4] * x1 + s[5] * x2;
}

static void placements(int n, const int *rev, const double *par, const double *q, double *pl)
{
    for (int i = 0; i < n; i++) {
        const double *b = par + i * ROBID_CHAIN_FIELDS;
        double *r = pl + 12 * i, *p = r + 9;
        if (rev[i]) {
            double s = sin(q[i] + b[OFF]);
            double c = 1.0 - cos(q[i] + b[OFF]);
            for (int k = 0; k < 9; k++)
                r[k] = b[RC + k] + s * b[RK + k] + c * b[RK2 + k];
            for (int k = 0; k < 3; k++)
                p[k] = b[PC + k];
        } else {
            double d = q[i] + b[OFF];
            for (int k = 0; k < 9; k++)
                r[k] = b[RC + k];
            for (int k = 0; k < 3; k++)
                p[k] = b[PC + k] + d * b[RCU + k];
        }
    }
}

static void bias(int n, const int *rev, const double *par, const double *minus_g, const double *qd,
                 const double *pl, double *forces, double *out)
{
    double w0 = 0.0, w1 = 0.0, w2 = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0;
    double a0 = minus_g[0], a1 = minus_g[1], a2 = minus_g[2];
    for (int i = 0; i < n; i++) {
        const double *b = par + i * ROBID_CHAIN_FIELDS;
        const double *r = pl + 12 * i, *p = r + 9;
        double v = qd[i];
        double x0 = w1 * p[2] - w2 * p[1], x1 = w2 * p[0] - w0 * p[2], x2 = w0 * p[1] - w1 * p[0];
        double t0 = a0 + d1 * p[2] - d2 * p[1] + w1 * x2 - w2 * x1;
        double t1 = a1 + d2 * p[0] - d0 * p[2] + w2 * x0 - w0 * x2;
        double t2 = a2 + d0 * p[1] - d1 * p[0] + w0 * x1 - w1 * x0;
        a0 = r[0] * t0 + r[3] * t1 + r[6] * t2;
        a1 = r[1] * t0 + r[4] * t1 + r[7] * t2;
        a2 = r[2] * t0 + r[5] * t1 + r[8] * t2;
        double y0 = r[0] * w0 + r[3] * w1 + r[6] * w2, y1 = r[1] * w0 + r[4] * w1 + r[7] * w2,
               y2 = r[2] * w0 + r[5] * w1 + r[8] * w2;
        w0 = y0; w1 = y1; w2 = y2;
        y0 = r[0] * d0 + r[3] * d1 + r[6] * d2; y1 = r[1] * d0 + r[4] * d1 + r[7] * d2;
        y2 = r[2] * d0 + r[5] * d1 + r[8] * d2;
        d0 = y0; d1 = y1; d2 = y2;
        const double u0 = b[U], u1 = b[U + 1], u2 = b[U + 2];
        if (rev[i]) {
            d0 += v * (w1 * u2 - w2 * u1);
            d1 += v * (w2 * u0 - w0 * u2);
            d2 += v * (w0 * u1 - w1 * u0);
            w0 += v * u0;
            w1 += v * u1;
            w2 += v * u2;
        } else {
            a0 += 2.0 * v * (w1 * u2 - w2 * u1);
            a1 += 2.0 * v * (w2 * u0 - w0 * u2);
            a2 += 2.0 * v * (w0 * u1 - w1 * u0);
        }
        const double m = b[M], h0 = b[H], h1 = b[H + 1], h2 = b[H + 2];
        y0 = w1 * h2 - w2 * h1; y1 = w2 * h0 - w0 * h2; y2 = w0 * h1 - w1 * h0;  /* w x h */
        double *f = forces + 6 * i;
        f[0] = m * a0 + d1 * h2 - d2 * h1 + w1 * y2 - w2 * y1;
        f[1] = m * a1 + d2 * h0 - d0 * h2 + w2 * y0 - w0 * y2;
        f[2] = m * a2 + d0 * h1 - d1 * h0 + w0 * y1 - w1 * y0;
        double iw[3], id[3];
        sym_times(b + IO, w0, w1, w2, iw);
        sym_times(b + IO, d0, d1, d2, id);
        f[3] = id[0] + w1 * iw[2] - w2 * iw[1] + h1 * a2 - h2 * a1;
        f[4] = id[1] + w2 * iw[0] - w0 * iw[2] + h2 * a0 - h0 * a2;
        f[5] = id[2] + w0 * iw[1] - w1 * iw[0] + h0 * a1 - h1 * a0;
    }
    double f0 = 0.0, f1 = 0.0, f2 = 0.0, n0 = 0.0, n1 = 0.0, n2 = 0.0;
    for (int i = n - 1; i >= 0; i--) {
        const double *g = forces + 6 * i;
        if (i + 1 < n) {
            const double *r = pl + 12 * (i + 1), *p = r + 9;
            double c0 = r[0] * f0 + r[1] * f1 + r[2] * f2, c1 = r[3] * f0 + r[4] * f1 + r[5] * f2,
                   c2 = r[6] * f0 + r[7] * f1 + r[8] * f2;
            double e0 = r[0] * n0 + r[1] * n1 + r[2] * n2, e1 = r[3] * n0 + r[4] * n1 + r[5] * n2,
                   e2 = r[6] * n0 + r[7] * n1 + r[8] * n2;
            n0 = g[3] + e0 + p[1] * c2 - p[2] * c1;
            n1 = g[4] + e1 + p[2] * c0 - p[0] * c2;
            n2 = g[5] + e2 + p[0] * c1 - p[1] * c0;
            f0 = g[0] + c0; f1 = g[1] + c1; f2 = g[2] + c2;
        } else {
            f0 = g[0]; f1 = g[1]; f2 = g[2]; n0 = g[3]; n1 = g[4]; n2 = g[5];
        }
        const double *u = par + i * ROBID_CHAIN_FIELDS + U;
        out[i] = rev[i] ? u[0] * n0 + u[1] * n1 + u[2] * n2 : u[0] * f0 + u[1] * f1 + u[2] * f2;
    }
}

static void mass_matrix(int n, const int *rev, const double *par, const double *pl, double *mass)
{
    double cm = 0.0, ch0 = 0.0, ch1 = 0.0, ch2 = 0.0;
    double ci[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};  /* xx xy xz yy yz zz */
    for (int i = n - 1; i >= 0; i--) {
        const double *b = par + i * ROBID_CHAIN_FIELDS;
        const double u0 = b[U], u1 = b[U + 1], u2 = b[U + 2], m = b[M], h0 = b[H], h1 = b[H + 1], h2 = b[H + 2];
        const double *io = b + IO;
        if (i + 1 < n) {
            const double *r = pl + 12 * (i + 1), *p = r + 9;
            const double p0 = p[0], p1 = p[1], p2 = p[2];
            double k0 = r[0] * ch0 + r[1] * ch1 + r[2] * ch2;
            double k1 = r[3] * ch0 + r[4] * ch1 + r[5] * ch2;
            double k2 = r[6] * ch0 + r[7] * ch1 + r[8] * ch2;
            double a0[3], a1[3], a2[3];
            sym_times(ci, r[0], r[1], r[2], a0);
            sym_times(ci, r[3], r[4], r[5], a1);
            sym_times(ci, r[6], r[7], r[8], a2);
            double diag = cm * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * k0 + p1 * k1 + p2 * k2);
            ci[0] = io[0] + a0[0] * r[0] + a0[1] * r[1] + a0[2] * r[2] + diag - cm * p0 * p0 - 2.0 * p0 * k0;
            ci[3] = io[3] + a1[0] * r[3] + a1[1] * r[4] + a1[2] * r[5] + diag - cm * p1 * p1 - 2.0 * p1 * k1;
            ci[5] = io[5] + a2[0] * r[6] + a2[1] * r[7] + a2[2] * r[8] + diag - cm * p2 * p2 - 2.0 * p2 * k2;
            ci[1] = io[1] + a0[0] * r[3] + a0[1] * r[4] + a0[2] * r[5] - cm * p0 * p1 - p0 * k1 - k0 * p1;
            ci[2] = io[2] + a0[0] * r[6] + a0[1] * r[7] + a0[2] * r[8] - cm * p0 * p2 - p0 * k2 - k0 * p2;
            ci[4] = io[4] + a1[0] * r[6] + a1[1] * r[7] + a1[2] * r[8] - cm * p1 * p2 - p1 * k2 - k1 * p2;
            ch0 = h0 + k0 + cm * p0; ch1 = h1 + k1 + cm * p1; ch2 = h2 + k2 + cm * p2;
            cm = cm + m;
        } else {
            cm = m; ch0 = h0; ch1 = h1; ch2 = h2;
            for (int k = 0; k < 6; k++)
                ci[k] = io[k];
        }
        double e[3], l0, l1, l2;
        if (rev[i]) {  /* H = I u, L = u x h */
            sym_times(ci, u0, u1, u2, e);
            l0 = u1 * ch2 - u2 * ch1; l1 = u2 * ch0 - u0 * ch2; l2 = u0 * ch1 - u1 * ch0;
            mass[i * n + i] = u0 * e[0] + u1 * e[1] + u2 * e[2];
        } else {  /* H = h x u, L = m u */
            e[0] = ch1 * u2 - ch2 * u1; e[1] = ch2 * u0 - ch0 * u2; e[2] = ch0 * u1 - ch1 * u0;
            l0 = cm * u0; l1 = cm * u1; l2 = cm * u2;
            mass[i * n + i] = u0 * l0 + u1 * l1 + u2 * l2;
        }
        double e0 = e[0], e1 = e[1], e2 = e[2];
        for (int j = i - 1; j >= 0; j--) {
            const double *r = pl + 12 * (j + 1), *p = r + 9;
            double m0 = r[0] * l0 + r[1] * l1 + r[2] * l2, m1 = r[3] * l0 + r[4] * l1 + r[5] * l2,
                   m2 = r[6] * l0 + r[7] * l1 + r[8] * l2;
            l0 = m0; l1 = m1; l2 = m2;
            double g0 = r[0] * e0 + r[1] * e1 + r[2] * e2 + p[1] * l2 - p[2] * l1;
            double g1 = r[3] * e0 + r[4] * e1 + r[5] * e2 + p[2] * l0 - p[0] * l2;
            double g2 = r[6] * e0 + r[7] * e1 + r[8] * e2 + p[0] * l1 - p[1] * l0;
            e0 = g0; e1 = g1; e2 = g2;
            const double *v = par + j * ROBID_CHAIN_FIELDS + U;
            double mji = rev[j] ? v[0] * e0 + v[1] * e1 + v[2] * e2 : v[0] * l0 + v[1] * l1 + v[2] * l2;
            mass[j * n + i] = mji;
            mass[i * n + j] = mji;
        }
    }
}

/* M(q) and h = C(q, qd) qd + g(q) of one state; work: 18 doubles per joint. */
void robid_chain_mass_matrix_and_bias(int n, const int *rev, const double *par, const double *minus_g,
                                      const double *q, const double *qd, double *mass, double *bias_out,
                                      double *work)
{
    double *pl = work, *forces = work + 12 * n;
    placements(n, rev, par, q, pl);
    mass_matrix(n, rev, par, pl, mass);
    bias(n, rev, par, minus_g, qd, pl, forces, bias_out);
}
