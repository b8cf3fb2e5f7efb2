"""Rigid-body dynamics of ONE state for the integrator's hot path: M(q) and h = C(q, qd) qd + g(q).

The integrator calls this thousands of times per run with a single state, where numpy's per-call overhead on
3-vectors dominates; unrolled plain-Python arithmetic is several times faster (module docstring of
:mod:`robid.simulation.rnea`, which has the same recursion vectorised over samples and says why both exist).
3x3 matrices are flat row-major 9-tuples (r0..r8), symmetric ones 6-tuples (xx, xy, xz, yy, yz, zz), vectors
are unpacked into scalars. Like rnea.py, this shares no code with robid's symbolic regressor.
"""

from __future__ import annotations

import math

import numpy as np


def _sym_times(s, x0, x1, x2):
    """S x for a symmetric 3x3 S = (xx, xy, xz, yy, yz, zz); equally x^T S."""
    xx, xy, xz, yy, yz, zz = s
    return xx * x0 + xy * x1 + xz * x2, xy * x0 + yy * x1 + yz * x2, xz * x0 + yz * x1 + zz * x2


def _flat(m: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(m, dtype=float).reshape(-1))


class ScalarChain:
    """Bias h = C qd + g by Newton-Euler in the origin form, M by the composite-rigid-body algorithm.

    Origin form of the body equations (h = m c the first moment, I_o the inertia about the frame origin)::

        F = m a + wd x h + w x (w x h),    N = I_o wd + w x (I_o w) + h x a

    Composite bodies (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, sec. 6.2), moved from J_{i+1} to
    J_i with (R, p)::

        m' = m,  h' = R h + m p,   I' = R I R^T + m (p.p E - p p^T) + 2 (p.h~) E - p h~^T - h~ p^T   (h~ = R h)

    Unit motion of joint i: revolute (H, L) = (I_o u, u x h), prismatic (h x u, m u); M_ji = u_j . H (revolute
    j) or u_j . L (prismatic j) after moving (H, L) to J_j with L' = R L, H' = R H + p x L'.
    """

    def __init__(self, joints, gravity):
        self.items = []
        for jc in joints:
            u = jc.axis
            k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
            rc = jc.c_rotation
            c = jc.com
            i_o = jc.inertia + jc.mass * (c @ c * np.eye(3) - np.outer(c, c))
            self.items.append(
                (
                    jc.revolute,
                    _flat(u),
                    float(jc.offset),
                    _flat(rc),
                    _flat(rc @ k),
                    _flat(rc @ k @ k),
                    _flat(jc.c_translation),
                    _flat(rc @ u),
                    float(jc.mass),
                    _flat(jc.mass * c),
                    (i_o[0, 0], i_o[0, 1], i_o[0, 2], i_o[1, 1], i_o[1, 2], i_o[2, 2]),
                )
            )
        self.minus_g = tuple(-float(x) for x in gravity)

    def placements(self, q):
        """[(R, p)] of J_i in J_{i-1}: R = Rc + sin(q') Rc K + (1 - cos(q')) Rc K^2 (Rodrigues), p = pc (+ q' Rc u)."""
        out = []
        for (rev, _u, off, rc, rk, rk2, pc, rcu, *_), qi in zip(self.items, q, strict=True):
            if rev:
                s = math.sin(qi + off)
                c = 1.0 - math.cos(qi + off)
                # fmt: off
                r = (
                    rc[0] + s * rk[0] + c * rk2[0], rc[1] + s * rk[1] + c * rk2[1], rc[2] + s * rk[2] + c * rk2[2],
                    rc[3] + s * rk[3] + c * rk2[3], rc[4] + s * rk[4] + c * rk2[4], rc[5] + s * rk[5] + c * rk2[5],
                    rc[6] + s * rk[6] + c * rk2[6], rc[7] + s * rk[7] + c * rk2[7], rc[8] + s * rk[8] + c * rk2[8],
                )
                # fmt: on
                out.append((r, pc))
            else:
                d = qi + off
                out.append((rc, (pc[0] + d * rcu[0], pc[1] + d * rcu[1], pc[2] + d * rcu[2])))
        return out

    def bias(self, q, qd, pl=None):
        """h = C(q, qd) qd + g(q) as a list."""
        n = len(self.items)
        pl = self.placements(q) if pl is None else pl
        w0 = w1 = w2 = d0 = d1 = d2 = 0.0
        a0, a1, a2 = self.minus_g
        forces = []
        for (rev, u, *_, m, h, io), (r, p), v in zip(self.items, pl, qd, strict=True):
            p0, p1, p2 = p
            x0, x1, x2 = w1 * p2 - w2 * p1, w2 * p0 - w0 * p2, w0 * p1 - w1 * p0  # w x p
            t0 = a0 + d1 * p2 - d2 * p1 + w1 * x2 - w2 * x1
            t1 = a1 + d2 * p0 - d0 * p2 + w2 * x0 - w0 * x2
            t2 = a2 + d0 * p1 - d1 * p0 + w0 * x1 - w1 * x0
            r0, r1, r2, r3, r4, r5, r6, r7, r8 = r
            a0, a1, a2 = r0 * t0 + r3 * t1 + r6 * t2, r1 * t0 + r4 * t1 + r7 * t2, r2 * t0 + r5 * t1 + r8 * t2
            w0, w1, w2 = r0 * w0 + r3 * w1 + r6 * w2, r1 * w0 + r4 * w1 + r7 * w2, r2 * w0 + r5 * w1 + r8 * w2
            d0, d1, d2 = r0 * d0 + r3 * d1 + r6 * d2, r1 * d0 + r4 * d1 + r7 * d2, r2 * d0 + r5 * d1 + r8 * d2
            u0, u1, u2 = u
            if rev:
                d0 += v * (w1 * u2 - w2 * u1)
                d1 += v * (w2 * u0 - w0 * u2)
                d2 += v * (w0 * u1 - w1 * u0)
                w0 += v * u0
                w1 += v * u1
                w2 += v * u2
            else:
                a0 += 2.0 * v * (w1 * u2 - w2 * u1)
                a1 += 2.0 * v * (w2 * u0 - w0 * u2)
                a2 += 2.0 * v * (w0 * u1 - w1 * u0)
            h0, h1, h2 = h
            y0, y1, y2 = w1 * h2 - w2 * h1, w2 * h0 - w0 * h2, w0 * h1 - w1 * h0  # w x h
            f0 = m * a0 + d1 * h2 - d2 * h1 + w1 * y2 - w2 * y1
            f1 = m * a1 + d2 * h0 - d0 * h2 + w2 * y0 - w0 * y2
            f2 = m * a2 + d0 * h1 - d1 * h0 + w0 * y1 - w1 * y0
            i0, i1, i2 = _sym_times(io, w0, w1, w2)
            j0, j1, j2 = _sym_times(io, d0, d1, d2)
            n0 = j0 + w1 * i2 - w2 * i1 + h1 * a2 - h2 * a1
            n1 = j1 + w2 * i0 - w0 * i2 + h2 * a0 - h0 * a2
            n2 = j2 + w0 * i1 - w1 * i0 + h0 * a1 - h1 * a0
            forces.append((f0, f1, f2, n0, n1, n2))
        out = [0.0] * n
        f0 = f1 = f2 = n0 = n1 = n2 = 0.0
        for i in range(n - 1, -1, -1):
            g0, g1, g2, m0, m1, m2 = forces[i]
            if i + 1 < n:
                (r0, r1, r2, r3, r4, r5, r6, r7, r8), (p0, p1, p2) = pl[i + 1]
                c0, c1, c2 = r0 * f0 + r1 * f1 + r2 * f2, r3 * f0 + r4 * f1 + r5 * f2, r6 * f0 + r7 * f1 + r8 * f2
                e0, e1, e2 = r0 * n0 + r1 * n1 + r2 * n2, r3 * n0 + r4 * n1 + r5 * n2, r6 * n0 + r7 * n1 + r8 * n2
                n0 = m0 + e0 + p1 * c2 - p2 * c1
                n1 = m1 + e1 + p2 * c0 - p0 * c2
                n2 = m2 + e2 + p0 * c1 - p1 * c0
                f0, f1, f2 = g0 + c0, g1 + c1, g2 + c2
            else:
                f0, f1, f2, n0, n1, n2 = g0, g1, g2, m0, m1, m2
            rev, (u0, u1, u2) = self.items[i][0], self.items[i][1]
            out[i] = u0 * n0 + u1 * n1 + u2 * n2 if rev else u0 * f0 + u1 * f1 + u2 * f2
        return out

    def mass_matrix(self, q, pl=None):
        """M(q) as a list of rows, by the composite-rigid-body algorithm."""
        n = len(self.items)
        pl = self.placements(q) if pl is None else pl
        mass = [[0.0] * n for _ in range(n)]
        composite = None
        for i in range(n - 1, -1, -1):
            rev, (u0, u1, u2), *_, m, h, io = self.items[i]
            # the composite of i+1.. moved into J_i, plus body i
            composite = (m, h, io) if composite is None else moved_composite(composite, *pl[i + 1], (m, h, io))
            cm, (ch0, ch1, ch2), inertia = composite
            if rev:  # H = I u, L = u x h
                e0, e1, e2 = _sym_times(inertia, u0, u1, u2)
                l0, l1, l2 = u1 * ch2 - u2 * ch1, u2 * ch0 - u0 * ch2, u0 * ch1 - u1 * ch0
                mass[i][i] = u0 * e0 + u1 * e1 + u2 * e2
            else:  # H = h x u, L = m u
                e0, e1, e2 = ch1 * u2 - ch2 * u1, ch2 * u0 - ch0 * u2, ch0 * u1 - ch1 * u0
                l0, l1, l2 = cm * u0, cm * u1, cm * u2
                mass[i][i] = u0 * l0 + u1 * l1 + u2 * l2
            for j in range(i - 1, -1, -1):
                (r0, r1, r2, r3, r4, r5, r6, r7, r8), (p0, p1, p2) = pl[j + 1]
                l0, l1, l2 = r0 * l0 + r1 * l1 + r2 * l2, r3 * l0 + r4 * l1 + r5 * l2, r6 * l0 + r7 * l1 + r8 * l2
                e0, e1, e2 = (
                    r0 * e0 + r1 * e1 + r2 * e2 + p1 * l2 - p2 * l1,
                    r3 * e0 + r4 * e1 + r5 * e2 + p2 * l0 - p0 * l2,
                    r6 * e0 + r7 * e1 + r8 * e2 + p0 * l1 - p1 * l0,
                )
                rj, (v0, v1, v2) = self.items[j][0], self.items[j][1]
                mass[j][i] = mass[i][j] = v0 * e0 + v1 * e1 + v2 * e2 if rj else v0 * l0 + v1 * l1 + v2 * l2
        return mass

    def mass_matrix_and_bias(self, q, qd):
        pl = self.placements(q)
        return self.mass_matrix(q, pl), self.bias(q, qd, pl)


