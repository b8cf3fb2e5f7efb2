"""The fleet's results as one table: one row per robot, date and base parameter (docs/fleet-drift.md)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from robid.errors import RobidInputError
from robid.fleet.results import FleetResult
from robid.io.files import write_atomic, write_atomic_with

COLUMNS = ("robot_type", "serial", "installation", "date", "campaign", "parameter", "value", "std", "class", "error",
           "result_path")


def results_frame(results: Sequence[FleetResult]):
    """A pandas DataFrame, one row per (robot, date, base parameter): robot_type, serial, installation, date,
    campaign, parameter, value, std, class, error (None when it ran), result_path. A failed identification is one
    row with its error, no parameter and NaN value and std."""
    import pandas as pd

    rows = []
    for r in results:
        common = [r.robot_type, r.serial, r.installation, r.date, r.campaign]
        if not r.ok:
            rows.append([*common, None, float("nan"), float("nan"), None, r.error or "no record", r.result_path])
            continue
        for p in r.record.base_parameters:
            std = float("nan") if p.std is None else p.std
            rows.append([*common, p.name, p.value, std, p.identifiability, None, r.result_path])
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype({"value": float, "std": float})


def write_results_table(path: str | Path, results: Sequence[FleetResult]) -> Path:
    """:func:`results_frame` written atomically: ``.csv``, or ``.parquet`` when pyarrow or fastparquet is
    installed."""
    path = Path(path)
    frame = results_frame(results)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return write_atomic(path, frame.to_csv(index=False))
    if suffix == ".parquet":
        engine = _parquet_engine()
        if engine is None:
            raise RobidInputError(f"{path}: writing .parquet needs pyarrow or fastparquet (pip install pyarrow); "
                                  "or give a .csv file")
        buffer = io.BytesIO()
        frame.to_parquet(buffer, engine=engine, index=False)
        data = buffer.getvalue()
        return write_atomic_with(path, lambda handle: _write_bytes(handle, data))
    raise RobidInputError(f"{path}: results table: expected a .csv or .parquet file name")


def _parquet_engine() -> str | None:
    import importlib.util

    for engine in ("pyarrow", "fastparquet"):
        if importlib.util.find_spec(engine) is not None:
            return engine
    return None


def _write_bytes(handle, data: bytes) -> None:
    """Bytes through the text handle write_atomic_with opens (its binary buffer)."""
    handle.flush()
    handle.buffer.write(data)
