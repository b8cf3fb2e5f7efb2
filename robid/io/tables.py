"""Raw tables from measurement files, with the problem of every unreadable row kept for screening.

Readers never raise on a bad row: they record it (``RawTable.problems``) and leave NaN in its place, so that
screening (:mod:`robid.io.screening`) can decide, for all rows at once, whether to refuse the file or drop the
rows and record them. Rows are numbered as a user sees them in an editor: 1-based line numbers, header and
skipped lines included. For ``.mat`` files the row is the 1-based sample index.

Delimited files follow RFC 4180 quoting: a field in double quotes may hold the delimiter (``"1,5"``) and a doubled
quote (``""``); blanks around a quoted field are ignored. A quote that is not closed, text after a closing quote,
or a quote inside an unquoted field makes the row unreadable, with the column named. A number with a decimal comma
(``"1,5"`` in a comma-separated file, ``1,5`` in a semicolon-separated one) is read as 1.5. ``1,500`` could also be
a thousands separator: it is read as a decimal comma only when the file has an unambiguous decimal comma elsewhere
(e.g. ``0,25`` or ``1,5``), else its row is unreadable with that reason.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from robid.errors import RobidInputError
from robid.io.files import check_size
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
    check_size(path, "table")
    try:
        with open(path, "rb") as handle:  # a binary file is refused on its first bytes, before it is read whole
            raw = handle.read(4096)
            if b"\x00" in raw:
                raise RobidInputError(f"{path}: row 1: binary data, not a text file (for .mat files use format: mat)")
            raw += handle.read()
    except OSError as exc:
        raise RobidInputError(f"{path}: cannot read ({exc.strerror})") from None
    fast = _plain_csv(path, raw, options, fmt)
    if fast is not None:
        return fast
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
        try:
            names = _split(lines[index], delimiter)
        except _MalformedQuote as exc:
            raise RobidInputError(f"{path}: row {index + 1} (header), column {exc.column}: {exc.reason}") from None
        quotes = "'" if delimiter is not None else "'\""  # delimited: double quotes were read by _split
        names = [n.strip().strip(quotes) for n in names]
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


#: bytes that end a line for str.splitlines besides "\n" (and "\x85", "\u2028", "\u2029": not ASCII)
_OTHER_LINE_ENDS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")


def _plain_csv(path: Path, raw: bytes, options: ReadOptions, fmt: str) -> RawTable | None:
    """The table of a plain delimited file read straight from its bytes by the C parser: ASCII, lines ended by
    "\n" only, no quotes, no comment option, a header, every row with the header's number of cells (the
    delimiters add up to exactly ``len(names) - 1`` per row, as :func:`_clean_table` checks). The same numbers
    and row numbers as the line-by-line path, without decoding and splitting the text into lines (for a 600 000
    row file, most of its reading time). None when the file is not plain: the general path reads it."""
    header = options.header if options.header is not None else fmt == "csv"
    if fmt != "csv" or not header or options.comment is not None or options.values_per_sample is not None:
        return None
    if not raw.isascii() or b'"' in raw or any(end in raw for end in _OTHER_LINE_ENDS):
        return None
    delimiter = options.delimiter
    pos, line = 0, 0
    for _ in range(options.skip_rows):
        pos = raw.find(b"\n", pos) + 1
        if pos == 0:
            return None
        line += 1
    while True:  # the header: the first line after the skipped ones that is not blank
        end = raw.find(b"\n", pos)
        if end < 0:
            return None
        text = raw[pos:end].decode("ascii")
        pos, line = end + 1, line + 1
        if text.strip():
            break
    names = [n.strip().strip("'") for n in text.split(delimiter)]
    end = len(raw) - 1 if raw.endswith(b"\n") else len(raw)  # the bytes are never copied: counted in place
    if end <= pos or raw.endswith(b"\n\n") or not raw[raw.rfind(b"\n", pos, end) + 1 : end].strip():
        return None  # no rows, or trailing blank lines (the general path drops them)
    rows = raw.count(b"\n", pos, end) + 1
    if raw.count(delimiter.encode("ascii"), pos, end) != rows * (len(names) - 1):
        return None
    values = _parse_bytes(raw, line, delimiter, len(names), rows)
    if values is None:
        return None
    return RawTable(file=str(path), values=values, rows=np.arange(line + 1, line + rows + 1), names=names)


def _parse_bytes(raw: bytes, skip: int, delimiter: str, ncol: int, rows: int) -> np.ndarray | None:
    """:func:`_parse_block` on the file's bytes after its first ``skip`` lines (the C parser reads them without
    a text layer); None unless it gives exactly ``rows`` x ``ncol`` numbers."""
    try:
        frame = pd.read_csv(io.BytesIO(raw), sep=delimiter, header=None, skiprows=skip, dtype=np.float64,
                            na_filter=False, skip_blank_lines=False, engine="c")
    except (ValueError, pd.errors.ParserError):
        return None
    array = frame.to_numpy(dtype=float)
    return array if array.shape == (rows, ncol) else None


def _skippable(line: str, comment: str | None) -> bool:
    return not line.strip() or (comment is not None and line.lstrip().startswith(comment))


class _MalformedQuote(ValueError):
    """A delimited line whose quoting cannot be read; ``column`` is 1-based."""

    def __init__(self, column: int, reason: str):
        super().__init__(f"column {column}: {reason}")
        self.column = column
        self.reason = reason


_CELL_PATTERNS: dict[str, re.Pattern] = {}


def _cell_pattern(delimiter: str) -> re.Pattern:
    """One field at a position: a quoted one (blanks around it allowed) or an unquoted one without quotes."""
    if delimiter not in _CELL_PATTERNS:
        d = re.escape(delimiter)
        _CELL_PATTERNS[delimiter] = re.compile(rf'[ \t]*"((?:[^"]|"")*)"[ \t]*(?={d}|$)|([^"{d}]*)(?={d}|$)')
    return _CELL_PATTERNS[delimiter]


def _quoted_cells(line: str, delimiter: str) -> list[str]:
    """The fields of a delimited line with RFC 4180 quotes; raises :class:`_MalformedQuote` naming the column."""
    pattern = _cell_pattern(delimiter)
    cells: list[str] = []
    pos = 0
    while True:
        m = pattern.match(line, pos)
        if m is None:
            rest = line[pos:].lstrip(" \t")
            if not rest.startswith('"'):
                reason = 'a quote (") inside an unquoted field; quote the whole field and double inner quotes'
            elif re.match(r'"(?:[^"]|"")*"', rest) is None:
                reason = f"unterminated quote: {_shown(rest)} has no closing quote on this line"
            else:
                reason = f"text after the closing quote in {_shown(rest.split(delimiter)[0])}"
            raise _MalformedQuote(len(cells) + 1, reason)
        cells.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2))
        pos = m.end()
        if pos >= len(line):
            return cells
        pos += len(delimiter)


def _shown(text: str, width: int = 24) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def _split(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return line.split()
    return _quoted_cells(line, delimiter) if '"' in line else line.split(delimiter)


def _count(line: str, delimiter: str | None) -> int:
    if not line.strip():
        return 0
    if delimiter is not None and '"' in line:
        return len(_quoted_cells(line, delimiter))
    return line.count(delimiter) + 1 if delimiter is not None else len(line.split())


#: a number with a decimal comma: "1,5", "-0,25", ",5", "1,5e-3"
_DECIMAL_COMMA = re.compile(r"[+-]?(\d*),(\d+)(?:[eE][+-]?\d+)?")
#: a number with a decimal comma that could also be an integer with a thousands separator: "1,500", "-12,345"
_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2},\d{3}")


def _number(cell: str) -> tuple[float, str]:
    """The value of a cell and how it was read: "plain", "comma" (a decimal comma) or "ambiguous" ("1,500":
    decimal comma or thousands separator); raises ValueError when the cell is not a number."""
    try:
        return float(cell), "plain"
    except ValueError:
        text = cell.strip()
        if _DECIMAL_COMMA.fullmatch(text) is None:
            raise
        return float(text.replace(",", ".")), "ambiguous" if _THOUSANDS.fullmatch(text) else "comma"


def _row_table(path: Path, body: list[str], line_no: np.ndarray, delimiter: str | None, names) -> RawTable:
    clean = _clean_table(body, delimiter, names)
    if clean is not None:
        return RawTable(file=str(path), values=clean, rows=line_no, names=names)
    problems: dict[int, tuple[int, str]] = {}
    counts = []
    for k, line in enumerate(body):
        try:
            counts.append(_count(line, delimiter))
        except _MalformedQuote as exc:
            counts.append(-1)
            problems[k] = (int(line_no[k]), f"column {_label(exc.column - 1, names)}: {exc.reason}")
    if names is not None:
        expected = len(names)
    else:
        nonzero = [c for c in counts if c > 0]
        if not nonzero:
            raise RobidInputError(f"{path}: no data rows")
        expected = Counter(nonzero).most_common(1)[0][0]
    good = []
    for k, c in enumerate(counts):
        if c < 0:
            continue
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
            _parse_lines(body, good, line_no, delimiter, names, values, problems)
    return RawTable(file=str(path), values=values, rows=line_no, names=names, problems=problems)


def _clean_table(body: list[str], delimiter: str | None, names) -> np.ndarray | None:
    """The whole body in one pass of the C parser when every row is sure to have the header's number of cells
    and no quotes: no row can have more cells (the parser refuses those) and the delimiters add up to exactly
    ``len(names) - 1`` per row, so none has fewer (nor is empty). None otherwise: the rows are then counted and
    screened one by one (:func:`_row_table`)."""
    if delimiter is None or names is None or not body:
        return None
    text = "\n".join(body)
    if '"' in text or text.count(delimiter) != len(body) * (len(names) - 1):
        return None
    return _parse_block(body, delimiter, len(names), text)


def _parse_block(lines: list[str], delimiter: str | None, ncol: int, text: str | None = None) -> np.ndarray | None:
    """Fast path: the C parser of pandas; None if any cell is not a number (then rows are parsed one by one)."""
    if delimiter is None:
        text = "\n".join(line.strip() for line in lines)
        sep = r"\s+"
    else:
        text = "\n".join(lines) if text is None else text
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


def _label(c: int, names) -> str:
    return f"{c + 1} ({names[c]})" if names is not None and c < len(names) else str(c + 1)


def _parse_lines(body, good, line_no, delimiter, names, values, problems) -> None:
    """The slow path, row by row (quoted fields, decimal commas, cells that are not numbers). A cell such as
    ``1,500`` is read as a decimal comma only when another cell of the file has an unambiguous one."""
    ambiguous: dict[int, str] = {}
    decimal_comma = False
    for k in good:
        row, reason, kinds = _parse_line(body[k], delimiter, names)
        decimal_comma = decimal_comma or "comma" in kinds
        if reason is not None:
            problems[k] = (int(line_no[k]), reason)
        elif "ambiguous" in kinds:
            values[k] = row
            c = kinds.index("ambiguous")
            cell = _split(body[k], delimiter)[c]
            ambiguous[k] = (
                f"column {_label(c, names)}: {_shown(cell)} has a comma that may be a decimal comma or a thousands "
                "separator (write it with a decimal point, or without the separator)"
            )
        else:
            values[k] = row
    if not decimal_comma:
        for k, reason in ambiguous.items():
            values[k] = np.nan
            problems[k] = (int(line_no[k]), reason)


def _parse_line(line: str, delimiter: str | None, names) -> tuple[np.ndarray | None, str | None, list[str]]:
    """(values, None, how each cell was read) or (None, reason, ...) for a row that is not all numbers."""
    cells = _split(line, delimiter)
    out = np.empty(len(cells))
    kinds = []
    for c, cell in enumerate(cells):
        try:
            out[c], kind = _number(cell)
        except ValueError:
            return None, f"column {_label(c, names)}: {_shown(cell)} is not a number", kinds
        kinds.append(kind)
    return out, None, kinds


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
    split = []
    for line, row in zip(body, line_no, strict=True):
        try:
            split.append(_split(line, delimiter) if line.strip() else [])
        except _MalformedQuote as exc:
            raise RobidInputError(f"{path}: row {row}, value {exc.column} of the line: {exc.reason}") from None
    counts = np.asarray([len(cells) for cells in split], dtype=int)
    token_line = np.repeat(line_no, counts)
    tokens = [tok for cells in split for tok in cells]
    n_tokens = len(tokens)
    values = np.full(n_tokens, np.nan)
    bad_tokens: dict[int, str] = {}
    parsed = _parse_block(tokens, None, 1) if tokens else None
    if parsed is not None:
        values[:] = parsed[:, 0]
    else:
        for idx, tok in enumerate(tokens):
            try:
                values[idx], kind = _number(tok)
            except ValueError:
                bad_tokens[idx] = f"{_shown(tok)} is not a number"
                continue
            if kind == "ambiguous":  # "1,500": a decimal comma or a thousands separator
                values[idx] = np.nan
                bad_tokens[idx] = f"{_shown(tok)} may have a decimal comma or a thousands separator"
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

    check_size(path, "table")
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