def moved_composite(composite, r, p, onto):
    """The composite body ``onto`` (m, h, I_o) plus ``composite`` moved into its frame by the placement (R, p) of
    the composite's joint frame in ``onto``'s (:class:`ScalarChain`'s docstring); R flat row-major, I_o as
    (xx, xy, xz, yy, yz, zz). Shared with robid.simulation.tree_dynamics.ScalarTree."""
    cm, (c0, c1, c2), inertia = composite
    om, (o0, o1, o2), (oxx, oxy, oxz, oyy, oyz, ozz) = onto
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = r
    p0, p1, p2 = p
    k0, k1, k2 = r0 * c0 + r1 * c1 + r2 * c2, r3 * c0 + r4 * c1 + r5 * c2, r6 * c0 + r7 * c1 + r8 * c2  # R h
    a00, a01, a02 = _sym_times(inertia, r0, r1, r2)  # rows of R I
    a10, a11, a12 = _sym_times(inertia, r3, r4, r5)
    a20, a21, a22 = _sym_times(inertia, r6, r7, r8)
    diag = cm * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * k0 + p1 * k1 + p2 * k2)
    moved = (oxx + a00 * r0 + a01 * r1 + a02 * r2 + diag - cm * p0 * p0 - 2.0 * p0 * k0,
             oxy + a00 * r3 + a01 * r4 + a02 * r5 - cm * p0 * p1 - p0 * k1 - k0 * p1,
             oxz + a00 * r6 + a01 * r7 + a02 * r8 - cm * p0 * p2 - p0 * k2 - k0 * p2,
             oyy + a10 * r3 + a11 * r4 + a12 * r5 + diag - cm * p1 * p1 - 2.0 * p1 * k1,
             oyz + a10 * r6 + a11 * r7 + a12 * r8 - cm * p1 * p2 - p1 * k2 - k1 * p2,
             ozz + a20 * r6 + a21 * r7 + a22 * r8 + diag - cm * p2 * p2 - 2.0 * p2 * k2)
    return cm + om, (o0 + k0 + cm * p0, o1 + k1 + cm * p1, o2 + k2 + cm * p2), moved
