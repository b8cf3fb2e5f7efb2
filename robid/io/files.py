"""File helpers shared by every stage: YAML/JSON/text reading with errors that name the file and line, atomic
writes of text and JSON.

Atomic: the text goes to a temporary file in the destination folder, which is then renamed over the
destination (os.replace), so a reader never sees half a file and a crash leaves the old file intact. The file
gets the usual permissions (0666 minus the umask), not mkstemp's private 0600.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import yaml

from robid.errors import RobidInputError


def read_text(path: str | Path, what: str = "") -> str:
    """The text of ``path``; an unreadable file raises RobidInputError naming it (and ``what`` it was for)."""
    label = f" the {what}" if what else ""
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot read{label} ({exc.strerror})") from None


def read_yaml(path: str | Path, what: str = "", text: str | None = None) -> Any:
    """Parsed YAML of ``path`` (or of ``text``, named after ``path``); unreadable or malformed files raise
    RobidInputError naming file and line."""
    path = Path(path)
    if text is None:
        text = read_text(path, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        raise RobidInputError(f"{path}:{line} malformed YAML ({getattr(exc, 'problem', exc)})") from None


def write_atomic_with(path: str | Path, writer: Callable[[IO[str]], None]) -> Path:
    """Call ``writer(handle)`` on a temporary file beside ``path``, then rename it to ``path``."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise RobidInputError(f"{path}: the folder {folder} {what}")
    if path.is_dir():
        raise RobidInputError(f"{path}: is a folder; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot write in {folder} ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            writer(handle)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # disk full, permissions, a special file system: the user's to fix
            raise RobidInputError(f"{path}: cannot write ({exc.strerror or exc})") from None
        raise
    return path


def write_atomic(path: str | Path, text: str) -> Path:
    return write_atomic_with(path, lambda handle: handle.write(text))


def write_csv(path: str | Path, columns: list[str], table: np.ndarray, digits: int = 15) -> Path:
    """A CSV with a header row and one row per line of ``table`` (``digits`` significant digits), atomically.
    NaN is written as ``nan``."""

    def writer(handle: IO[str]) -> None:
        handle.write(",".join(columns) + "\n")
        np.savetxt(handle, np.asarray(table, dtype=float), delimiter=",", fmt=f"%.{digits}g")

    return write_atomic_with(path, writer)


def write_json(path: str | Path, document: Any, indent: int | None = 1) -> Path:
    """``document`` as JSON text, atomically; NaN and infinity are refused (they are not JSON)."""
    return write_atomic(path, json.dumps(document, indent=indent, allow_nan=False) + "\n")


def read_json(path: str | Path, what: str = "", text: str | None = None) -> Any:
    """Parsed JSON of ``path`` (or of ``text``, named after ``path``); unreadable or malformed files raise
    RobidInputError naming file and line."""
    if text is None:
        text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RobidInputError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
