"""Fleet drift analysis, fleet HTML page and results table on a virtual fleet of real identification records.

Six tx200_3axis robots (terms without the torque offset, which is confounded with the spring preload), each with
every nominal standard parameter perturbed by 3 % (seeded), identified at two dates on the same trajectory with
fresh noise. Injected faults at the second date: R02 viscous friction of J3 +40 %, R04 spring compensator force
-15 % (comp_k and comp_kl0 both x 0.85; only comp_kl0 is well identified). R06 is a population outlier: its
Coulomb friction of J3 is 50 % above nominal at both dates (no change between dates)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_report_html import PERIOD, RATE, _trajectory

import robid
from robid.errors import RobidInputError
from robid.fleet.drift import BETWEEN, POPULATION, analyse_drift
from robid.fleet.report import write_fleet_report
from robid.fleet.results import FleetResult
from robid.fleet.table import results_frame, write_results_table
from robid.identification import IdentificationOptions, run_identification
from robid.signals import ProcessingOptions

TYPE = "tx200_3axis"
SERIALS = [f"R0{k}" for k in range(1, 7)]
DATES = ["2024-01-15", "2024-07-15"]


def _measurement(robot, tf, path: Path, seed: int, parameters: np.ndarray) -> None:
    """8 periods of the trajectory, torques of the given standard parameters plus 1 % noise (seeded)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 8 * PERIOD, 1.0 / RATE)
    q, qd, qdd = tf.trajectory.evaluate(t)
    tau = robot.inverse_dynamics(q, qd, qdd, parameters)
    tau = tau + rng.normal(size=tau.shape) * 0.01 * np.std(tau, axis=0)
    q = q + rng.normal(size=q.shape) * 1e-5
    header = ["t"] + [f"q{j + 1}" for j in range(robot.dof)] + [f"tau{j + 1}" for j in range(robot.dof)]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(header), comments="")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    terms = tuple(t for t in robid.load_robot(TYPE).terms if t != "offset")
    robot = robid.load_robot(TYPE, terms=terms)
    names = list(robot.parameter_names)
    tf = _trajectory(robot, 3)
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.05))
    rng = np.random.default_rng(2024)
    results = []
    for k, serial in enumerate(SERIALS):
        own = robot.parameters * (1.0 + 0.03 * rng.standard_normal(len(names)))
        if serial == "R06":
            own[names.index("fc_J3")] *= 1.5
        for d, date in enumerate(DATES):
            p = own.copy()
            if d == 1 and serial == "R02":
                p[names.index("fv_J3")] *= 1.4
            if d == 1 and serial == "R04":
                p[names.index("comp_k_J2")] *= 0.85
                p[names.index("comp_kl0_J2")] *= 0.85
            path = folder / f"{serial}_{date}.csv"
            _measurement(robot, tf, path, 100 * k + d, p)
            record = run_identification(robot, [path], options).record
            results.append(FleetResult(TYPE, serial, date, f"c{d}", record, installation=f"hall {k % 2}"))
    results.append(FleetResult(TYPE, "R07", DATES[1], "c1", None, installation="hall 1",
                               error="identify: <no file> measurement missing & co"))
    return folder, results


def test_exactly_the_injected_faults_are_flagged_between_identifications(fleet):
    _, results = fleet
    drift = analyse_drift(results)
    between = [f for f in drift.flags if f.kind == BETWEEN]
    assert {(f.serial, f.parameter) for f in between} == {("R02", "fv_J3"), ("R04", "comp_kl0_J2")}
    by = {f.serial: f for f in between}
    assert by["R02"].change_percent == pytest.approx(40.0, abs=4.0) and by["R02"].score > 5
    assert by["R04"].change_percent == pytest.approx(-15.0, abs=4.0) and by["R04"].score < -5
    assert all(f.maintenance_relevant and f.date_from == DATES[0] and f.date_to == DATES[1] for f in between)
    assert "viscous friction of J3 up" in by["R02"].meaning and "down" in by["R04"].meaning
    assert by["R02"].uncertainty == pytest.approx(
        np.hypot(*(r.record.parameter("fv_J3").std for r in results if r.serial == "R02")))
    assert "R02" in by["R02"].summary and "fv_J3" in by["R02"].summary
    # the healthy robots stay well below the threshold (printed for the record)
    scores = _healthy_between_scores(results)
    print(f"\nflag scores: R02 fv_J3 {by['R02'].score:+.1f}, R04 comp_kl0_J2 {by['R04'].score:+.1f}; "
          f"largest |score| of healthy robots {max(scores):.2f}")
    assert max(scores) < drift.z_between
    assert any("R07" in n and "measurement missing" in n for n in drift.notes)


