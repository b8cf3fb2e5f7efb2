"""Quoted fields in delimited measurement files (RFC 4180): the delimiter inside quotes, doubled quotes, decimal
commas, and malformed quoting reported with file, row and column.

The expected numbers are the ones written to the files here, never the reader's own output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.io.mapping import ReadOptions
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.io.tables import read_text_table
from robid.model.loader import read_robot

ROBOT = Path(__file__).resolve().parent / "data" / "signals" / "robot2.yaml"  # 2 joints


@pytest.fixture(scope="module")
def robot():
    return read_robot(ROBOT)


def _signals(n: int = 200):
    t = np.arange(n) / 100.0
    q = np.column_stack([0.5 * np.sin(np.pi * t), 0.3 * np.cos(1.4 * np.pi * t) + 0.1])
    tau = np.column_stack([3.0 * np.cos(q[:, 0]) + 0.2 * np.sin(5 * t), 1.5 * np.sin(q[:, 1]) + 0.1 * t])
    return t, q, tau


def _comma(v: float) -> str:
    return f"{v:.12g}".replace(".", ",")


def _lines(cell, sep: str = ",") -> list[str]:
    t, q, tau = _signals()
    return [sep.join(cell(v) for v in row) for row in np.column_stack([t, q, tau])]


def test_quoted_decimal_commas_in_a_comma_separated_file(tmp_path, robot):
    t, q, tau = _signals()
    path = tmp_path / "m.csv"
    path.write_text("\n".join(['t,q1,q2,tau1,tau2'] + _lines(lambda v: f'"{_comma(v)}"')) + "\n")
    m = read_measurement(path, robot)
    assert m.n_samples == t.size
    assert np.allclose(m.q, q, atol=1e-11) and np.allclose(m.tau, tau, atol=1e-11)


def test_decimal_commas_in_a_semicolon_file_and_quoted_header_names(tmp_path):
    t, q, tau = _signals()
    path = tmp_path / "m.csv"
    header = 't;"position; joint 1";"say ""q2""";tau1;tau2'
    path.write_text("\n".join([header] + _lines(_comma, ";")) + "\n")
    table = read_text_table(path, ReadOptions(delimiter=";"), "csv")
    assert table.names == ["t", "position; joint 1", 'say "q2"', "tau1", "tau2"]
    assert not table.problems
    assert np.allclose(table.values, np.column_stack([t, q, tau]), atol=1e-11)


def test_quoted_numbers_with_a_decimal_point_and_blanks_around_quotes(tmp_path, robot):
    t, q, tau = _signals()
    path = tmp_path / "m.csv"
    path.write_text("\n".join(['"t", "q1", "q2", "tau1", "tau2"'] + _lines(lambda v: f' "{v:.12g}" ')) + "\n")
    m = read_measurement(path, robot)
    assert np.allclose(m.q, q, atol=1e-11) and np.allclose(m.tau, tau, atol=1e-11)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ('"0,25', "unterminated quote"),
        ('"0,25"x', "text after the closing quote"),
        ('0"25', "inside an unquoted field"),
    ],
)
def test_malformed_quotes_name_the_file_row_and_column(tmp_path, robot, bad, reason):
    lines = ["t,q1,q2,tau1,tau2"] + _lines(lambda v: f'"{_comma(v)}"')
    cells = _lines(lambda v: f"{v:.12g}")[5].split(",")  # row 7 of the file; its third column is q2
    cells[2] = bad
    lines[6] = ",".join(cells)
    path = tmp_path / "m.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RobidInputError, match=rf"m\.csv: row 7, column 3 \(q2\): .*{reason}"):
        read_measurement(path, robot)
    m = read_measurement(path, robot, policy=ScreeningPolicy(drop_bad_rows=True))
    assert m.dropped.row_numbers == (7,) and reason in m.dropped.rows[0].reason


def test_malformed_header_quote_is_an_error_naming_the_header(tmp_path, robot):
    path = tmp_path / "m.csv"
    path.write_text("\n".join(['t,q1,"q2,tau1,tau2'] + _lines(lambda v: f"{v:.12g}")) + "\n")
    with pytest.raises(RobidInputError, match=r"m\.csv: row 1 \(header\), column 3: unterminated quote"):
        read_measurement(path, robot)


def test_comma_that_may_be_a_thousands_separator(tmp_path):
    """"1,500" alone is refused (decimal comma or thousands separator?); next to an unambiguous decimal comma
    in the same file it is a decimal comma."""
    rows = ["t,x", '0,"1,500"', '1,"2,000"', '2,"3,250"']
    path = tmp_path / "a.csv"
    path.write_text("\n".join(rows) + "\n")
    table = read_text_table(path, ReadOptions(), "csv")
    assert sorted(table.problems) == [0, 1, 2]
    assert "thousands separator" in table.problems[0][1] and table.problems[0][0] == 2
    assert np.all(np.isnan(table.values[:, 1]))
    path.write_text("\n".join(rows + ['3,"0,5"']) + "\n")
    table = read_text_table(path, ReadOptions(), "csv")
    assert not table.problems
    assert table.values[:, 1] == pytest.approx([1.5, 2.0, 3.25, 0.5])
