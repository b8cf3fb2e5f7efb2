"""RESULT.json: the identification record (robid.record.IdentificationRecord) written atomically and read back.

Reading refuses, with one line naming the file: an unreadable or malformed file, a file that is not a robid
result, a schema of another major version, and a malformed entry (naming its key path)."""

from __future__ import annotations

from pathlib import Path

from robid.io.files import read_text, write_atomic
from robid.record import IdentificationRecord


def write_result(path: str | Path, record: IdentificationRecord) -> Path:
    """Write ``record`` to ``path`` as RESULT.json, atomically."""
    return write_atomic(path, record.to_json())


def read_result(path: str | Path) -> IdentificationRecord:
    """The record stored in RESULT.json ``path``."""
    return IdentificationRecord.from_json(read_text(path, "result"), str(path))
