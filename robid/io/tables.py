"""Raw tables from measurement files, with the problem of every unreadable row kept for screening.

Readers never raise on a bad row: they record it (``RawTable.problems``) and leave NaN in its place, so that
screening (:mod:`robid.io.screening`) can decide, for all rows at once, whether to refuse the file or drop the
rows and record them. Rows are numbered as a user sees them in an editor: 1-based line numbers, header and
skipped lines included. For ``.mat`` files the row is the 1-based sample index.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from robid.errors import RobidInputError
from robid.io.mapping import ReadOptions


@dataclass
class RawTable:
    """Numbers of one file (or one .mat variable): ``values`` (n_samples, n_columns), NaN where unreadable."""

    file: str
    values: np.ndarray
    rows: np.ndarray  # (n_samples,) row number (line, or sample index for .mat) of each sample
    names: list[str] | None = None
    problems: dict[int, tuple[int, str]] = field(default_factory=dict)  # sample -> (row, reason)
    variable: str | None = None

    @property
    def n_samples(self) -> int:
        return int(self.values.shape[0])

    def column_label(self, col: int) -> str:
        """How the user names column ``col`` (0-based) of this table in a message."""
        if self.variable is not None:
            return f"{self.variable}[{col + 1}]"
        if self.names is not None and col < len(self.names):
            return f"{col + 1} ({self.names[col]})"
        return str(col + 1)

    def resolve(self, column: int | str, where: str) -> int:
        """0-based index of a mapping's column reference (1-based index or header name)."""
        n = self.values.shape[1]
        if isinstance(column, int):
            if column > n:
                raise RobidInputError(f"{where}: column {column} does not exist: {self.file} has {n} columns")
            return column - 1
        if self.names is None:
            raise RobidInputError(f"{where}: column {column!r} given by name but {self.file} has no header row")
        stripped = [s.strip() for s in self.names]
        if column not in stripped:
            raise RobidInputError(f"{where}: no column named {column!r} in {self.file} (header: {', '.join(stripped)})")
        return stripped.index(column)


def file_format(path: Path, options: ReadOptions) -> str:
    if options.format is not None:
        return options.format
    suffix = path.suffix.lower()
    if suffix == ".mat":
        return "mat"
    if suffix == ".csv":
        return "csv"
    return "text"


