"""The one-pass reading of clean delimited files (robid.io.tables._clean_table) against the row-by-row reader.

Reference: the row-by-row path of the same module (counts every row's cells, parses it alone), which screening
relies on for its problems; the one-pass read must give the same numbers, and must not take a file whose rows do
not all have the header's number of cells, even when their delimiters add up.
"""

from __future__ import annotations

import numpy as np

from robid.io import tables
from robid.io.mapping import ReadOptions


def write(path, rows):
    path.write_text("t,q1,tau1\n" + "\n".join(rows) + "\n")
    return path


def read(path):
    return tables.read_text_table(path, ReadOptions(), "csv")


def test_a_clean_file_is_read_in_one_pass_with_the_numbers_of_the_row_by_row_reader(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    rows = [",".join(f"{v:.12g}" for v in rng.normal(size=3)) for _ in range(500)] + ["1,-2.5e-3,7"]
    path = write(tmp_path / "clean.csv", rows)
    assert tables._clean_table(rows, ",", ["t", "q1", "tau1"]) is not None  # the one-pass read takes this file
    one_pass = read(path)
    monkeypatch.setattr(tables, "_clean_table", lambda body, delimiter, names: None)
    row_by_row = read(path)
    assert np.array_equal(one_pass.values, row_by_row.values)
    assert np.array_equal(one_pass.rows, row_by_row.rows) and one_pass.problems == row_by_row.problems == {}


def test_rows_whose_cells_only_add_up_are_screened_one_by_one(tmp_path):
    rows = ["0,1,2", "1,1,2,3", "2,1", "3,1,2", "", "4,1,2"]  # one long and one short row: the same delimiters
    table = read(write(tmp_path / "bad.csv", rows))
    assert table.problems[1] == (3, "4 columns, expected 3")
    assert table.problems[2] == (4, "truncated row: 2 of 3 columns")
    assert table.problems[4] == (6, "empty row")
    assert np.array_equal(table.values[[0, 3, 5], 0], [0.0, 3.0, 4.0])
    table = read(write(tmp_path / "short.csv", ["0,1,2", "1,1", "2,1,2,"]))  # a short row, a trailing comma
    assert set(table.problems) == {1, 2}
