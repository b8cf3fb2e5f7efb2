"""Screening of raw measurement tables (row checks while reading): nothing is silent.

Every problem either stops the run with a one-line :class:`RobidInputError` that names the file, the row and
the column (``file: row R, column C: what``), or -- for isolated bad rows and only when the user allowed it --
removes the sample and records exactly which row was removed and why (:class:`DropRecord`).

Checks, in order (docs/signals.md section 3): unreadable rows (wrong column count, truncated, non-numeric,
empty), NaN/inf in a used column, time stamps that repeat or run backwards, position spikes and garbage rows,
too few samples, gaps in time, constant channels and saturated (clipped) torque or current channels.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.io.tables import RawTable
from robid.signals.records import DroppedRow, DropRecord

#: Kinds of channel; saturation is checked on efforts only (a position at rest repeats its value legally).
EFFORT_KINDS = ("torques", "currents")
#: Kinds of channel that are physically continuous: a jump there is a spike or a garbage row.
CONTINUOUS_KINDS = ("positions", "motor_positions")


@dataclass(frozen=True)
class ScreeningPolicy:
    """What screening tolerates. Defaults refuse every bad row.

    ``drop_bad_rows``: drop isolated bad rows (runs of at most ``max_bad_run`` inside the recording, any run
    at its start or end) and record them, as long as at most ``max_drop_fraction`` of the rows go.
    ``max_gap_factor``: a time step longer than this many median steps is a break in the recording.
    ``saturation_run``: this many consecutive samples sitting exactly at a torque/current channel's extreme
    value while the joint moves (by more than 1e-4 of its range) are a clipped signal.
    ``spike_factor``: a position that departs from the last good sample by more than this many median steps
    of its channel (while moving, per time step) is a spike or a garbage row (0 disables the check).
    ``allow_constant``/``allow_saturated``: channel names (q4, tau2, ...) exempted; a bare prefix (qd)
    exempts all channels of that signal.
    """

    drop_bad_rows: bool = False
    max_bad_run: int = 3
    max_drop_fraction: float = 0.05
    min_samples: int = 32
    max_gap_factor: float = 10.0
    saturation_run: int = 10
    spike_factor: float = 20.0
    allow_constant: tuple[str, ...] = ()
    allow_saturated: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChannelRef:
    """One used column: its canonical name (q1, tau3, t, ...), the table and the 0-based column."""

    name: str
    table: int
    column: int
    kind: str  # time | positions | velocities | accelerations | torques | currents | motor_positions


@dataclass(frozen=True)
class ScreeningResult:
    keep: np.ndarray  # (n_samples,) bool
    dropped: DropRecord
    notes: tuple[str, ...]


def channel_label(table: RawTable, ref: ChannelRef) -> str:
    """``column 14 (i1)`` / ``column 5 (q4)`` / ``column 2 (Joint_2 -> q2)`` / ``column rec.x[2] (q2)``."""
    if table.names is not None and ref.column < len(table.names):
        header = table.names[ref.column].strip()
        inner = header if header == ref.name else f"{header} -> {ref.name}"
        return f"column {ref.column + 1} ({inner})"
    if table.variable is not None:
        return f"column {table.variable}[{ref.column + 1}] ({ref.name})"
    return f"column {ref.column + 1} ({ref.name})"


def screen(
    tables: list[RawTable], channels: list[ChannelRef], time: ChannelRef | None, policy: ScreeningPolicy
) -> ScreeningResult:
    """Check the used columns of ``tables`` (all with the same number of samples); see the module docstring."""
    n = tables[channels[0].table].n_samples
    bad: dict[int, tuple[int, int, str]] = {}  # sample -> (table, row, reason); first problem wins

    used_tables = sorted({c.table for c in channels} | ({time.table} if time else set()))
    for ti in used_tables:
        for s, (row, reason) in tables[ti].problems.items():
            bad.setdefault(s, (ti, row, reason))
    for ref in ([time] if time else []) + channels:
        table = tables[ref.table]
        column = table.values[:, ref.column]
        nonfinite = np.flatnonzero(~np.isfinite(column))
        for s in nonfinite:
            s = int(s)
            if s in bad:
                continue
            what = "NaN" if np.isnan(column[s]) else ("inf" if column[s] > 0 else "-inf")
            bad[s] = (ref.table, int(table.rows[s]), f"{channel_label(table, ref)}: {what}")
    if time is not None:
        _check_time_order(tables[time.table], time, bad, policy)
    if policy.spike_factor > 0:
        times = tables[time.table].values[:, time.column] if time is not None else np.arange(n, dtype=float)
        _check_jumps(tables, channels, times, bad, n, policy)

    keep = np.ones(n, dtype=bool)
    dropped: list[DroppedRow] = []
    if bad:
        if not policy.drop_bad_rows:
            first = min(bad)
            ti, row, reason = bad[first]
            more = len(bad) - 1
            tail = f" ({more} more bad row{'s' if more > 1 else ''})" if more else ""
            raise RobidOptionError(None,
                _message(tables[ti], row, reason)
                + f"{tail}; to drop isolated bad rows and record them, allow it ({{drop_bad_rows}})"
            )
        keep, dropped = _drop(tables, bad, n, policy)

    record = DropRecord(rows=tuple(dropped), samples_read=n)
    notes: list[str] = []
    where = tables[channels[0].table].file
    kept = np.flatnonzero(keep)
    if kept.size < policy.min_samples:
        raise RobidInputError(f"{where}: only {kept.size} usable samples, at least {policy.min_samples} are needed")
    if time is not None:
        _check_gaps(tables[time.table], time, kept, policy)
    positions = {_joint(c.name): tables[c.table].values[kept, c.column] for c in channels if c.kind == "positions"}
    for ref in channels:
        notes += _check_channel(tables[ref.table], ref, kept, policy, positions.get(_joint(ref.name)))
    return ScreeningResult(keep=keep, dropped=record, notes=tuple(notes))


def _message(table: RawTable, row: int, reason: str) -> str:
    sep = ", " if reason.startswith("column") else ": "
    return f"{table.file}: row {row}{sep}{reason}"


def _not_bad(n: int, bad: dict[int, tuple[int, int, str]]) -> np.ndarray:
    """The samples 0..n-1 not in ``bad``, increasing (a mask: a 600 000-row record in milliseconds)."""
    keep = np.ones(n, dtype=bool)
    keep[[s for s in bad if 0 <= s < n]] = False
    return np.flatnonzero(keep)


def _check_time_order(
    table: RawTable, ref: ChannelRef, bad: dict[int, tuple[int, int, str]], policy: ScreeningPolicy
) -> None:
    """Time stamps must increase strictly.

    A stamp that fits neither neighbour (no step in (0, max_gap_factor * median step] to the previous or the
    next readable row) is a garbage row; of the rest, one longest strictly increasing run is kept and every
    other row is bad (a repeated stamp, or one that runs backwards).
    """
    candidates = _not_bad(table.n_samples, bad)
    if candidates.size < 3:
        return
    t = table.values[candidates, ref.column]
    steps = np.diff(t)
    if np.all(steps > 0) and np.max(steps) <= policy.max_gap_factor * np.median(steps):
        return
    positive = steps[steps > 0]
    limit = policy.max_gap_factor * (float(np.median(positive)) if positive.size else 0.0)
    fits = (steps > 0) & (steps <= limit)
    consistent = np.zeros(candidates.size, dtype=bool)
    consistent[:-1] |= fits
    consistent[1:] |= fits
    if np.count_nonzero(consistent) < 0.5 * candidates.size:
        consistent[:] = True  # most steps are irregular: the median step means nothing, judge order only
    for k in np.flatnonzero(~consistent):
        s = int(candidates[k])
        around = []
        if k > 0:
            around.append(f"row {table.rows[candidates[k - 1]]} has {t[k - 1]:.10g}")
        if k + 1 < candidates.size:
            around.append(f"row {table.rows[candidates[k + 1]]} has {t[k + 1]:.10g}")
        reason = f"time stamp {t[k]:.10g} does not fit its neighbours ({', '.join(around)})"
        bad[s] = (ref.table, int(table.rows[s]), f"{channel_label(table, ref)}: {reason}")
    sub = np.flatnonzero(consistent)
    ts = t[sub]
    if np.all(np.diff(ts) > 0):
        return
    chosen = sub[_longest_increasing(ts)]
    in_lis = np.zeros(candidates.size, dtype=bool)
    in_lis[chosen] = True
    lis_positions = np.flatnonzero(in_lis)
    for k in sub[~in_lis[sub]]:
        s = int(candidates[k])
        reason = _order_reason(table, ref, candidates, t[k], lis_positions[lis_positions < k],
                               lis_positions[lis_positions > k])
        bad[s] = (ref.table, int(table.rows[s]), f"{channel_label(table, ref)}: {reason}")


def _order_reason(table: RawTable, ref: ChannelRef, candidates: np.ndarray, tk: float, before: np.ndarray,
                  after: np.ndarray) -> str:
    """Why a stamp ``tk`` outside the kept increasing run is bad, from the kept rows ``before`` and ``after`` it
    (positions in ``candidates``): it repeats, runs backwards, jumps past the following rows, or is out of order."""
    if before.size:
        p = int(candidates[before[-1]])
        tp = table.values[p, ref.column]
        if tk == tp:
            return f"time stamp {tk:.10g} repeats row {table.rows[p]}"
        if tk < tp:
            return f"time stamp {tk:.10g} runs backwards (row {table.rows[p]} has {tp:.10g})"
        nxt = int(candidates[after[0]]) if after.size else p
        return (
            f"time stamp {tk:.10g} jumps past the following rows "
            f"(row {table.rows[nxt]} has {table.values[nxt, ref.column]:.10g})"
        )
    nxt = int(candidates[after[0]])
    return f"time stamp {tk:.10g} is out of order (row {table.rows[nxt]} has {table.values[nxt, ref.column]:.10g})"


def _check_jumps(
    tables: list[RawTable],
    channels: list[ChannelRef],
    times: np.ndarray,
    bad: dict[int, tuple[int, int, str]],
    n: int,
    policy: ScreeningPolicy,
) -> None:
    """Spikes and garbage rows: positions that jump away from the last good sample.

    Positions only (they are continuous; torques and currents have genuine fast transients). Steps are
    rates (change per median time step, so irregular sampling is judged fairly). Per channel, a rate is
    plausible up to ``spike_factor`` times the median rate while moving (steps above 1.5 quantisation steps:
    robust to a few garbage rows), and at least ``spike_factor`` quantisation steps per median time step.
    Starting from the longest run of plausible steps, samples are accepted forwards and backwards while they
    stay within that bound of the last accepted sample.
    """
    channels = [c for c in channels if c.kind in CONTINUOUS_KINDS]
    candidates = _not_bad(n, bad)
    if candidates.size < 8 or not channels:
        return
    x = np.column_stack([tables[c.table].values[candidates, c.column] for c in channels])
    t = times[candidates]
    dt = np.diff(t)
    h = float(np.median(dt))
    if not np.all(dt > 0) or h <= 0:
        return  # time order is reported by the time check
    span = np.maximum(dt / h, 1.0)[:, None]  # steps in units of the median time step
    steps, limit = _plausible_steps(x, span, policy.spike_factor)
    too_big = np.any(steps > limit * span, axis=1)
    if not too_big.any():
        return
    start, length = _longest_run(~too_big)
    for direction, first in ((1, start + length + 1), (-1, start - 1)):
        last = start + length if direction == 1 else start
        k = first
        while 0 <= k < candidates.size:
            allowed = limit * max(abs(t[k] - t[last]) / h, 1.0)
            jump = np.abs(x[k] - x[last])
            over = np.flatnonzero(jump > allowed)
            if over.size == 0:
                last = k
            else:
                c = int(over[0])
                ref = channels[c]
                table = tables[ref.table]
                s = int(candidates[k])
                reason = (
                    f"{channel_label(table, ref)}: value {x[k, c]:.6g} jumps by {jump[c]:.3g} from "
                    f"{x[last, c]:.6g} (row {table.rows[candidates[last]]}), more than the plausible "
                    f"{allowed[c]:.3g}: a spike or a garbage row"
                )
                bad[s] = (ref.table, int(table.rows[s]), reason)
            k += direction



def _plausible_steps(x: np.ndarray, span: np.ndarray, spike_factor: float) -> tuple[np.ndarray, np.ndarray]:
    """(|steps| of every channel, the plausible step per median time step of each channel): ``spike_factor`` times
    the median rate while moving, at least that many quantisation steps (:func:`_check_jumps`)."""
    steps = np.abs(np.diff(x, axis=0))
    positive = np.where(steps > 0, steps, np.inf)
    quantum = np.min(positive, axis=0)
    quantum[~np.isfinite(quantum)] = 0.0
    rates = steps / span
    scale = np.empty(x.shape[1])
    for c in range(x.shape[1]):
        moving = rates[:, c][steps[:, c] > 1.5 * quantum[c]]
        scale[c] = np.median(moving) if moving.size >= 10 else quantum[c]
    limit = spike_factor * np.maximum(scale, quantum)
    return steps, np.maximum(limit, 1e-9 * np.median(np.abs(x), axis=0))

def _longest_increasing(t: np.ndarray) -> np.ndarray:
    """Indices of one longest strictly increasing subsequence (patience sorting, O(n log n)); of equal
    values the first is kept."""
    tails: list[float] = []
    tail_index: list[int] = []
    parent = np.full(t.size, -1, dtype=int)
    for i, x in enumerate(t):
        k = bisect.bisect_left(tails, x)
        if k < len(tails) and tails[k] == x:
            continue  # a repeated stamp: the first occurrence stays, the repeat is the bad row
        if k == len(tails):
            tails.append(x)
            tail_index.append(i)
        else:
            tails[k] = x
            tail_index[k] = i
        parent[i] = tail_index[k - 1] if k > 0 else -1
    out = []
    i = tail_index[-1]
    while i >= 0:
        out.append(i)
        i = parent[i]
    return np.asarray(out[::-1], dtype=int)


def _drop(
    tables: list[RawTable], bad: dict[int, tuple[int, int, str]], n: int, policy: ScreeningPolicy
) -> tuple[np.ndarray, list[DroppedRow]]:
    """Drop the bad samples if they are isolated; refuse holes in the recording and too many drops."""
    is_bad = np.zeros(n, dtype=bool)
    is_bad[list(bad)] = True
    blocks, runs = _good_blocks(is_bad, policy.max_bad_run)
    if not blocks:
        ti, row, reason = bad[min(bad)]
        raise RobidInputError(_message(tables[ti], row, reason) + " (every row is bad)")
    sizes = [int(np.count_nonzero(~is_bad[b[0] : b[1] + 1])) for b in blocks]
    main = int(np.argmax(sizes))
    small = max(10, int(0.01 * n))
    keep = ~is_bad
    extra: dict[int, tuple[int, int, str]] = {}
    for k, (b, size) in enumerate(zip(blocks, sizes, strict=True)):
        if k == main:
            continue
        run = runs[k] if k < main else runs[k - 1]
        ti, row0, reason0 = bad[run[0]]
        _, row1, _ = bad[run[1]]
        if size > small:
            raise RobidInputError(
                f"{tables[ti].file}: rows {row0}-{row1}: {run[1] - run[0] + 1} consecutive bad rows inside the "
                f"recording (first: {reason0}); that is a hole, not an isolated bad row: split the file there"
            )
        for s in range(b[0], b[1] + 1):
            if keep[s]:
                extra[s] = (ti, int(tables[ti].rows[s]), f"isolated from the main recording by bad rows {row0}-{row1}")
                keep[s] = False
    everything = {**bad, **extra}
    fraction = len(everything) / n
    if fraction > policy.max_drop_fraction:
        ti, row, reason = bad[min(bad)]
        raise RobidInputError(
            f"{tables[ti].file}: {len(everything)} of {n} rows are bad ({100 * fraction:.1f} %, more than the "
            f"{100 * policy.max_drop_fraction:g} % that may be dropped); first: row {row}: {reason}"
        )
    dropped = [
        DroppedRow(file=tables[ti].file, row=row, sample=s + 1, reason=reason)
        for s, (ti, row, reason) in sorted(everything.items())
    ]
    return keep, dropped



def _good_blocks(is_bad: np.ndarray, max_bad_run: int) -> tuple[list[list[int]], list[tuple[int, int]]]:
    """Blocks of good samples ([first_good, last_good]), split where a run of bad samples inside the recording is
    longer than ``max_bad_run``, and those long bad runs between blocks ((first_bad, last_bad))."""
    n = is_bad.size
    blocks: list[list[int]] = []
    runs: list[tuple[int, int]] = []
    s = 0
    current: list[int] | None = None
    while s < n:
        if not is_bad[s]:
            if current is None:
                current = [s, s]
                blocks.append(current)
            current[1] = s
            s += 1
            continue
        e = s
        while e + 1 < n and is_bad[e + 1]:
            e += 1
        if e - s + 1 > max_bad_run and s > 0 and e < n - 1:
            current = None
            runs.append((s, e))
        s = e + 1
    return blocks, runs

def _check_gaps(table: RawTable, ref: ChannelRef, kept: np.ndarray, policy: ScreeningPolicy) -> None:
    t = table.values[kept, ref.column]
    dt = np.diff(t)
    median = float(np.median(dt))
    k = int(np.argmax(dt))
    if dt[k] > policy.max_gap_factor * median:
        r0, r1 = table.rows[kept[k]], table.rows[kept[k + 1]]
        raise RobidOptionError(None,
            f"{table.file}: rows {r0}-{r1}, {channel_label(table, ref)}: time jumps by {dt[k]:.6g} s, "
            f"{dt[k] / median:.1f} times the median step {median:.6g} s (a break in the recording: split the file, "
            "or raise {max_gap})"
        )


def _check_channel(
    table: RawTable,
    ref: ChannelRef,
    kept: np.ndarray,
    policy: ScreeningPolicy,
    position: np.ndarray | None,
) -> list[str]:
    """The notes of one channel's constant or saturated stretches that are allowed; any other refused."""
    x = table.values[kept, ref.column]
    label = channel_label(table, ref)
    lo, hi = float(np.min(x)), float(np.max(x))
    if lo == hi and _at_rest(ref, lo, position):
        return [
            f"{table.file}: {label}: constant at {lo:.6g} over all {x.size} samples: the joint holds still there "
            "(expected in a static pose or while another joint moves; noted)"
        ]
    if lo == hi:
        return [_allow_or_refuse(
            _allowed(ref.name, policy.allow_constant),
            f"{table.file}: {label}: constant at {lo:.6g} (allowed)",
            f"{table.file}: rows {table.rows[kept[0]]}-{table.rows[kept[-1]]}, {label}: constant at {lo:.6g} over "
            f"all {x.size} samples (dead sensor or wrong column?); if that is right, allow it with "
            f"--allow-constant {ref.name}",
        )]
    if ref.kind not in EFFORT_KINDS:
        return []
    notes: list[str] = []
    for extreme in (hi, lo):
        start, length = _longest_run(x == extreme)
        if length >= policy.saturation_run and position is not None:
            # a torque that holds its value while the joint stands still is physics, not clipping
            moving = np.ptp(position[start : start + length]) > 1e-4 * np.ptp(position)
        else:
            moving = True
        if length >= policy.saturation_run and moving:
            r0, r1 = table.rows[kept[start]], table.rows[kept[start + length - 1]]
            notes.append(_allow_or_refuse(
                _allowed(ref.name, policy.allow_saturated),
                f"{table.file}: rows {r0}-{r1}, {label}: at its extreme {extreme:.6g} (allowed)",
                f"{table.file}: rows {r0}-{r1}, {label}: saturated at {extreme:.6g} for {length} samples "
                f"(clipped signal); if that is right, allow it with --allow-saturated {ref.name}",
            ))
    return notes


