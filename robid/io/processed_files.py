"""Writing processed signals: the PROCESSED.csv of ``robid process`` and its JSON summary (the record
robid.record.ProcessingSummary, the same fields as a run of RESULT.json), atomically.

Files are written to a temporary file in the target's directory and moved over the target with
``os.replace``, so a reader never sees half a file and an interrupted run leaves the old file intact.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robid.io.files import write_atomic, write_csv
from robid.record import ProcessingSummary
from robid.record.codec import to_plain
from robid.signals.records import ProcessedSignals


def processed_columns(p: ProcessedSignals) -> tuple[list[str], np.ndarray]:
    """Header and (N, columns) table: t, q1.., qd1.., qdd1.., [qddd1.., qdddd1..], tau1.., [theta1..],
    and keep1.. (0/1) when the data selection marked some rows unused."""
    n = p.dof
    blocks = [
        ("q", p.q),
        ("qd", p.qd),
        ("qdd", p.qdd),
        ("qddd", p.qddd),
        ("qdddd", p.qdddd),
        ("tau", p.tau),
        ("theta", p.theta),
    ]
    names = ["t"]
    arrays = [p.t[:, None]]
    for prefix, values in blocks:
        if values is None:
            continue
        names += [f"{prefix}{j}" for j in range(1, n + 1)]
        arrays.append(values)
    if not p.keep.all():
        names += [f"keep{j}" for j in range(1, n + 1)]
        arrays.append(p.keep.astype(float))
    return names, np.hstack(arrays)


def write_processed_csv(path: str | Path, p: ProcessedSignals) -> Path:
    """PROCESSED.csv of ``robid process`` (docs/interfaces.md section 4), 15 significant digits."""
    names, table = processed_columns(p)
    return write_csv(path, names, table, digits=15)


def write_summary_json(path: str | Path, summary: ProcessingSummary) -> Path:
    """The signal stage's summary record (robid.signals.processing_summary.processing_summary) as JSON, atomically."""
    return write_atomic(path, json.dumps(to_plain(summary), indent=2, allow_nan=False) + "\n")