def _healthy_between_scores(results):
    scores = []
    for serial in SERIALS:
        a, b = (r.record for r in results if r.serial == serial)
        for pa, pb in zip(a.base_parameters, b.base_parameters, strict=True):
            if pa.identifiability == pb.identifiability == "well-identified":
                if (serial, pa.name) in {("R02", "fv_J3"), ("R04", "comp_kl0_J2"), ("R04", "comp_k_J2")}:
                    continue
                scores.append(abs(pb.value - pa.value) / np.hypot(pa.std, pb.std))
    return scores


def test_population_outlier_and_faulty_robots_only(fleet):
    _, results = fleet
    drift = analyse_drift(results)
    population = [f for f in drift.flags if f.kind == POPULATION]
    flagged = {(f.serial, f.parameter, f.date_to) for f in population}
    assert {("R06", "fc_J3", DATES[0]), ("R06", "fc_J3", DATES[1])} <= flagged
    # beyond the outlier only the +40 % friction fault stands out of the population (the -15 % compensator is
    # within 4 x the 5 % floor); no healthy robot
    assert flagged - {("R06", "fc_J3", DATES[0]), ("R06", "fc_J3", DATES[1])} <= {("R02", "fv_J3", DATES[1])}
    r06 = next(f for f in population if f.serial == "R06")
    assert r06.change_percent == pytest.approx(50.0, abs=8.0) and r06.score > drift.z_population
    # fewer robots than the minimum: no population check, and a note says so
    few = analyse_drift([r for r in results if r.serial in ("R01", "R02", "R06")])
    assert not [f for f in few.flags if f.kind == POPULATION]
    assert any("fewer than 5" in n for n in few.notes)
    # all parameters: other (inertial) parameters may be flagged too, but marked not maintenance relevant
    every = analyse_drift(results, maintenance_only=False)
    assert set(drift.flags) <= set(every.flags)
    assert all(not f.maintenance_relevant for f in set(every.flags) - set(drift.flags))


def test_parameter_table_puts_maintenance_parameters_first(fleet):
    _, results = fleet
    table = analyse_drift(results).table(TYPE)
    n = sum(table.maintenance)
    assert all(table.maintenance[:n]) and not any(table.maintenance[n:])
    assert {"fv_J3", "fc_J1", "comp_kl0_J2"} <= set(table.parameters[:n]) and "Izz_J2" in table.parameters[n:]
    assert len(table.columns) == 12 and ("R07", DATES[1]) not in table.columns


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.stack: list[str] = []
        self.text: list[str] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in ("br", "meta", "img"):
            self.stack.append(tag)
        self.sources += [v for k, v in attrs if k in ("src", "href") and v]

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def test_report_is_self_contained_html_with_every_robot_and_the_flags(fleet):
    folder, results = fleet
    drift = analyse_drift(results)
    out = write_fleet_report(folder / "fleet.html", results, drift, title="Fleet <A&B>")
    text = out.read_text()
    page = _Page()
    page.feed(text)
    page.close()
    assert not page.stack and "script" not in page.tags
    assert all(s.startswith("data:image/png;base64,") for s in page.sources) and page.sources
    body = "".join(page.text)
    assert "Fleet <A&B>" in body and "<A&B>" not in text  # escaped
    for serial in [*SERIALS, "R07"]:
        assert serial in body
    assert "<no file> measurement missing & co" in body
    flags_part = body[body.index("Drift flags"):body.index(f"{TYPE}: base parameters")]
    assert "fv_J3" in flags_part and "comp_kl0_J2" in flags_part and "viscous friction of J3 up" in flags_part


def test_results_table_rows_and_csv_round_trip(fleet, tmp_path):
    _, results = fleet
    frame = results_frame(results)
    nb = len(results[0].record.base_parameters)
    assert len(frame) == 12 * nb + 1
    assert list(frame.columns[:9]) == ["robot_type", "serial", "installation", "date", "campaign", "parameter",
                                       "value", "std", "class"]
    row = frame[(frame.serial == "R02") & (frame.date == DATES[1]) & (frame.parameter == "fv_J3")].iloc[0]
    record = results[3].record
    assert row.value == record.parameter("fv_J3").value and row["class"] == record.parameter("fv_J3").identifiability
    failed = frame[frame.serial == "R07"]
    assert len(failed) == 1 and np.isnan(failed.value.iloc[0]) and "measurement missing" in failed.error.iloc[0]
    path = write_results_table(tmp_path / "fleet.csv", results)
    back = pd.read_csv(path)
    assert len(back) == len(frame)
    np.testing.assert_array_equal(back.value.to_numpy(), frame.value.to_numpy())
    np.testing.assert_array_equal(back.serial.to_numpy(), frame.serial.to_numpy())
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        try:
            import fastparquet  # noqa: F401
        except ImportError:
            with pytest.raises(RobidInputError, match="pyarrow or fastparquet"):
                write_results_table(tmp_path / "fleet.parquet", results)
            return
    assert len(pd.read_parquet(write_results_table(tmp_path / "fleet.parquet", results))) == len(frame)
