"""The typed record and its JSON form: the codec on small records (types, missing and extra keys, derived keys,
non-finite numbers), and on a real identification: the record read back equals the record written, and a
validation file given after identification is recorded exactly as identification recorded it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.identification import IdentificationOptions, held_out_run, run_identification
from robid.record import IdentificationRecord
from robid.record.codec import from_plain, to_plain
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
        ({"inner": {"label": "x", "values": ["1"]}}, "f.json: inner.values[0]: expected a number, got '1'"),
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
    # interfaces.md section 5, and the validation metrics derived from the validation runs
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
