"""The plain-CSV fast path of robid.io.tables (the file's bytes straight to the C parser) against the general
line-by-line reader and numpy's own text reader: the same numbers, row numbers, names and problems, and the
general path whenever a file is not plain."""

from __future__ import annotations

import numpy as np
import pytest

import robid.io.tables as tables
from robid.io.mapping import ReadOptions

CASES = {
    "plain": (b"t,q1,tau1\n0,1.5,-2e-3\n0.001,1.25,3\n", ReadOptions(), True),
    "no final newline": (b"t,q1,tau1\n0,1.5,-2e-3\n0.001,1.25,3", ReadOptions(), True),
    "blank lines before the header": (b"\n  \nt,q1,tau1\n0,1.5,-2e-3\n0.001,1.25,3\n", ReadOptions(), True),
    "skipped rows": (b"robot log\nt,q1,tau1\n0,1.5,-2e-3\n0.001,1.25,3\n", ReadOptions(skip_rows=1), True),
    "trailing blank line": (b"t,q1,tau1\n0,1.5,-2e-3\n0.001,1.25,3\n\n", ReadOptions(), False),
    "windows line ends": (b"t,q1,tau1\r\n0,1.5,-2e-3\r\n0.001,1.25,3\r\n", ReadOptions(), False),
    "a cell not a number": (b"t,q1,tau1\n0,1.5,-2e-3\n0.001,x,3\n", ReadOptions(), False),
    "a short row": (b"t,q1,tau1\n0,1.5\n0.001,1.25,3,4\n", ReadOptions(), False),
    "quotes": (b't,q1,tau1\n0,"1,5",-2e-3\n0.001,1.25,3\n', ReadOptions(), False),
    "semicolons": (b"t;q1;tau1\n0;1.5;-2e-3\n0.001;1.25;3\n", ReadOptions(delimiter=";"), True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_plain_csv_reads_as_the_general_path(tmp_path, monkeypatch, name):
    content, options, plain = CASES[name]
    path = tmp_path / "m.csv"
    path.write_bytes(content)
    assert (tables._plain_csv(path, content, options, "csv") is not None) == plain
    fast = tables.read_text_table(path, options, "csv")
    monkeypatch.setattr(tables, "_plain_csv", lambda *args: None)
    general = tables.read_text_table(path, options, "csv")
    assert np.array_equal(fast.values, general.values, equal_nan=True)
    assert fast.rows.tolist() == general.rows.tolist() and fast.names == general.names
    assert fast.problems == general.problems


def test_plain_csv_numbers_are_numpys(tmp_path):
    rng = np.random.default_rng(5)
    values = rng.normal(size=(2000, 6)) * 10.0 ** rng.integers(-8, 8, size=(2000, 6))
    path = tmp_path / "m.csv"
    np.savetxt(path, values, delimiter=",", header="a,b,c,d,e,f", comments="", fmt="%.17g")
    table = tables.read_text_table(path, ReadOptions(), "csv")
    assert np.array_equal(table.values, np.loadtxt(path, delimiter=",", skiprows=1))
    assert table.rows.tolist() == list(range(2, 2002))
