"""The raw tables a mapping refers to: each file (or ``.mat`` variable) loaded once, and references to the
columns a mapping names in them (docs/signals.md section 2).

A measurement may be one file or a folder; a mapping's ``file:`` is relative to the folder (or to the file's
folder), its ``variable:`` walks into a MATLAB struct. Column references carry the canonical channel name
(``q1``, ``tau3``, ``t``) and the factor that converts the column to SI (unit times optional scale).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.mapping import GROUP_PREFIX, UNITS, Group, Part, ReadOptions
from robid.io.screening import ChannelRef
from robid.io.tables import RawTable, file_format, load_mat, mat_variable, read_text_table


class TableSet:
    """Loads each file (or .mat variable) of one measurement once and hands out column references into it."""

    def __init__(self, path: Path, own_table: RawTable | None = None) -> None:
        """``own_table``: the measurement's own table when it is not a text or .mat file (a ROS 2 bag read by
        :mod:`robid.io.ros_bag`): what a mapping's signals without ``file:`` refer to."""
        self.path = path
        self.tables: list[RawTable] = []
        self._index: dict[tuple, int] = {}
        self._mats: dict[Path, dict] = {}
        self._own = own_table

    def file_for(self, part_file: str | None, where: str) -> Path:
        if part_file is None:
            if self.path.is_dir():
                raise RobidInputError(f"{where}: {self.path} is a directory: give file: for this signal")
            return self.path
        base = self.path if self.path.is_dir() else self.path.parent
        target = base / part_file
        if not target.exists():
            raise RobidInputError(f"{where}: file {part_file!r}: no such file in {base}")
        return target

    def table(self, part_file: str | None, variable: str | None, options: ReadOptions, where: str) -> RawTable:
        if part_file is None and self._own is not None:
            if variable is not None:
                raise RobidInputError(f"{where}: variable: only .mat files have variables ({self.path} is a ROS 2 bag)")
            if not any(t is self._own for t in self.tables):
                self.tables.append(self._own)
            return self._own
        path = self.file_for(part_file, where)
        fmt = file_format(path, options)
        # the options as read_text_table applies them: the canonical layout's explicit csv-with-header and a
        # mapping's defaults read the same file the same way, so it is read once
        header = options.header if options.header is not None else fmt == "csv"
        key = (path, variable, replace(options, format=fmt, header=header), fmt)
        if key in self._index:
            return self.tables[self._index[key]]
        if fmt == "mat":
            if variable is None:
                raise RobidInputError(f"{where}: {path.name} is a .mat file: give variable: (e.g. rec.time_cont)")
            if path not in self._mats:
                self._mats[path] = load_mat(path)
            reference = self.tables[0].n_samples if self.tables else None
            table = mat_variable(self._mats[path], path, variable, reference)
        else:
            if variable is not None:
                raise RobidInputError(f"{where}: variable: only .mat files have variables ({path.name} is {fmt})")
            table = read_text_table(path, options, fmt)
        self._index[key] = len(self.tables)
        self.tables.append(table)
        return table

    def channels(
        self, part: Part, kind: str, prefix: str, first: int, where: str, n_joints: int
    ) -> tuple[list[ChannelRef], np.ndarray]:
        """References to the columns of ``part`` (named ``prefix{first}``, ...) and their factors to SI."""
        table = self.table(part.file, part.variable, part.read, where)
        ti = self._index_of(table)
        if part.columns is None:
            cols = list(range(table.values.shape[1]))
        else:
            cols = [table.resolve(c, where) for c in part.columns]
        units = part.units if isinstance(part.units, tuple) else (part.units,) * len(cols)
        if len(units) != len(cols):
            raise RobidInputError(f"{where}: unit: {len(units)} units for {len(cols)} columns")
        factor = np.array([UNITS[kind][u] for u in units])
        if part.scale is not None:
            if len(part.scale) != len(cols):
                raise RobidInputError(f"{where}: scale: {len(part.scale)} values for {len(cols)} columns")
            factor = factor * np.asarray(part.scale)
        if kind == "time" and len(cols) != 1:
            raise RobidInputError(f"{where}: the time is one column, got {len(cols)} (give column: N)")
        names = ["t"] if kind == "time" else [f"{prefix}{first + k}" for k in range(len(cols))]
        refs = [ChannelRef(name=nm, table=ti, column=c, kind=kind) for nm, c in zip(names, cols, strict=True)]
        return refs, factor

    def group_channels(self, group: Group, n: int, where: str) -> tuple[list[ChannelRef], np.ndarray]:
        """The columns of every part of ``group``, numbered on from part to part; exactly ``n`` in all."""
        refs: list[ChannelRef] = []
        factors: list[np.ndarray] = []
        index = 1
        for k, part in enumerate(group.parts):
            label = f"{where}: {group.name}" + (f".parts[{k}]" if len(group.parts) > 1 else "")
            r, f = self.channels(part, group.name, GROUP_PREFIX[group.name], index, label, n)
            refs.extend(r)
            factors.append(f)
            index += len(r)
        if len(refs) != n:
            raise RobidInputError(f"{where}: {group.name}: {len(refs)} columns, the robot has {n} joints")
        return refs, np.concatenate(factors)

    def values(self, ref: ChannelRef, keep: np.ndarray) -> np.ndarray:
        """The kept samples of one referenced column."""
        return self.tables[ref.table].values[keep, ref.column]

    def _index_of(self, table: RawTable) -> int:
        return next(i for i, t in enumerate(self.tables) if t is table)

    def common_length(self, where: str) -> int:
        lengths = {t.n_samples for t in self.tables}
        if len(lengths) > 1:
            detail = ", ".join(
                f"{Path(t.file).name}{'/' + t.variable if t.variable else ''}: {t.n_samples}" for t in self.tables
            )
            raise RobidInputError(f"{where}: the signals have different numbers of samples ({detail})")
        return lengths.pop()
