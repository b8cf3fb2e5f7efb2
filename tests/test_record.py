"""The typed record and its JSON form: the codec on small records (types, missing and extra keys, derived keys,
non-finite numbers), and on a real identification: the record read back equals the record written, and a
validation file given after identification is recorded exactly as identification recorded it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robid
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, held_out_run, run_identification
from robid.record import IdentificationRecord
from robid.record.codec import from_plain, to_plain
from robid.record.identification import SCHEMA_VERSION
from robid.signals import ProcessingOptions


@dataclass(frozen=True)
class Inner:
    label: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class Outer:
    name: str
    kind: str = field(metadata={"json": "class"})
    count: int
    pair: tuple[float, float]
    inner: Inner | None
    table: dict[str, tuple[int, ...]] = field(default_factory=dict)
    optional: float | None = field(default=None, metadata={"omit_none": True})
    extra: tuple[tuple[str, float | None], ...] = field(default=(), metadata={"extra": True})

    _DERIVED_KEYS = ("twice",)

    def _derived_plain(self) -> dict:
        return {"twice": 2 * self.count}


def test_codec_round_trip_keys_and_derived_values():
    obj = Outer("a", "b", 3, (0.1, 2.0), Inner("x", (1.5, None)), {"k": (1, 2)}, None, (("truth", 4.0),))
    plain = to_plain(obj)
    assert plain == {
        "name": "a", "class": "b", "count": 3, "pair": [0.1, 2.0], "inner": {"label": "x", "values": [1.5, None]},
        "table": {"k": [1, 2]}, "truth": 4.0, "twice": 6,
    }
    text = json.dumps(plain)
    assert from_plain(Outer, json.loads(text), "f.json") == obj
    # a key of a later minor version that is not a number is ignored; a number becomes an extra column
    assert from_plain(Outer, {**plain, "new": {"x": 1}}, "f.json") == obj
    assert from_plain(Outer, {**plain, "prior": None}, "f.json").extra == (("truth", 4.0), ("prior", None))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"count": 2.5}, "f.json: count: expected an integer, got 2.5"),
        ({"count": True}, "f.json: count: expected an integer, got True"),
        ({"pair": [1.0]}, "f.json: pair: expected a list of 2, got [1.0]"),
        ({"inner": {"label": "x", "values": ["1"]}}, "f.json: inner.values[0]: expected a finite number, got '1'"),
        ({"table": {"k": [1, "two"]}}, "f.json: table.k[1]: expected an integer, got 'two'"),
    ],
)
def test_codec_errors_name_the_file_and_key_path(change, message):
    plain = {"name": "a", "class": "b", "count": 3, "pair": [0.1, 2.0], "inner": None}
    with pytest.raises(RobidInputError) as err:
        from_plain(Outer, {**plain, **change}, "f.json")
    assert str(err.value) == message


def test_codec_missing_key_and_non_finite_numbers():
    with pytest.raises(RobidInputError, match="f.json: key 'class' missing"):
        from_plain(Outer, {"name": "a", "count": 3, "pair": [0.1, 2.0], "inner": None}, "f.json")
    with pytest.raises(ValueError, match=r"inner.values\[0\]: nan is not a JSON number"):
        to_plain(Outer("a", "b", 3, (0.1, 2.0), Inner("x", (float("nan"),))))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5),
                          st.booleans()), max_size=12))
def test_series_are_written_and_read_whole_or_entry_by_entry_alike(values):
    """The codec reads and writes a series of floats whole (robid.record.codec._finite_numbers); any entry that is
    not a finite float or None sends the series entry by entry: the same plain data, the same refusal naming the
    entry, as converting each entry alone."""

    def one(v):
        try:
            return ("ok", to_plain(Inner("x", (v,)))["values"][0])
        except (ValueError, TypeError) as e:
            return ("error", str(e).replace("values[0]", "values[{k}]"))

    expected = [one(v) for v in values]
    first_error = next((k for k, (kind, _) in enumerate(expected) if kind == "error"), None)
    if first_error is None:
        plain = to_plain(Inner("x", tuple(values)))
        assert plain["values"] == [v for _, v in expected]
        assert [type(v) for v in plain["values"]] == [type(v) for _, v in expected]
    else:
        with pytest.raises((ValueError, TypeError)) as info:
            to_plain(Inner("x", tuple(values)))
        assert str(info.value) == expected[first_error][1].format(k=first_error)
    # reading: floats and None back as they were; anything else named at its index (or converted, an int)
    data = {"label": "x", "values": list(values)}
    try:
        read = from_plain(Inner, data, "f.json").values
    except RobidInputError as e:
        bad = next(k for k, v in enumerate(values)
                   if v is not None and (isinstance(v, bool) or not np.isfinite(float(v))))
        assert str(e).startswith(f"f.json: values[{bad}]: expected a finite number")
    else:
        assert read == tuple(None if v is None else float(v) for v in values)


@pytest.fixture(scope="module")
def identification(tmp_path_factory):
    """A 3-axis identification with one validation run (periodic, from tests/test_report_html.py's recipe)."""
    from test_report_html import _measurement, _trajectory

    folder = tmp_path_factory.mktemp("record")
    robot = robid.load_robot("tx200_3axis")
    _measurement(robot, _trajectory(robot, 1), folder / "id.csv", 11)
    _measurement(robot, _trajectory(robot, 2), folder / "val.csv", 12)
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.05))
    ident = run_identification(robot, [folder / "id.csv"], options, validation_files=[folder / "val.csv"])
    return robot, ident, folder