#: a joint holds still when its positions span at most this many logged steps or noise standard deviations
REST_SPAN = 20.0


def _at_rest(ref: ChannelRef, value: float, position: np.ndarray | None) -> bool:
    """Whether a constant channel is what a joint at rest logs (issue 31: static poses, single-joint moves): a
    constant position (a joint that does not move, logged with a resolution coarser than its noise), or a
    velocity or acceleration exactly 0 while the joint's positions span no more than ``REST_SPAN`` logged steps
    or noise standard deviations (third differences, Donoho & Johnstone 1994). A torque or current that never
    changes is a dead channel, and a velocity of 0 while the joint moves is a dead sensor: those stay refused
    unless allowed."""
    if ref.kind in ("positions", "motor_positions"):
        return True
    if ref.kind not in ("velocities", "accelerations") or value != 0.0 or position is None:
        return False
    span = float(np.ptp(position))
    if span == 0.0:
        return True
    steps = np.diff(np.unique(position))
    d = np.diff(position, n=3) / np.sqrt(20.0) if position.size > 3 else np.zeros(1)
    noise = float(np.median(np.abs(d))) / 0.6745
    return span <= REST_SPAN * max(float(steps.min()) if steps.size else 0.0, noise)


def _allow_or_refuse(allowed: bool, note: str, refusal: str) -> str:
    """An allowed finding becomes a note (returned); any other stops the run with ``refusal``."""
    if not allowed:
        raise RobidInputError(refusal)
    return note


def _joint(name: str) -> str:
    """The joint number of a channel name: tau3 -> 3."""
    return name.lstrip("abcdefghijklmnopqrstuvwxyz")


def _allowed(name: str, allowed: tuple[str, ...]) -> bool:
    """``q4`` allows q4; a bare prefix (``qd``) allows every channel of that signal."""
    return name in allowed or name.rstrip("0123456789") in allowed


def _longest_run(mask: np.ndarray) -> tuple[int, int]:
    """Start and length of the longest run of True."""
    if not mask.any():
        return 0, 0
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    lengths = ends - starts
    k = int(np.argmax(lengths))
    return int(starts[k]), int(lengths[k])
