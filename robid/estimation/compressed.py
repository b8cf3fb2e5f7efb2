"""The stacked least-squares problem compressed to one triangular factor per joint, accumulated by a streaming QR.

With per-joint weights (OLS, WLS) everything the estimators compute from the stacked problem ``tau = W beta``
(``W`` (N, dof, nb), rows ``row = n * dof + j``, docs/estimation.md) depends on the rows of joint j only through
``A_j^T A_j``, ``A_j^T y_j`` and ``y_j^T y_j`` (``A_j = W[:, j, :]``, ``y_j = tau[:, j]``): the weighted solve
``(sum_j w_j^2 A_j^T A_j) beta = sum_j w_j^2 A_j^T y_j``, the residual norms, the joints' shares of the hat
matrix ``G_j = Q_j^T Q_j`` and the sandwich covariance's meat. All of them are kept, without squaring the
condition number, by the triangular factor of the augmented block: ``[A_j | y_j] = Q_j' R_j`` (R_j square,
nb + 1). The **compressed problem** has, for every joint, the nb + 1 rows of ``R_j`` in place of its N samples
(``W_c[k, j, :] = R_j[k, :nb]``, ``tau_c[k, j] = R_j[k, nb]``): the same Gram matrices per joint, so any
per-joint weighting solved on it gives the estimate, residual norms and covariance of the full problem
(Golub & Van Loan, *Matrix Computations*, 4th ed., section 5.3: least squares by QR; section 6.5.3: updating
a QR factorisation by appended rows, here a block of rows at a time).

Streaming QR: ``R <- qr([R; chunk])`` chunk by chunk, so the N-row regressor never has to be held; only the
columns a joint's rows ever excite enter its factorisation (a column that is zero on every row so far has a zero
column and row in R_j, and leaving it out of the QR changes nothing), which saves most of the work for the
distal joints of a serial robot.

Rows that carry no equation (regressor and torque all zero, the data selection's zeroed rows) add nothing to
R_j; they are counted apart (``rows``: the rows of each joint that do, as :func:`robid.estimation._lsq.used_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError


@dataclass(frozen=True, eq=False)
class CompressedProblem:
    """The compressed stand-in of a stacked problem (module docstring).

    ``W`` (nb + 1, dof, nb) and ``tau`` (nb + 1, dof): row k of joint j is row k of R_j; ``samples`` N and
    ``rows`` (dof,) the rows of each joint that carry an equation in the full problem."""

    W: np.ndarray
    tau: np.ndarray
    samples: int
    rows: np.ndarray

    @property
    def total_rows(self) -> int:
        """Rows of the full stacked problem, N * dof."""
        return self.samples * self.W.shape[1]

    def residual(self, beta: np.ndarray) -> np.ndarray:
        """(nb + 1, dof) compressed residual ``tau_c - W_c beta``: per joint, the same sum of squares as the full
        residual ``tau - W beta`` (R_j [beta; -1] has the norm of [A_j | y_j] [beta; -1])."""
        return self.tau - self.W @ np.asarray(beta, dtype=float)

    def restricted(self, columns) -> CompressedProblem:
        """The problem with only the regressor columns ``columns`` (the rows of R_j stay a valid factor of the
        reduced Gram matrix: their products over the kept columns are unchanged)."""
        return CompressedProblem(W=self.W[:, :, list(columns)], tau=self.tau, samples=self.samples, rows=self.rows)


class StreamingQR:
    """Accumulates the per-joint factors R_j of [W[:, j, :] | tau[:, j]] chunk by chunk (module docstring)."""

    def __init__(self, dof: int, nb: int):
        self.dof, self.nb = dof, nb
        self._r = np.zeros((dof, nb + 1, nb + 1))
        self._active = np.zeros((dof, nb + 1), dtype=bool)
        self._samples = 0
        self._rows = np.zeros(dof, dtype=np.int64)

    def add(self, W: np.ndarray, tau: np.ndarray) -> None:
        """Append the samples ``W`` (n, dof, nb), ``tau`` (n, dof) (consecutive samples of the problem)."""
        W = np.asarray(W, dtype=float)
        tau = np.asarray(tau, dtype=float)
        if W.ndim != 3 or W.shape[1:] != (self.dof, self.nb) or tau.shape != W.shape[:2]:
            raise RobidInputError(
                f"streaming QR: expected a chunk (n, {self.dof}, {self.nb}) with torque (n, {self.dof}), got "
                f"{W.shape} and {tau.shape}"
            )
        for label, arr in (("regressor", W), ("torque", tau)):
            if not np.all(np.isfinite(arr)):
                idx = np.argwhere(~np.isfinite(arr))[0]
                at = (int(idx[0]) + self._samples,) + tuple(int(i) for i in idx[1:])
                raise RobidInputError(f"{label}: non-finite value at index {at}")
        for j in range(self.dof):
            self.add_rows(j, np.arange(self.nb), W[:, j, :], tau[:, j])
        self.count_samples(W.shape[0])

    def add_rows(self, joint: int, columns: np.ndarray, X: np.ndarray, y: np.ndarray, first: int | None = None
                 ) -> None:
        """Append rows of one joint given compactly: ``X`` (n, len(columns)) holds its regressor columns
        ``columns`` (the others zero on these rows), ``y`` (n,) its torque; :meth:`count_samples` then counts the
        samples once for all joints (:meth:`add` does both). ``first``: the sample number of the first row, for
        messages (default: the samples counted so far). Different joints may be appended from different threads
        (each joint's state is its own)."""
        nb = self.nb
        columns = np.asarray(columns, dtype=int)
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            bad = int(np.flatnonzero(~(np.all(np.isfinite(X), axis=1) & np.isfinite(y)))[0])
            at = (self._samples if first is None else first) + bad
            raise RobidInputError(f"regressor or torque: non-finite value at sample {at}, "
                                  f"joint {joint + 1}")
        nonzero = X != 0
        excited = np.zeros(nb + 1, dtype=bool)
        excited[columns] = nonzero.any(axis=0)
        excited[nb] = bool(np.any(y != 0))
        used = nonzero.any(axis=1) | (y != 0)
        m = int(used.sum())
        self._rows[joint] += m
        active = self._active[joint] | excited
        cols = np.flatnonzero(active)
        if cols.size == 0 or m == 0:
            self._active[joint] = active
            return
        k = cols.size
        r = self._r[joint]
        stacked = np.zeros((k + m, k))  # [R_j on the active columns; the new rows]
        stacked[:k] = r[np.ix_(cols, cols)]
        given = np.flatnonzero(active[columns])  # the given columns that are active, and their places in cols
        rows = X if m == X.shape[0] else X[used]
        stacked[k:, np.searchsorted(cols, columns[given])] = rows[:, given]
        if active[nb]:
            stacked[k:, k - 1] = y if m == y.shape[0] else y[used]
        r[np.ix_(cols, cols)] = _square(np.linalg.qr(stacked, mode="r"), k)
        self._active[joint] = active

    @property
    def samples(self) -> int:
        """The samples counted so far."""
        return self._samples

    def count_samples(self, n: int) -> None:
        """Count ``n`` samples added by :meth:`add_rows`."""
        self._samples += int(n)

    def problem(self) -> CompressedProblem:
        """The compressed problem of the samples added so far."""
        nb = self.nb
        W = np.ascontiguousarray(self._r[:, :, :nb].transpose(1, 0, 2))
        tau = np.ascontiguousarray(self._r[:, :, nb].T)
        return CompressedProblem(W=W, tau=tau, samples=self._samples, rows=self._rows.copy())


def _square(r: np.ndarray, k: int) -> np.ndarray:
    """R of a QR with fewer rows than columns padded with zero rows to k x k."""
    if r.shape[0] == k:
        return r
    out = np.zeros((k, k))
    out[: r.shape[0]] = r
    return out


#: samples per streaming-QR update of :func:`compress` (a few MB per joint)
CHUNK = 8192


def compress(W: np.ndarray, tau: np.ndarray, chunk: int = CHUNK) -> CompressedProblem:
    """The compressed problem of the stacked ``W`` (N, dof, nb), ``tau`` (N, dof), by :class:`StreamingQR`."""
    W = np.asarray(W, dtype=float)
    acc = StreamingQR(W.shape[1], W.shape[2])
    for start in range(0, W.shape[0], chunk):
        acc.add(W[start : start + chunk], tau[start : start + chunk])
    return acc.problem()
