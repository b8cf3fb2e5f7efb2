"""The zero-phase (forward-backward) low-pass of :mod:`robid.signals.filtering` on a record given block by block,
without ever holding the input, its padded extension or the output whole.

It computes exactly what ``scipy.signal.sosfiltfilt(sos, x, axis=0, padtype=...)`` computes on the whole ``x``
(Gustafsson's forward-backward scheme with scipy's initial conditions: odd extension of ``3 * (2 n_sections + 1)``
samples at each end, or none; ``sosfilt_zi`` scaled by the first sample of each pass), in the same arithmetic
order: the forward pass is a recursion whose state (``zi``) is carried from block to block, so cutting the record
into blocks changes no operation; the forward output is kept (compactly: only the channels excited so far) and
the backward pass runs over it block by block from the end.

Channels that are zero on every sample up to a block (e.g. regressor columns that a joint never excites) have an
exactly zero forward output up to there and are not filtered there; a channel that is zero on the whole record is
never filtered and gives zeros.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import signal


def pad_length(sos: np.ndarray) -> int:
    """The odd extension of ``scipy.signal.sosfiltfilt``'s default padding at each end."""
    sos = np.atleast_2d(sos)
    taps = 2 * sos.shape[0] + 1 - min(int((sos[:, 2] == 0).sum()), int((sos[:, 5] == 0).sum()))
    return 3 * taps


def zero_phase_blocks(
    blocks: Iterable[np.ndarray], n: int, channels: int, sos: np.ndarray, padded: bool = True
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Forward-backward filtering of the record (n, channels) given as consecutive ``blocks`` (rows, channels);
    ``padded``: scipy's odd padding (``padtype="odd"``), else none (``padtype=None``). Yields
    ``(start, columns, out)`` from the last block to the first: ``out`` (rows, len(columns)) holds the filtered
    rows ``start:start + rows`` of the channels ``columns`` (the channels excited anywhere in the record; the
    others are zero).

    The first block must hold more than the padding (:func:`pad_length`) rows when ``padded``."""
    sos = np.atleast_2d(np.asarray(sos, dtype=float))
    edge = pad_length(sos) if padded else 0
    if padded and n <= edge:
        raise ValueError(f"zero-phase filter: {n} samples, the padding needs more than {edge}")
    zi_unit = signal.sosfilt_zi(sos)[:, :, None]  # (sections, 2, 1)
    state = np.zeros((sos.shape[0], 2, channels))
    active = np.zeros(channels, dtype=bool)
    forward: list[tuple[int, np.ndarray, np.ndarray]] = []  # (start, columns, forward output on them)
    tail = np.zeros((0, channels))  # the last edge + 1 input rows, for the odd extension at the end
    start = 0
    for block in blocks:
        block = np.asarray(block, dtype=float)
        if start == 0:
            if padded and block.shape[0] <= edge:
                raise ValueError(f"zero-phase filter: the first block needs more than {edge} rows")
            head = 2.0 * block[0] - block[edge:0:-1] if padded else block[:0]
            x0 = head[0] if padded else block[0]
            state = zi_unit * x0[None, None, :]
            active = np.any(head, axis=0) | np.any(block, axis=0) | np.any(state, axis=(0, 1))  # nonzero (NaN too)
            if padded:
                _, state_active = _run(sos, head[:, active], state[:, :, active])
                state[:, :, active] = state_active
        elif not active.all():  # the whole block reduced in place: cheaper than gathering the idle channels
            active |= np.any(block, axis=0)
        cols = np.flatnonzero(active)
        out, state_cols = _run(sos, block, state[:, :, cols], cols)
        state[:, :, cols] = state_cols
        forward.append((start, cols, out))
        if edge:
            tail = np.concatenate([tail, block[-(edge + 1):]])[-(edge + 1):]
        start += block.shape[0]
    if start != n:
        raise ValueError(f"zero-phase filter: the blocks hold {start} rows, expected {n}")
    cols = np.flatnonzero(active)
    if padded:
        end = 2.0 * tail[-1] - tail[-2::-1][:edge]
        end_out, _ = _run(sos, end[:, cols], state[:, :, cols])
        last = end_out[-1]
        backward_in = [end_out]
    else:
        last = _expand(forward[-1], cols)[-1]
        backward_in = []
    state = zi_unit * last[None, None, :]
    for rows in backward_in:  # the end extension: run through, output dropped
        _, state = _run(sos, rows[::-1], state)
    while forward:
        item = forward.pop()
        y = _expand(item, cols)
        out, state = _run(sos, y[::-1], state)
        yield item[0], cols, out[::-1]


def _expand(item: tuple[int, np.ndarray, np.ndarray], cols: np.ndarray) -> np.ndarray:
    """A forward block on the record's excited channels ``cols`` (its own channels are a subset of them)."""
    _, own, values = item
    if own.size == cols.size:
        return values
    out = np.zeros((values.shape[0], cols.size))
    out[:, np.searchsorted(cols, own)] = values
    return out


def _run(sos: np.ndarray, x: np.ndarray, zi: np.ndarray, columns: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    """One pass of the cascade along axis 0 over the channels ``columns`` of ``x`` (all when None) from the state
    ``zi`` (sections, 2, len(columns)): (output, final state).

    Each channel is its own recursion, so a wide block is cut into ``WORKERS`` groups of channels filtered at
    once on threads (scipy's sosfilt and numpy's gathering of the columns run without the GIL): the same
    operations on every channel, hence the same numbers as one call."""
    width = x.shape[1] if columns is None else columns.size
    if width == 0:
        return np.zeros((x.shape[0], 0)), zi

    def part(a: int, b: int) -> np.ndarray:
        return x[:, a:b] if columns is None else x[:, columns[a:b]]

    groups = min(WORKERS, width // MIN_CHANNELS)
    if groups < 2 or x.shape[0] * width < MIN_THREADED:
        return signal.sosfilt(sos, part(0, width), axis=0, zi=zi)
    cuts = np.linspace(0, width, groups + 1).astype(int)
    # channel-major output (sosfilt filters along the last axis and hands back such views), so that the
    # backward pass reads every channel contiguously; each thread copies its own channels into it
    out = np.empty((width, x.shape[0])).T
    final = np.empty_like(zi)

    def group(k: int) -> None:
        a, b = cuts[k], cuts[k + 1]
        out[:, a:b], final[:, :, a:b] = signal.sosfilt(sos, part(a, b), axis=0, zi=zi[:, :, a:b])

    list(_pool().map(group, range(groups)))
    return out, final


#: threads that filter a wide block's channels at once (two cores are the machines robid is measured on); 1: no
#: threads
WORKERS = min(2, os.cpu_count() or 1)
#: channels per thread at least, and values per block at least, for the threads to pay
MIN_CHANNELS = 8
MIN_THREADED = 1 << 16


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool() -> ThreadPoolExecutor:
    """The filter's thread pool of this process (a forked child gets its own: the parent's threads are not
    there)."""
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS.clear()
        _POOLS[pid] = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="robid-filter")
    return _POOLS[pid]
