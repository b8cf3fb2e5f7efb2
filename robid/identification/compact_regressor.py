"""The filtered base regressor of a long run held compactly: only the (joint, column) channels the run excites.

A serial robot's base regressor is largely zero by structure (the torque of joint j does not see the parameters
of the links before it, nor the friction of other joints): on the 7-axis Panda 209 of the 7 x 64 channels carry
anything. :class:`CompactRegressor` keeps those channels, as the non-periodic path's streamed parallel filter
returns them (robid.signals.nonperiodic_path.streamed_parallel_filter), and offers what identification and its
record ask of the regressor ``W`` (N, dof, nb): ``W @ values``, rows by slice, blocks of dense rows, the rows
that carry an equation. ``np.asarray(W)`` gives the dense array (for the few consumers that need it whole, at
their memory cost).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: dense rows per block handed out by :meth:`CompactRegressor.blocks` (a few tens of MB at most)
BLOCK = 8192


@dataclass(frozen=True, eq=False)
class CompactRegressor:
    """``W`` (N, rows, nb) with only the channels ``columns`` (flat indices ``row * nb + k``) stored, ``data``
    (N, len(columns)); every other channel is zero."""

    columns: np.ndarray
    data: np.ndarray
    shape: tuple[int, int, int]

    ndim = 3
    dtype = np.dtype(float)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def rows(self, lo: int, hi: int) -> np.ndarray:
        """Dense rows ``lo:hi`` (hi - lo, rows, nb)."""
        return self._dense(self.data[lo:hi])

    def _dense(self, data: np.ndarray) -> np.ndarray:
        n, rows, nb = data.shape[0], self.shape[1], self.shape[2]
        out = np.zeros((n, rows * nb))
        out[:, self.columns] = data
        return out.reshape(n, rows, nb)

    def blocks(self, size: int = BLOCK) -> Iterator[tuple[int, np.ndarray]]:
        """(start, dense rows start:start + size) over the run."""
        for lo in range(0, self.shape[0], size):
            yield lo, self.rows(lo, min(self.shape[0], lo + size))

    def __post_init__(self):
        if np.any(np.diff(self.columns) <= 0):
            raise ValueError("CompactRegressor: columns must be increasing (each row's channels contiguous)")

    def row_columns(self, row: int) -> tuple[slice, np.ndarray]:
        """The stored channels of regressor row ``row`` (a joint): (their positions in ``data``, a slice: the
        columns increase, so a row's channels are contiguous; their regressor columns)."""
        nb = self.shape[2]
        lo, hi = np.searchsorted(self.columns, [row * nb, (row + 1) * nb])
        return slice(int(lo), int(hi)), self.columns[lo:hi] - row * nb

    def __matmul__(self, values) -> np.ndarray:
        """``W @ values`` (N, rows): one product of the stored channels with their coefficients."""
        values = np.asarray(values, dtype=float)
        if values.shape != (self.shape[2],):
            raise ValueError(f"W @ values: expected {self.shape[2]} values, got shape {values.shape}")
        rows, nb = self.shape[1], self.shape[2]
        coefficients = np.zeros((self.columns.size, rows))
        coefficients[np.arange(self.columns.size), self.columns // nb] = values[self.columns % nb]
        return self.data @ coefficients

    def prediction_std(self, covariance: np.ndarray) -> np.ndarray:
        """robid.estimation.prediction_std of the regressor, (N, rows): each row's stored channels with their
        block of the covariance (the other channels are zero and add nothing)."""
        from robid.estimation import prediction_std

        cov = np.asarray(covariance, dtype=float)
        out = np.zeros(self.shape[:2])
        rows = [(row, where, cov[np.ix_(cols, cols)])
                for row, (where, cols) in ((r, self.row_columns(r)) for r in range(self.shape[1])) if cols.size]
        for lo in range(0, self.shape[0], BLOCK):  # a block of rows at a time: no copy of a row's whole channels
            block = self.data[lo : lo + BLOCK]
            for row, where, part in rows:
                out[lo : lo + BLOCK, row] = prediction_std(block[:, where][:, None, :], part, chunk=BLOCK)[:, 0]
        return out

    def used_rows(self, tau: np.ndarray) -> np.ndarray:
        """(N, rows) bool: the rows that carry an equation (robid.estimation._lsq.used_rows)."""
        used = np.asarray(tau) != 0
        for row in range(self.shape[1]):
            where, _ = self.row_columns(row)
            for lo in range(0, self.shape[0], BLOCK):
                used[lo : lo + BLOCK, row] |= np.any(self.data[lo : lo + BLOCK, where] != 0, axis=1)
        return used

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        first = np.arange(self.shape[0])[key[0]]
        dense = self._dense(self.data[np.atleast_1d(first)])
        if np.ndim(first) == 0:
            dense = dense[0]
        return dense[(slice(None),) + key[1:]] if np.ndim(first) else dense[key[1:]]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self._dense(self.data)
        return out if dtype is None else out.astype(dtype)

    def __eq__(self, other):  # elementwise comparison would silently compare objects: refuse it
        raise TypeError("CompactRegressor: compare np.asarray(W) or use used_rows()")

    __ne__ = __eq__
    __hash__ = object.__hash__
