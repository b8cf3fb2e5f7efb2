"""File helpers shared by every stage: YAML/JSON/text reading with errors that name the file and line, atomic
writes of text and JSON.

Reading is bounded (docs/security.md): a file is measured before it is read whole and refused above a limit
(:func:`check_size`: 64 MB for documents -- JSON, URDF, programs --, 8 MB for YAML files -- PyYAML holds about 30
bytes of memory per byte of a document, 2 GB for 60 MB -- and 1024 MB for measurement tables, raised with the
environment variables ``ROBID_MAX_DOCUMENT_MB``, ``ROBID_MAX_YAML_MB`` and ``ROBID_MAX_TABLE_MB``); text must be
UTF-8; a JSON or YAML document may nest at most :data:`MAX_DEPTH` levels, and a YAML document's aliases may expand
it to at most :data:`MAX_YAML_NODES` nodes (a "billion laughs" file is refused before it is built, and so is a
recursive alias). Each refusal is one line naming the file.

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

#: default limits of :func:`check_size`, MB, and the environment variables that override them
SIZE_LIMITS_MB = {"document": ("ROBID_MAX_DOCUMENT_MB", 64.0), "table": ("ROBID_MAX_TABLE_MB", 1024.0),
                  "YAML": ("ROBID_MAX_YAML_MB", 8.0)}
#: libyaml's parser when PyYAML has it (the same documents and errors, 10 times faster), else PyYAML's own
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: the deepest nesting of lists and mappings a JSON or YAML input may have (robid's files need fewer than 10)
MAX_DEPTH = 100
#: the most nodes a YAML document may expand to through its aliases
MAX_YAML_NODES = 1_000_000


def size_limit(kind: str) -> float:
    """The limit in bytes for a file of ``kind`` ("document" or "table"): its environment variable (MB), else the
    default of :data:`SIZE_LIMITS_MB`."""
    variable, default = SIZE_LIMITS_MB[kind]
    text = os.environ.get(variable, "").strip()
    try:
        mb = float(text) if text else default
    except ValueError:
        raise RobidInputError(f"{variable}={text!r}: expected a number of MB") from None
    if not mb > 0:
        raise RobidInputError(f"{variable}={text!r}: expected a positive number of MB")
    return mb * 1e6


def check_size(path: str | Path, kind: str = "document", what: str = "") -> int:
    """The size of ``path`` in bytes; RobidInputError naming it when it cannot be read or exceeds the limit of
    ``kind`` (module docstring)."""
    label = f" the {what}" if what else ""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot read{label} ({exc.strerror})") from None
    if Path(path).is_dir():
        raise RobidInputError(f"{path}: is a folder, not a file")
    limit = size_limit(kind)
    if size > limit:
        variable = SIZE_LIMITS_MB[kind][0]
        raise RobidInputError(f"{path}: {size / 1e6:.1f} MB is more than the {limit / 1e6:g} MB robid reads for a "
                              f"{kind} file (set {variable} to raise the limit)")
    return size


def read_bytes(path: str | Path, what: str = "", kind: str = "document") -> bytes:
    """The bytes of ``path``, within the size limit of ``kind``; errors name the file."""
    check_size(path, kind, what)
    label = f" the {what}" if what else ""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot read{label} ({exc.strerror})") from None


def decode_text(raw: bytes, path: str | Path) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped); RobidInputError naming the file, line and byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RobidInputError(f"{path}: line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                              f"{exc.start}); is it a binary file?") from None


def read_text(path: str | Path, what: str = "") -> str:
    """The text of ``path``; an unreadable, oversized or non-UTF-8 file raises RobidInputError naming it (and
    ``what`` it was for)."""
    return decode_text(read_bytes(path, what), path)


def check_depth(data: Any, where: str, limit: int = MAX_DEPTH) -> Any:
    """``data`` when its lists and mappings nest at most ``limit`` levels, else RobidInputError (iterative: a
    document deep enough to exhaust Python's recursion is refused, not crashed on)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                raise RobidInputError(f"{where}: lists and mappings nested more than {limit} levels deep")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return data


def _yaml_expanded_size(node: yaml.Node, where: str) -> int:
    """Nodes of the document under ``node`` with every alias expanded (post-order, memoised on the shared nodes,
    iterative); a recursive alias, nesting deeper than :data:`MAX_DEPTH` or more than :data:`MAX_YAML_NODES`
    nodes raises RobidInputError."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool, int]] = [(node, False, 1)]
    while stack:
        current, done, depth = stack.pop()
        key = id(current)
        children = _yaml_children(current)
        if done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                raise RobidInputError(f"{where}: the YAML expands to more than {MAX_YAML_NODES} values through its "
                                      "aliases (&anchor / *alias); robid refuses such a file")
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise RobidInputError(f"{where}: a YAML alias refers to a node that contains it (a recursive document)")
        if depth > MAX_DEPTH:
            raise RobidInputError(f"{where}: lists and mappings nested more than {MAX_DEPTH} levels deep")
        open_nodes.add(key)
        stack.append((current, True, depth))
        stack.extend((c, False, depth + 1) for c in children if id(c) not in sizes)
    return sizes[id(node)]


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _reader_problem(exc: yaml.reader.ReaderError) -> str:
    code = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return f"character {code:#06x} at position {exc.position} is not allowed in YAML"


def parse_yaml(text: str, where: str) -> Any:
    """The YAML document ``text`` (safe tags only), its size with aliases expanded and its depth checked before it
    is built (module docstring); errors name ``where`` and the line."""
    try:
        loader = _LOADER(text)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, escape, ...)
        raise RobidInputError(f"{where}: {_reader_problem(exc)}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _yaml_expanded_size(node, where)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        raise RobidInputError(f"{where}: {_reader_problem(exc)}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}:" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise RobidInputError(f"{where}:{line} malformed YAML ({problem})") from None
    except RecursionError:
        raise RobidInputError(f"{where}: lists and mappings nested too deep to read") from None
    finally:
        loader.dispose()


def read_yaml(path: str | Path, what: str = "", text: str | None = None) -> Any:
    """Parsed YAML of ``path`` (or of ``text``, named after ``path``); unreadable, oversized or malformed files
    raise RobidInputError naming file and line."""
    path = Path(path)
    if text is None:
        text = decode_text(read_bytes(path, what, "YAML"), path)
    return parse_yaml(text, str(path))


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
        return check_depth(json.loads(text), str(path))
    except json.JSONDecodeError as exc:
        raise RobidInputError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except RecursionError:
        raise RobidInputError(f"{path}: lists and mappings nested too deep to read") from None


def content_hash(path: str | Path) -> str:
    """SHA-256 of a file's bytes, or of a folder's files (names relative to it and contents, in sorted order: a
    measurement may be a folder of signal files), read in blocks."""
    import hashlib

    path = Path(path)
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            h.update(file.relative_to(path).as_posix().encode())
        try:
            with open(file, "rb") as f:
                for block in iter(lambda f=f: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as exc:
            raise RobidInputError(f"{file}: cannot read ({exc.strerror})") from None
    return h.hexdigest()


def ensure_folder(path: str | Path, what: str = "output folder") -> Path:
    """``path`` as a folder robid can write in, created with its parents; RobidInputError naming it when it is a
    file, lies under a file, or cannot be written (read-only, no permission, a special file system)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise RobidInputError(f"{path}: is a file; the {what} must be a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".robid-write-check.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot write the {what} there ({exc.strerror or exc})") from None
    return path