def test_record_round_trip_and_what_it_holds(identification):
    robot, ident, _ = identification
    record = ident.record
    assert IdentificationRecord.from_json(record.to_json()) == record
    data = json.loads(record.to_json())
    # docs/interfaces.md section 5, and the validation metrics derived from the validation runs
    assert list(data)[:3] == ["robid", "schema", "robot"]
    assert data["base_parameters"][0].keys() >= {"name", "expression", "value", "std", "relative_std_percent", "class"}
    assert data["validation"][0]["per_joint"] == data["validation_data"][0]["fit"]["per_joint"]
    # values, covariance and the estimator's numbers are those of the working estimate, unrounded
    np.testing.assert_array_equal(record.values, ident.values)
    np.testing.assert_array_equal(record.covariance_matrix, ident.estimate.covariance)
    np.testing.assert_array_equal(record.sigma, ident.estimate.sigma)
    # the fit of a run is computed on every used sample: NRMSE as estimation.metrics gives it on the data set
    d = ident.datasets[0]
    used = np.asarray(d.processed.keep, dtype=bool)
    err = np.where(used, d.tau - d.W @ ident.values, 0.0)
    nrmse = 100 * np.sqrt((err**2).sum(0)) / np.sqrt((np.where(used, d.tau, 0.0) ** 2).sum(0))
    np.testing.assert_allclose(record.data[0].fit.nrmse_percent(), nrmse, rtol=1e-12)
    assert record.data[0].unused_rows_per_joint == tuple(int(x) for x in (~used).sum(0))
    # series for figures: at most DISPLAY_POINTS samples, the used mask of the processed data
    display = record.data[0].display
    assert len(display.t) <= 2000 and len(display.used) == robot.dof
    np.testing.assert_array_equal(np.asarray(display.used).T, used[:: display.step])


def test_held_out_file_is_recorded_as_identification_recorded_it(identification):
    robot, ident, folder = identification
    record = ident.record
    again = held_out_run(robot, record, folder / "val.csv")
    assert again == record.validation_data[0]


def test_result_json_is_compact_and_refuses_what_json_has_not(identification, tmp_path):
    _, ident, _ = identification
    text = ident.record.to_json()
    # every series of a run is one line (per joint), not one line per number
    assert text.count("\n") < 3000, text.count("\n")
    from robid.io.result_file import read_result

    for bad, message in (("NaN", "NaN is not JSON"), ("Infinity", "Infinity is not JSON"), ("1e999", "1e999")):
        broken = text.replace('"relative_error_norm_percent": ', f'"relative_error_norm_percent": {bad}, "x": ', 1)
        (tmp_path / "r.json").write_text(broken)
        with pytest.raises(RobidInputError, match=message):
            read_result(tmp_path / "r.json")


def _edited(record, change) -> dict:
    data = json.loads(record.to_json())
    change(data)
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["covariance"].pop(), "covariance: 26 entries for 27 base parameters"),
        (lambda d: d["metrics"]["per_joint"].pop(), "metrics.per_joint: 2 entries for 3 joints"),
        (lambda d: d["data"][0]["display"]["tau_measured"][1].pop(), r"data\[0\].display.tau_measured\[1\]: "),
        (lambda d: d["data"][0]["display"]["used"].pop(), r"data\[0\].display.used: 2 entries for 3 joints"),
        (lambda d: d["estimation"]["sigma_per_joint"].pop(), "estimation.sigma_per_joint: 2 entries for 3 rows"),
        (lambda d: d["base_parameters"][0].update({"class": "great"}), r"base_parameters\[0\].class: 'great'"),
        (lambda d: d["validation_data"][0].update({"role": "bogus"}), r"validation_data\[0\].role: 'bogus'"),
        (lambda d: d.update({"joints": ["A", "B"]}), r"estimation.sigma_per_joint: 3 entries for 2 rows"),
        (lambda d: d.update({"robid": True}), "not a robid RESULT.json"),
        (lambda d: d.update({"schema": "01.0"}), "schema '01.0': expected a version MAJOR.MINOR"),
    ],
)
def test_a_record_whose_parts_disagree_is_refused(identification, change, message):
    _, ident, _ = identification
    with pytest.raises(RobidInputError, match=message):
        IdentificationRecord.from_dict(_edited(ident.record, change), "r.json")


