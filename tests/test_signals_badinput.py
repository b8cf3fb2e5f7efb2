"""Table-driven bad inputs through the command line: each gives exit 2 and one line ``robid: error: ...``
naming the file, row and column (no traceback), or -- when dropping is allowed -- a recorded drop."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robid.cli import main

ROBOT = str(Path(__file__).resolve().parent / "data" / "signals" / "robot2.yaml")
HEADER = "t,q1,q2,tau1,tau2"


def good_rows(n: int = 400) -> list[str]:
    t = np.arange(n) / 100.0
    q1 = 0.5 * np.sin(2 * np.pi * 0.5 * t)
    q2 = 0.3 * np.cos(2 * np.pi * 0.25 * t)
    tau1 = 3.0 * np.cos(q1) + 0.1 * np.sin(7 * t)
    tau2 = 1.0 * np.sin(q2) + 0.05 * np.cos(3 * t)
    return [",".join(f"{v:.10g}" for v in row) for row in np.column_stack([t, q1, q2, tau1, tau2])]


def edit(rows: list[str], index: int, column: int, value: str) -> list[str]:
    cells = rows[index].split(",")
    cells[column] = value
    rows[index] = ",".join(cells)
    return rows


def csv(rows: list[str], header: str | None = HEADER) -> str:
    return ((header + "\n") if header is not None else "") + "\n".join(rows) + "\n"


def clipped() -> list[str]:
    rows = good_rows()
    values = [float(r.split(",")[3]) for r in rows]
    top = max(values)
    for k in range(100, 120):
        rows = edit(rows, k, 3, f"{top:.10g}")
    return rows


def gap() -> list[str]:
    rows = good_rows()
    for k in range(200, 400):
        t = float(rows[k].split(",")[0]) + 5.0
        rows = edit(rows, k, 0, f"{t:.10g}")
    return rows


# (name, file content, extra arguments, expected message fragment)
CASES = [
    ("nan", csv(edit(good_rows(), 49, 3, "nan")), [], r"m.csv: row 51, column 4 (tau1): NaN"),
    ("inf", csv(edit(good_rows(), 9, 4, "inf")), [], r"m.csv: row 11, column 5 (tau2): inf"),
    ("text", csv(edit(good_rows(), 99, 1, "abc")), [], r"row 101, column 2 (q1): 'abc' is not a number"),
    ("truncated", csv(good_rows()[:300] + ["3.0,0.1"] + good_rows()[301:]), [], "row 302: truncated row: 2 of 5"),
    ("extra column", csv(edit(good_rows(), 5, 4, "1,2")), [], "row 7: 6 columns, expected 5"),
    (
        "repeated stamp",
        csv(edit(good_rows(), 20, 0, "0.19")),
        [],
        "row 22, column 1 (t): time stamp 0.19 repeats row 21",
    ),
    ("backwards", csv(edit(good_rows(), 30, 0, "0.25")), [], "row 32, column 1 (t): time stamp 0.25 runs backwards"),
    ("constant", csv([",".join(r.split(",")[:4] + ["1.5"]) for r in good_rows()]), [], "column 5 (tau2): constant"),
    ("saturated", csv(clipped()), [], "rows 102-121, column 4 (tau1): saturated at"),
    ("too few", csv(good_rows(10)), [], "only 10 usable samples"),
    ("missing column", csv(good_rows(), "t,q1,x,tau1,tau2"), [], "header has q1 but not q2"),
    ("no header", csv(good_rows(), None), [], "row 1: no column 't' in the header"),
    ("empty", "", [], "row 1: no header row"),
    ("time gap", csv(gap()), [], "rows 201-202, column 1 (t): time jumps by 5.01 s"),
    ("spike", csv(edit(good_rows(), 150, 1, "7.5")), [], "row 152, column 2 (q1): value 7.5 jumps"),
    ("binary", "\x00\x01\x02garbage", [], "binary data, not a text file"),
    ("bad harmonics", csv(good_rows()), ["--harmonics", "1-x"], "--harmonics: cannot read '1-x'"),
    ("bad period", csv(good_rows()), ["--period", "-3"], "period: must be a positive number"),
    ("long period", csv(good_rows()), ["--period", "50"], "shorter than one period"),
    ("bad channel name", csv(good_rows()), ["--allow-constant", "tau9x"], "--allow-constant: 'tau9x'"),
    ("hole", csv(good_rows()[:200] + ["x,y"] * 6 + good_rows()[206:]), ["--drop-bad-rows"], "6 consecutive bad"),
    (
        "too many drops",
        csv(
            [
                r if k % 10 else ",".join(r.split(",")[:3] + ["nan"] + r.split(",")[4:])
                for k, r in enumerate(good_rows())
            ]
        ),
        ["--drop-bad-rows"],
        "more than the 5 % that may be dropped",
    ),
]


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name, content, extra, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_exit_2_and_one_line(tmp_path, capsys, name, content, extra, expected):
    meas = tmp_path / "m.csv"
    meas.write_text(content)
    code, out, err = run_cli(["process", ROBOT, str(meas), "--out", str(tmp_path / "p.csv"), *extra], capsys)
    print(f"\n{name}: {err.strip()}")
    assert code == 2
    assert err.startswith("robid: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert expected in err, err
    assert not (tmp_path / "p.csv").exists()  # nothing written on error


OTHER = [
    ("missing file", lambda d: ["process", ROBOT, str(d / "nope.csv"), "--out", str(d / "p.csv")], "no such"),
    ("bad robot", lambda d: ["process", str(d / "r.yaml"), str(d / "m.csv"), "--out", str(d / "p.csv")], "r.yaml"),
    (
        "bad mapping",
        lambda d: ["process", ROBOT, str(d / "m.csv"), "--out", str(d / "p.csv"), "--mapping", str(d / "bad.yaml")],
        "malformed YAML",
    ),
    (
        "no out folder",
        lambda d: ["process", ROBOT, str(d / "m.csv"), "--out", str(d / "x" / "p.csv")],
        "does not exist",
    ),
    ("overwrite input", lambda d: ["process", ROBOT, str(d / "m.csv"), "--out", str(d / "m.csv")], "overwrite"),
    ("unknown option", lambda d: ["process", ROBOT, str(d / "m.csv"), "--out", "p.csv", "--bogus"], "unrecognized"),
]


@pytest.mark.parametrize("name, argv, expected", OTHER, ids=[c[0] for c in OTHER])
def test_bad_arguments_give_exit_2_and_one_line(tmp_path, capsys, name, argv, expected):
    (tmp_path / "m.csv").write_text(csv(good_rows()))
    (tmp_path / "r.yaml").write_text("robid: 1\nname: x\njoints: []\n")
    (tmp_path / "bad.yaml").write_text("robid_mapping: 1\ntime: {rate: [\n")
    before = (tmp_path / "m.csv").read_bytes()
    try:
        code, out, err = run_cli(argv(tmp_path), capsys)
    except SystemExit as exc:  # argparse usage errors exit directly
        code, err = exc.code, capsys.readouterr().err
    print(f"\n{name}: {err.strip()}")
    assert code == 2 and err.startswith("robid: error: ") and err.count("\n") == 1 and expected in err, err
    assert (tmp_path / "m.csv").read_bytes() == before


def test_isolated_bad_rows_are_dropped_and_recorded_when_allowed(tmp_path, capsys):
    rows = edit(edit(good_rows(), 49, 3, "nan"), 250, 0, "abc")
    meas = tmp_path / "m.csv"
    meas.write_text(csv(rows))
    out_csv, summary = tmp_path / "p.csv", tmp_path / "s.json"
    args = ["process", ROBOT, str(meas), "--out", str(out_csv), "--drop-bad-rows", "--summary", str(summary)]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    report = json.loads(summary.read_text())
    assert [(r["row"], r["reason"]) for r in report["dropped_rows"]] == [
        (51, "column 4 (tau1): NaN"),
        (252, "column 1 (t): 'abc' is not a number"),
    ]
    assert report["samples_read"] == 400
    assert "2 of 400 samples dropped" in out
    assert out_csv.read_text().startswith("t,q1,q2,qd1,qd2,qdd1,qdd2,tau1,tau2,keep1,keep2\n")  # default min speed
