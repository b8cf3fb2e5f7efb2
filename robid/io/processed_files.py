"""Writing processed signals: the PROCESSED.csv of ``robid process`` and a JSON summary, atomically.

Files are written to a temporary file in the target's directory and moved over the target with
``os.replace``, so a reader never sees half a file and an interrupted run leaves the old file intact.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from robid.io.files import write_atomic
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


def write_processed_csv(path: str | Path, p: ProcessedSignals) -> None:
    names, table = processed_columns(p)
    buffer = io.StringIO()
    buffer.write(",".join(names) + "\n")
    np.savetxt(buffer, table, delimiter=",", fmt="%.15g")
    write_atomic(path, buffer.getvalue())


def summary(p: ProcessedSignals) -> dict:
    """What a report shows about the signal stage (JSON-serialisable)."""
    nz = p.noise
    return {
        "robid_processed": 1,
        "mode": p.mode,
        "samples": p.n_samples,
        "sample_rate_hz": p.sample_rate,
        "period_s": p.period,
        "period_source": p.period_source,
        "n_periods": p.n_periods,
        "rejected_periods": list(p.rejected_periods),
        "harmonics": list(p.harmonics) if p.harmonics is not None else None,
        "cutoff_hz": p.cutoff_hz,
        "segment_s": list(p.segment) if p.segment else None,
        "trimmed_samples": list(p.trimmed),
        "standstill_s": [list(s) for s in p.standstill],
        "unused_rows_per_joint": [int(x) for x in np.count_nonzero(~p.keep, axis=0)],
        "noise": {
            "method": nz.method,
            "q_std": list(nz.q_std),
            "tau_std": list(nz.tau_std),
            "q_std_processed": list(nz.q_std_processed),
            "qd_std_processed": list(nz.qd_std_processed),
            "qdd_std_processed": list(nz.qdd_std_processed),
            "tau_std_processed": list(nz.tau_std_processed),
        },
        "dropped_rows": [
            {"file": r.file, "row": r.row, "sample": r.sample, "reason": r.reason} for r in p.dropped.rows
        ],
        "samples_read": p.dropped.samples_read,
        "notes": list(p.notes),
        "method": p.method.splitlines(),
    }


def write_summary_json(path: str | Path, p: ProcessedSignals) -> None:
    write_atomic(path, json.dumps(summary(p), indent=2) + "\n")