def test_reference_columns_are_declared_and_cannot_shadow_a_field(identification):
    _, ident, _ = identification
    record = ident.record.with_references("truth", ident.record.values * 1.01)
    again = IdentificationRecord.from_json(record.to_json())
    assert again == record and set(again.references()) == {"truth"}
    # a number a later minor version adds to the entries is not mistaken for a reference column
    data = _edited(record, lambda d: [p.update({"prior_weight": 0.5}) for p in d["base_parameters"]])
    assert set(IdentificationRecord.from_dict(data).references()) == {"truth"}
    for label in ("value", "class", "std", ""):
        with pytest.raises(RobidInputError, match="reference label"):
            record.with_references(label, record.values)
    # a file of a later minor version read back is a record of this version (its unknown keys are not kept)
    later = IdentificationRecord.from_dict(_edited(record, lambda d: d.update({"schema": "1.4"})))
    assert later.schema == SCHEMA_VERSION and later == record


def test_display_time_counts_from_the_first_processed_sample(identification, tmp_path):
    """Absolute time stamps (controller logs count from 1970) must survive 6 significant digits."""
    robot, _, folder = identification
    data = np.loadtxt(folder / "id.csv", delimiter=",", skiprows=1)
    data[:, 0] += 1.7e9
    np.savetxt(tmp_path / "abs.csv", data, delimiter=",", header=(folder / "id.csv").read_text().splitlines()[0],
               comments="", fmt="%.15g")
    record = run_identification(robot, [tmp_path / "abs.csv"]).record
    d = record.data[0].display
    assert d.t0 >= 1.7e9 and d.t[0] == 0.0 and len(set(d.t)) == len(d.t)


def test_a_locked_axis_gives_a_record_not_a_traceback(tmp_path):
    """An axis held still (brake, or excluded from the excitation) leaves parameters the data never excite: their
    std is not available (None), the band of the predictions they enter is not either, and the record is written
    and read back."""
    from test_report_html import _trajectory

    from robid.io.result_file import read_result, write_result
    from robid.io.screening import ScreeningPolicy

    robot = robid.load_robot("tx200_3axis")
    tf = _trajectory(robot, 3)
    t = np.arange(0.0, 15.0, 1.0 / 200.0)
    q, qd, qdd = tf.trajectory.evaluate(t)
    q[:, 2], qd[:, 2], qdd[:, 2] = 0.3, 0.0, 0.0
    tau = robot.inverse_dynamics(q, qd, qdd) + np.random.default_rng(1).normal(size=q.shape)
    header = "t,q1,q2,q3,tau1,tau2,tau3"
    np.savetxt(tmp_path / "m.csv", np.column_stack([t, q, tau]), delimiter=",", header=header, comments="")
    options = IdentificationOptions(processing=ProcessingOptions(period=5.0), policy=ScreeningPolicy(
        allow_constant=("q3",)))
    record = run_identification(robot, [tmp_path / "m.csv"], options).record
    # the rotor and viscous friction of the locked axis are never excited: value 0, no std, said so
    for name in ("Ia_J3", "fv_J3"):
        assert record.parameter(name).value == 0.0 and record.parameter(name).std is None
    assert any("never excited" in n for n in record.estimation.notes)
    # every other parameter keeps a sane estimate (before: rounding-level columns gave fv_J3 ~ 4e15)
    assert all(abs(p.value) < 1e5 for p in record.base_parameters)  # the spring stiffness is 2.8e4 N/m
    write_result(tmp_path / "R.json", record)
    assert read_result(tmp_path / "R.json") == record
    from robid.report import build_report, report_data

    assert "Predicted versus measured torque" in build_report(report_data(record, robot))


def test_held_out_file_found_however_its_path_is_spelled(identification, monkeypatch):
    robot, ident, folder = identification
    record = dataclasses.replace(
        ident.record,
        processing=dataclasses.replace(
            ident.record.processing, per_file={str(folder / "val.csv"): {"min_speed": 0.3, "period": 5.0}}
        ),
    )
    monkeypatch.chdir(folder)
    runs = [held_out_run(robot, record, p) for p in (folder / "val.csv", "val.csv", "./val.csv")]
    assert runs[0].period_s == 5.0 and runs[0].unused_rows_per_joint == runs[1].unused_rows_per_joint
    assert all(r.fit == runs[0].fit for r in runs)
    assert "options identification used for" in runs[1].notes[-1] and "same file" in runs[1].notes[-1]
    # a file identification did not know: the common options without the timing found or given for its files
    folder.joinpath("other.csv").write_text(folder.joinpath("val.csv").read_text())
    other = held_out_run(robot, record, "other.csv")
    assert "not a file of the identification" in other.notes[-1] and other.period_source != "user"