def read_text_table(path: Path, options: ReadOptions, fmt: str) -> RawTable:
    """A delimited (csv) or whitespace-separated (text) file, optionally one flat list of values."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot read ({exc.strerror})") from None
    if b"\x00" in raw[:4096]:
        raise RobidInputError(f"{path}: row 1: binary data, not a text file (for .mat files use format: mat)")
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    header = options.header if options.header is not None else fmt == "csv"
    delimiter = options.delimiter if fmt == "csv" else None

    index = options.skip_rows
    names = None
    if header:
        while index < len(lines) and _skippable(lines[index], options.comment):
            index += 1
        if index >= len(lines):
            raise RobidInputError(f"{path}: row {index + 1}: no header row (the file has {len(lines)} lines)")
        names = _split(lines[index], delimiter)
        names = [n.strip().strip('"').strip("'") for n in names]
        index += 1
    end = len(lines)
    while end > index and not lines[end - 1].strip():
        end -= 1  # trailing blank lines are not rows
    if options.comment is None:
        body = lines[index:end]
        line_no = np.arange(index + 1, end + 1)
    else:
        kept = [k for k in range(index, end) if not lines[k].lstrip().startswith(options.comment)]
        body = [lines[k] for k in kept]
        line_no = np.asarray(kept, dtype=int) + 1
    if options.values_per_sample is not None:
        return _flat_table(path, body, np.asarray(line_no, dtype=int), delimiter, options.values_per_sample)
    return _row_table(path, body, np.asarray(line_no, dtype=int), delimiter, names)


def _skippable(line: str, comment: str | None) -> bool:
    return not line.strip() or (comment is not None and line.lstrip().startswith(comment))


def _split(line: str, delimiter: str | None) -> list[str]:
    return line.split(delimiter) if delimiter is not None else line.split()


def _count(line: str, delimiter: str | None) -> int:
    if not line.strip():
        return 0
    return line.count(delimiter) + 1 if delimiter is not None else len(line.split())


def _row_table(path: Path, body: list[str], line_no: np.ndarray, delimiter: str | None, names) -> RawTable:
    counts = [_count(line, delimiter) for line in body]
    if names is not None:
        expected = len(names)
    else:
        nonzero = [c for c in counts if c]
        if not nonzero:
            raise RobidInputError(f"{path}: no data rows")
        expected = Counter(nonzero).most_common(1)[0][0]
    problems: dict[int, tuple[int, str]] = {}
    good = []
    for k, c in enumerate(counts):
        if c == expected:
            good.append(k)
        elif c == 0:
            problems[k] = (int(line_no[k]), "empty row")
        elif c < expected:
            problems[k] = (int(line_no[k]), f"truncated row: {c} of {expected} columns")
        else:
            problems[k] = (int(line_no[k]), f"{c} columns, expected {expected}")
    values = np.full((len(body), expected), np.nan)
    if good:
        good_idx = np.asarray(good)
        parsed = _parse_block([body[k] for k in good], delimiter, expected)
        if parsed is not None:
            values[good_idx] = parsed
        else:
            for k in good:
                row, reason = _parse_line(body[k], delimiter, names)
                if reason is None:
                    values[k] = row
                else:
                    problems[k] = (int(line_no[k]), reason)
    return RawTable(file=str(path), values=values, rows=line_no, names=names, problems=problems)


def _parse_block(lines: list[str], delimiter: str | None, ncol: int) -> np.ndarray | None:
    """Fast path: the C parser of pandas; None if any cell is not a number (then rows are parsed one by one)."""
    if delimiter is None:
        text = "\n".join(line.strip() for line in lines)
        sep = r"\s+"
    else:
        text = "\n".join(lines)
        sep = delimiter
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            header=None,
            dtype=np.float64,
            na_filter=False,
            skip_blank_lines=False,
            engine="c",
        )
    except (ValueError, pd.errors.ParserError):
        return None
    array = frame.to_numpy(dtype=float)
    if array.shape != (len(lines), ncol):
        return None
    return array


def _parse_line(line: str, delimiter: str | None, names) -> tuple[np.ndarray | None, str | None]:
    cells = _split(line, delimiter)
    out = np.empty(len(cells))
    for c, cell in enumerate(cells):
        try:
            out[c] = float(cell)
        except ValueError:
            label = f"{c + 1} ({names[c]})" if names is not None and c < len(names) else str(c + 1)
            shown = cell.strip()
            shown = shown if len(shown) <= 24 else shown[:21] + "..."
            return None, f"column {label}: {shown!r} is not a number"
    return out, None


def _flat_table(path: Path, body: list[str], line_no: np.ndarray, delimiter: str | None, k: int) -> RawTable:
    """One flat list of numbers (any number per line), grouped k per sample: the Panda log layout."""
    if delimiter is None and body and all(body):
        single = _parse_block(body, None, 1)  # fast path: exactly one number on every line
        if single is not None:
            n_samples = len(body) // k
            if n_samples * k == len(body):
                return RawTable(
                    file=str(path),
                    values=single[:, 0].reshape(n_samples, k),
                    rows=np.asarray(line_no[::k], dtype=int),
                )
    counts = np.asarray([_count(line, delimiter) for line in body], dtype=int)
    token_line = np.repeat(line_no, counts)
    tokens = [tok for line in body for tok in _split(line, delimiter) if line.strip()]
    n_tokens = len(tokens)
    values = np.full(n_tokens, np.nan)
    bad_tokens: dict[int, str] = {}
    parsed = _parse_block(tokens, None, 1) if tokens else None
    if parsed is not None:
        values[:] = parsed[:, 0]
    else:
        for idx, tok in enumerate(tokens):
            try:
                values[idx] = float(tok)
            except ValueError:
                bad_tokens[idx] = f"{tok.strip()[:24]!r} is not a number"
    n_samples = n_tokens // k
    problems: dict[int, tuple[int, str]] = {}
    for idx, reason in bad_tokens.items():
        s = idx // k
        if s < n_samples and s not in problems:
            problems[s] = (int(token_line[idx]), f"value {idx % k + 1} of the sample: {reason}")
    rest = n_tokens - n_samples * k
    table_values = values[: n_samples * k].reshape(n_samples, k)
    rows = token_line[: n_samples * k : k] if n_samples else np.zeros(0, dtype=int)
    if rest:
        # a last, incomplete sample: keep it as a bad row so that screening reports it
        table_values = np.vstack([table_values, np.full((1, k), np.nan)])
        rows = np.append(rows, token_line[n_samples * k])
        problems[n_samples] = (
            int(token_line[n_samples * k]),
            f"truncated sample: {rest} of {k} values at the end of the file",
        )
    return RawTable(file=str(path), values=table_values, rows=np.asarray(rows, dtype=int), problems=problems)


# ------------------------------------------------------------------------------------------------- .mat
def load_mat(path: Path) -> dict:
    import scipy.io

    try:
        return scipy.io.loadmat(str(path), squeeze_me=True, struct_as_record=False)
    except NotImplementedError:
        raise RobidInputError(
            f"{path}: MATLAB v7.3 (HDF5) files are not supported; save with -v7 or export the signals to CSV"
        ) from None
    except (ValueError, TypeError, OSError) as exc:
        raise RobidInputError(f"{path}: cannot read as a MATLAB .mat file ({exc})") from None


def mat_variable(contents: dict, path: Path, variable: str, n_samples: int | None) -> RawTable:
    """A 1-D or 2-D numeric array inside a .mat file; ``a.b.c`` walks into MATLAB structs.

    2-D arrays may be (channels x samples) or (samples x channels): the axis whose length equals the number
    of samples of the time signal is the sample axis, else the longer axis.
    """
    names = variable.split(".")
    if names[0] not in contents:
        found = ", ".join(k for k in contents if not k.startswith("__"))
        raise RobidInputError(f"{path}: no variable {names[0]!r} (the file holds: {found})")
    value = contents[names[0]]
    for depth, name in enumerate(names[1:], start=1):
        fields = getattr(value, "_fieldnames", None)
        if fields is None or name not in fields:
            have = ", ".join(fields) if fields else "no fields"
            raise RobidInputError(f"{path}: {'.'.join(names[:depth])} has no field {name!r} ({have})")
        value = getattr(value, name)
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise RobidInputError(f"{path}: {variable} is not a numeric array") from None
    if array.ndim == 0 or array.ndim > 2:
        raise RobidInputError(f"{path}: {variable} has shape {array.shape}; expected a vector or a matrix")
    if array.ndim == 1:
        array = array[:, None]
    elif n_samples is not None and array.shape[1] == n_samples and array.shape[0] != n_samples:
        array = array.T
    elif (n_samples is None or array.shape[0] != n_samples) and array.shape[1] > array.shape[0]:
        array = array.T
    rows = np.arange(1, array.shape[0] + 1)
    return RawTable(file=str(path), values=np.array(array, dtype=float), rows=rows, variable=variable)
