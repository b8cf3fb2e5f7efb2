"""The HTML report: one self-contained file with every section, the whole parameter table, reference flags,
the RESULT.json path of the CLI, bad input, and rendering in headless Chromium (skipped without it, except under
CI=true, where a missing browser fails).

The data are synthetic and fast: a 3-axis robot with friction and a spring compensator (tx200_3axis), a
hand-made Fourier trajectory, torques from the nominal inverse dynamics plus seeded noise."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.cli import main
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile, save_trajectory
from robid.identification import run_identification
from robid.io.result_file import read_result, write_result
from robid.record.identification import SCHEMA_VERSION
from robid.report import build_report, report_data, write_report
from robid.report.sections import default_sections
from robid.simulation.truth import true_parameters

ROBOT = "tx200_3axis"
PERIOD = 5.0
RATE = 200.0


def _trajectory(robot, seed: int) -> TrajectoryFile:
    """Random rest-to-rest Fourier motion scaled to 80 % of the robot file's limits."""
    rng = np.random.default_rng(seed)
    lim = [j.limits for j in robot.model.joints]
    center = np.array([0.5 * (li.position[0] + li.position[1]) for li in lim])
    dof, harmonics = robot.dof, 5
    traj = FourierTrajectory(
        PERIOD,
        center,
        rng.normal(size=(dof, harmonics)),
        rng.normal(size=(dof, harmonics)),
        4,
        tuple(robot.joint_names),
    ).project_rest()
    q, qd, qdd = traj.evaluate(np.linspace(0.0, PERIOD, 1000, endpoint=False))
    scale = min(
        min(
            0.4 * (li.position[1] - li.position[0]) / np.max(np.abs(q[:, j] - center[j])),
            0.8 * li.velocity / np.max(np.abs(qd[:, j])),
            0.8 * li.acceleration / np.max(np.abs(qdd[:, j])),
        )
        for j, li in enumerate(lim)
    )
    traj = FourierTrajectory(PERIOD, center, traj.a * scale, traj.b * scale, 4, traj.joint_names)
    limits = JointLimitSet.create(
        dof,
        position=[li.position for li in lim],
        velocity=[li.velocity for li in lim],
        acceleration=[li.acceleration for li in lim],
    )
    design = {"criterion": "cond", "criteria": {"cond": 12.5, "cond_raw": 340.0, "rank": 27, "columns": 27}}
    return TrajectoryFile(traj, limits, 0.05, (), design)


def _measurement(robot, tf: TrajectoryFile, path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 3 * PERIOD, 1.0 / RATE)
    q, qd, qdd = tf.trajectory.evaluate(t)
    tau = robot.inverse_dynamics(q, qd, qdd)
    tau = tau + rng.normal(size=tau.shape) * 0.01 * np.std(tau, axis=0)
    q = q + rng.normal(size=q.shape) * 1e-5
    header = ["t"] + [f"q{j + 1}" for j in range(robot.dof)] + [f"tau{j + 1}" for j in range(robot.dof)]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(header), comments="")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    robot = robid.load_robot(ROBOT)
    traj_id, traj_val = _trajectory(robot, 1), _trajectory(robot, 2)
    save_trajectory(folder / "traj.json", traj_id)
    _measurement(robot, traj_id, folder / "id.csv", 11)
    _measurement(robot, traj_val, folder / "val.csv", 12)
    result = run_identification(robot, [folder / "id.csv"], validation_files=[folder / "val.csv"])
    write_result(folder / "result.json", result.record)
    truth = {"kind": "simulation-truth", "parameters": true_parameters(robot.model)}  # as robid simulate --truth
    (folder / "truth.json").write_text(json.dumps(truth))
    return {"folder": folder, "robot": robot, "result": result, "record": result.record}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.h2: list[str] = []
        self.style = ""
        self.param_names: list[str] = []
        self._stack: list[str] = []
        self._in_params = False
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table" and "params" in (a.get("class") or ""):
            self._in_params = True
        self._stack.append(tag)
        self._text = ""

    def handle_endtag(self, tag):
        if tag == "h2":
            self.h2.append(self._text.strip())
        if tag == "code" and self._in_params:
            self.param_names.append(self._text.strip())
        if tag == "table":
            self._in_params = False
        if self._stack and self._stack[-1] == tag:
            self._stack.pop()

    def handle_data(self, data):
        self._text += data
        if self._stack and self._stack[-1] == "style":
            self.style += data


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def _assert_self_contained(text: str) -> _Page:
    page = _parse(text)
    tags = {t for t, _ in page.tags}
    assert not tags & {"script", "link", "iframe", "object", "embed", "base"}
    for tag, attrs in page.tags:
        for key in ("src", "href", "srcset", "poster", "data"):
            value = (attrs.get(key) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//", "file:", "ftp:")), (tag, key, value[:80])
        if tag == "img":
            assert attrs["src"].startswith("data:image/png;base64,")
            png = base64.b64decode(attrs["src"].split(",", 1)[1])
            assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
        if tag == "a" and attrs.get("href"):
            assert attrs["href"].startswith("#")
    assert "url(" not in page.style and "@import" not in page.style
    assert "http://" not in text and "https://" not in text
    return page


def test_report_is_one_self_contained_file_with_every_section(case):
    out = case["folder"] / "report.html"
    write_report(out, case["record"], case["robot"], trajectory=case["folder"] / "traj.json", title="test report")
    text = out.read_text()
    page = _assert_self_contained(text)
    assert page.h2 == rigid_sections()
    base = case["robot"].base_parameters()
    assert page.param_names == list(base.names)
    assert sum(1 for t, _ in page.tags if t == "img") >= 8
    # friction for every joint, the spring compensator of J2, the excitation spectrum and limit table
    assert 'alt="friction curves, joints J1, J2, J3"' in text
    assert 'alt="compensator torque, joint J2"' in text
    assert 'alt="excitation spectrum"' in text and "Limit usage per joint" in text
    assert "validation: val.csv" in text


def test_reference_values_further_than_three_std_are_flagged(case):
    result = case["result"]
    std = np.sqrt(np.diag(result.estimate.covariance))
    reference = result.values.copy()
    reference[4] += 10.0 * std[4]
    text = build_report(report_data(case["record"], case["robot"], reference={"truth": reference}))
    page = _parse(text)
    flagged = [a for t, a in page.tags if t == "tr" and a.get("class") == "flag"]
    assert len(flagged) == 1
    assert "1 parameter(s) further than 3 std from" in text


def _without_subtitle(text: str) -> str:
    """The page without the header's subtitle line (it names where the result came from)."""
    head, rest = text.split('<header class="page">', 1)
    _, tail = rest.split("</header>", 1)
    return head + tail


def test_cli_report_from_result_json_is_the_in_process_report(case, monkeypatch, capsys):
    """The report renders the record; whether it comes from memory or from RESULT.json, the page is the same
    (figures included, byte for byte) and no measurement is read again."""
    folder = case["folder"]
    monkeypatch.chdir(folder)
    rc = main(["report", "result.json", "--trajectory", "traj.json", "--truth", "truth.json", "--out", "cli.html"])
    assert rc == 0
    assert "wrote cli.html" in capsys.readouterr().out
    text = (folder / "cli.html").read_text()
    page = _assert_self_contained(text)
    assert page.h2 == rigid_sections()
    assert page.param_names == list(case["robot"].base_parameters().names)
    assert "<th>truth</th>" in text
    in_process = build_report(
        report_data(case["record"], case["robot"], trajectory="traj.json", truth="truth.json")
    )
    assert _without_subtitle(text) == _without_subtitle(in_process)
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(folder / "cli.html").st_mode & 0o777 == 0o666 & ~umask  # shareable, not the temp file's 0600


def test_cli_report_needs_no_measurement_file(case, tmp_path, monkeypatch):
    """RESULT.json alone makes the whole report: moved or deleted measurements take nothing away."""
    data = json.loads((case["folder"] / "result.json").read_text())
    for entry in data["data"] + data["validation_data"]:
        entry["file"] = "moved_" + Path(entry["file"]).name
    (tmp_path / "result.json").write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    assert main(["report", "result.json", "--robot", ROBOT, "--out", "alone.html"]) == 0
    text = (tmp_path / "alone.html").read_text()
    page = _assert_self_contained(text)
    assert page.h2 == rigid_sections()
    assert "identification: moved_id.csv" in text and "validation: moved_val.csv" in text
    # the torque figures of both runs and their residual spectra are there
    assert text.count("predicted and measured torque, joints") == 2 and text.count("residual spectrum") >= 2


def test_result_json_round_trip_and_schema_versions(case, tmp_path, capsys):
    record = case["record"]
    assert read_result(case["folder"] / "result.json") == record
    data = json.loads(record.to_json())
    assert data["schema"] == SCHEMA_VERSION and data["robid"] == 1
    older = {k: v for k, v in data.items() if k != "motor_joints"} | {"schema": "1.0"}  # written before 1.1
    (tmp_path / "older.json").write_text(json.dumps(older))
    assert read_result(tmp_path / "older.json") == record
    data["schema"] = "1.7"  # a later minor version adds keys: still read, new keys ignored
    data["added_in_1_7"] = {"anything": [1, 2]}
    (tmp_path / "minor.json").write_text(json.dumps(data))
    assert read_result(tmp_path / "minor.json").base_parameters == record.base_parameters
    data["schema"] = "3.0"
    (tmp_path / "major.json").write_text(json.dumps(data))
    assert main(["report", str(tmp_path / "major.json"), "--robot", ROBOT, "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "major.json" in err[0] and "schema '3.0'" in err[0] and "Traceback" not in err[0]
    del data["schema"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert main(["predict", ROBOT, str(tmp_path / "old.json"), "x.csv", "--out", str(tmp_path / "p.csv")]) == 2
    assert "no schema version" in capsys.readouterr().err
    data["schema"] = "1.0"
    data["base_parameters"][3]["value"] = "heavy"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert main(["report", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x.html")]) == 2
    assert "bad.json: base_parameters[3].value: expected a finite number" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_cli_report_bad_input_names_the_file(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(case["folder"])
    (tmp_path / "bad.json").write_text('{"parameters": {"m_J1": "heavy"}}')
    assert (
        main(["report", "result.json", "--truth", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x.html")]) == 2
    )
    err = capsys.readouterr().err
    assert "bad.json" in err and "m_J1" in err
    assert main(["report", "result.json", "--validate", "nothere.csv", "--out", str(tmp_path / "x.html")]) == 2
    assert "nothere.csv" in capsys.readouterr().err
    (tmp_path / "broken.json").write_text("{")
    assert main(["report", str(tmp_path / "broken.json"), "--out", str(tmp_path / "x.html")]) == 2
    assert "broken.json" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
IN_CI = os.environ.get("CI", "").lower() == "true"


def _chromium() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def _need_chromium() -> str:
    """The browser; without one, the test fails under CI=true (.ci/run installs it) and is skipped elsewhere."""
    browser = _chromium()
    if browser is None:
        message = f"no headless browser found ({', '.join(BROWSERS)}; Debian package chromium)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}: the report rendering check must run in CI")
        pytest.skip(message)
    return browser


def _run_chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    """Headless Chromium in its own process group, so that a hang kills the whole browser, not only its launcher."""
    cmd = [
        _need_chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("chromium did not finish within 120 s")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


#: appended to a test copy of the report (never to the report itself, which has no script): the layout as text
_LAYOUT_PROBE = """<script>
(function () {
  var out = [], y = window.scrollY;
  var root = document.documentElement;
  out.push(["page", 0, root.scrollHeight, root.scrollWidth, window.innerWidth].join(" "));
  document.querySelectorAll("section").forEach(function (e) {
    var r = e.getBoundingClientRect();
    out.push(["section", e.id, Math.round(r.top + y), Math.round(r.bottom + y)].join(" "));
  });
  document.querySelectorAll("figure img").forEach(function (e, i) {
    var r = e.getBoundingClientRect();
    out.push(["img", i, Math.round(r.top + y), Math.round(r.bottom + y), Math.round(r.left), Math.round(r.right),
              e.naturalWidth].join(" "));
  });
  document.querySelectorAll("table").forEach(function (t, i) {
    var w = t.parentElement, r = w.getBoundingClientRect();
    out.push(["table", i, w.className || "-", getComputedStyle(w).overflowX, Math.round(r.right), t.scrollWidth,
              w.clientWidth].join(" "));
  });
  var p = document.createElement("pre");
  p.id = "layout-probe";
  p.textContent = out.join("\\n");
  document.body.appendChild(p);
})();
</script>"""


def _layout(report: Path, tmp_path: Path, width: int) -> dict:
    """Page height and width, section and image boxes (CSS px) and the box of every table's wrapper, at a window
    ``width`` px wide, measured by the browser in a copy of the report with a probe script appended."""
    probe = tmp_path / f"probe_{width}.html"
    probe.write_text(report.read_text().replace("</body>", _LAYOUT_PROBE + "</body>"))
    dom = _run_chromium([f"--window-size={width},1000", "--dump-dom", probe.as_uri()], tmp_path / f"profile_{width}")
    text = dom.stdout.split('<pre id="layout-probe">', 1)[-1].split("</pre>", 1)[0]
    out: dict = {"sections": {}, "images": [], "tables": []}
    for line in text.splitlines():
        kind, key, *rest = line.split()
        if kind == "page":
            out["height"], out["width"], out["viewport"] = (int(v) for v in rest)
        elif kind == "section":
            out["sections"][key] = (int(rest[0]), int(rest[1]))
        elif kind == "img":
            out["images"].append(tuple(int(v) for v in rest))
        elif kind == "table":
            out["tables"].append({"wrapper": rest[0], "overflow": rest[1], "right": int(rest[2]),
                                  "width": int(rest[3]), "box": int(rest[4])})
    assert out["sections"], dom.stderr[-2000:]
    return out


def _non_white(png: Path) -> np.ndarray:
    """(rows, columns) True where a pixel of the screenshot is not (near) white."""
    from matplotlib.image import imread

    rgb = imread(png)[..., :3].astype(float)
    if rgb.max() > 1.0:  # 8-bit PNGs through PIL
        rgb /= 255.0
    return rgb.min(axis=2) < 0.9


def test_report_renders_in_headless_chromium_without_console_errors(case, tmp_path, capsys):
    """A full-page screenshot in headless Chromium: every section and every figure must show something (the share
    of non-white pixels in its band of the page), no console or load error may mention the report, and the DOM
    must hold the page content. Under CI=true a missing browser fails the test instead of skipping it."""
    _need_chromium()
    written = case["folder"] / "report.html"
    if not written.exists():
        write_report(written, case["record"], case["robot"], trajectory=case["folder"] / "traj.json")
    report = tmp_path / "report_open.html"  # the sections after the first screen are collapsed: opened here
    report.write_text(written.read_text().replace('<details class="section">', '<details class="section" open>'))
    layout = _layout(report, tmp_path, 1400)
    height = min(layout["height"], 30_000)
    shot = tmp_path / "shot.png"
    uri = report.resolve().as_uri()
    proc = _run_chromium([f"--screenshot={shot}", f"--window-size=1400,{height}", uri], tmp_path / "profile")
    assert shot.exists() and shot.read_bytes().startswith(b"\x89PNG"), proc.stderr[-2000:]
    ink = _non_white(shot)
    assert ink.shape[0] >= height - 1 and ink.shape[1] == 1400, ink.shape
    shares = {name: float(ink[top:min(bottom, height)].mean()) for name, (top, bottom) in layout["sections"].items()
              if top < height}
    figures = [float(ink[top:bottom, left:right].mean()) for top, bottom, left, right, natural in layout["images"]
               if bottom <= height]
    bands = [float(ink[k:k + 1000].mean()) for k in range(0, height - 999, 1000)]
    with capsys.disabled():  # the numbers go to the log even under -q
        print(
            f"\nheadless chromium: page 1400 x {layout['height']} px; non-white share per section: "
            + ", ".join(f"{k} {100 * v:.1f} %" for k, v in shares.items())
            + f"; figures {len(figures)}, lowest {100 * min(figures):.1f} %; 1000 px bands lowest "
            f"{100 * min(bands):.1f} %"
        )
    assert list(shares) == [s.anchor for s in default_sections() if s.title in rigid_sections()]
    assert all(v > 0.01 for v in shares.values()), shares  # text alone covers a few per cent of a section
    assert len(figures) >= 8 and all(v > 0.03 for v in figures), figures  # every figure decoded and drawn
    assert all(natural >= 800 for *_, natural in layout["images"])
    assert min(bands) > 0.005, bands  # no blank stretch of the page
    bad = [
        line
        for line in proc.stderr.splitlines()
        if report.name in line and ("CONSOLE" in line or "ERROR" in line or "net::" in line)
    ]
    assert not bad, bad
    dom = _run_chromium(["--dump-dom", uri], tmp_path / "profile2")
    assert "Predicted versus measured torque" in dom.stdout and "Parameter table" in dom.stdout


def test_wide_tables_scroll_inside_the_page_at_800_px(case, tmp_path):
    """At a window 800 px wide the page itself never scrolls sideways: every table sits in a wrapper that scrolls
    horizontally, inside the viewport, and the parameter table (wider than 800 px) is one of them."""
    report = case["folder"] / "report_800.html"
    write_report(report, case["record"], case["robot"], trajectory=case["folder"] / "traj.json")
    tags = _parse(report.read_text()).tags
    tables = [k for k, (tag, _) in enumerate(tags) if tag == "table"]
    assert tables and all(tags[k - 1] == ("div", {"class": "table-wrap"}) for k in tables)  # statically
    layout = _layout(report, tmp_path, 800)
    assert layout["width"] <= layout["viewport"], layout["width"]
    assert all(t["wrapper"] == "table-wrap" and t["overflow"] == "auto" for t in layout["tables"]), layout["tables"]
    assert all(t["right"] <= layout["viewport"] for t in layout["tables"])
    assert any(t["width"] > t["box"] for t in layout["tables"])  # at least one table is wider and scrolls


def rigid_sections(friction_models: bool = True) -> list[str]:
    """The sections of a rigid record's report without reference models: all but the elastic one (elastic-layout
    records only), the comparison with reference models (records that name references) and the estimators compared
    (records that compared them); the friction models are compared by default on the rigid layout
    (``friction_models=False``: a record identified without)."""
    from robid.report.sections import ElasticSection, EstimatorsSection, FrictionModelsSection, ReferencesSection

    optional = ElasticSection | ReferencesSection | EstimatorsSection
    if not friction_models:
        optional = optional | FrictionModelsSection
    return [s.title for s in default_sections() if not isinstance(s, optional)]


def _with_validation_fit(record, nrmse: list[float], inside: list[float]):
    """The record with its validation run's fit replaced (NRMSE and share of samples inside the 95 % band)."""
    import dataclasses

    run = record.validation_data[0]
    per_joint = tuple(
        dataclasses.replace(m, nrmse_percent=e, inside_band_percent=c)
        for m, e, c in zip(run.fit.per_joint, nrmse, inside, strict=True)
    )
    run = dataclasses.replace(run, fit=dataclasses.replace(run.fit, per_joint=per_joint))
    return dataclasses.replace(record, validation_data=(run,))


def test_fit_verdict_counts_band_coverage(case):
    """A joint with a small NRMSE but only 67.5 % of its samples inside the 95 % band is not GOOD."""
    from robid.report.sections.summary import fit_quality

    good = report_data(_with_validation_fit(case["record"], [1.0, 2.0, 3.0], [95.0, 93.0, 96.0]), case["robot"])
    verdict, _ = fit_quality(good)
    assert verdict.badge == "GOOD" and "90 %" in verdict.details[0]
    narrow = report_data(_with_validation_fit(case["record"], [1.0, 2.0, 3.0], [95.0, 67.5, 96.0]), case["robot"])
    verdict, table = fit_quality(narrow)
    assert verdict.badge == "CHECK" and "J2 2 % (only 67.5 % inside the band)" in verdict.headline
    assert "J1" not in verdict.headline and "J3" not in verdict.headline
    validation = table["rows"][-1]["cells"]  # one row per run, the validation run last
    assert [level for *_, level in validation] == ["good", "warn", "good"]
    text = build_report(narrow)
    assert "at least 90 % of the samples inside the 95 % prediction band" in text and ">67.5 % (" in text


def test_parameter_table_has_a_unit_per_row(case):
    text = build_report(report_data(case["record"], case["robot"]))
    table = text.split('<table class="params">', 1)[1].split("</table>", 1)[0]
    assert "<th>unit</th>" in table
    rows = table.split("<tr")[2:]
    assert len(rows) == len(case["robot"].base_parameters().names)
    units = {
        r.split('<code class="name">')[1].split("<")[0]: r.split('<td class="unit">')[1].split("<")[0] for r in rows
    }
    assert units["Izz_J1"] == "kg m\u00b2" and units["fv_J1"] == "N m s/rad" and units["f0_J3"] == "N m"
    assert units["comp_k_J2"] == "N/m" and units["comp_kl0_J2"] == "N" and units["mx_J2"] == "kg m"


def test_validation_runs_friction_lies_on_the_identified_curve(case):
    """The friction figure draws the validation runs' data-implied friction (measured torque minus every other
    identified term) beside the identified curve. On the virtual robot the model is exact, so the held-out points
    must lie on the identified curve within the torque noise: the residual of the held-out points about the
    curve is a small fraction of the friction torque's own spread. A sign error or a run mix-up (e.g. the
    identification run drawn twice, or the friction of another joint) moves the points off the curve."""
    from robid.report._compute import friction_curve
    from robid.report._data import ReportData
    from robid.report.sections.friction import _friction_joints, _implied

    data = ReportData(title="t", subtitle="", robot=case["robot"], record=case["record"])
    assert data.validation_runs
    joints = _friction_joints(data)
    assert joints
    for j, prefixes in joints:
        held = _implied(data, j, "tau_friction", "qd", data.validation_runs)
        own = _implied(data, j, "tau_friction", "qd")
        assert held is not None and own is not None
        x, y = held
        assert not np.array_equal(x, own[0][: x.size])  # the validation run's samples, not the identification's
        name = case["robot"].joint_names[j]
        linear = friction_curve(x, prefixes, name, data.names, data.values, data.covariance, data.nominal, {})
        identified, _ = data.model.friction_curve(data.robot, j, x)  # the identified model's, as the figure draws
        if data.model.is_linear:
            assert np.allclose(identified, linear.identified)
        residual = y - identified
        spread = np.std(identified)
        print(f"{name}: held-out friction residual rms {np.sqrt(np.mean(residual**2)):.3g} vs spread {spread:.3g}")
        assert np.sqrt(np.mean(residual**2)) < 0.25 * spread
    assert "Validation runs (orange) did not shape the estimate" in data.section("friction").html()


@pytest.fixture(scope="module")
def case_with_reference(case):
    """The case identified again with a reference model (the robot file's values with the masses 20 % heavier),
    scored on the same samples: the first screen then holds the comparison with it."""
    from robid.identification import IdentificationOptions
    from robid.identification.references import load_reference

    robot, folder = case["robot"], case["folder"]
    heavier = {n: 1.2 * v for n, v in zip(robot.parameter_names, robot.parameters, strict=True) if n.startswith("m_")}
    reference = load_reference("masses +20 %", ROBOT, parameters=heavier)
    options = IdentificationOptions(references=(reference,))
    result = run_identification(robot, [folder / "id.csv"], options, validation_files=[folder / "val.csv"])
    report = folder / "report_reference.html"
    write_report(report, result.record, robot, trajectory=folder / "traj.json")
    return {"record": result.record, "report": report}


#: appended to a test copy of the report: the boxes of the first screen's parts (CSS px) as text
_FIRST_SCREEN_PROBE = """<script>
(function () {
  var out = [];
  [["verdicts", ".overview-verdicts"], ["card", ".verdict.compact"], ["heat", "table.heat"], ["cmp", "td.cmp"],
   ["next", ".next"], ["details", "details.section"]].forEach(function (pair) {
    document.querySelectorAll(pair[1]).forEach(function (e) {
      var r = e.getBoundingClientRect();
      out.push([pair[0], Math.round(r.top), Math.round(r.bottom), Math.round(r.left), Math.round(r.right)].join(" "));
    });
  });
  var p = document.createElement("pre");
  p.id = "first-probe";
  p.textContent = out.join("\\n");
  document.body.appendChild(p);
})();
</script>"""


def test_first_screen_holds_the_verdicts_the_heat_map_and_the_comparison(case_with_reference, tmp_path):
    """At 1400 x 900 px, without scrolling, the page shows the verdict cards, the heat map of every run and joint
    with its comparison column, and what to do next: their boxes (measured by the browser) end above 900 px, and a
    screenshot of that window has ink in each of them. Every section after the first screen starts collapsed."""
    report = case_with_reference["report"]
    text = report.read_text()
    assert text.count('<details class="section">') == len(_parse(text).h2) - 1  # all but the overview
    probe = tmp_path / "first.html"
    probe.write_text(text.replace("</body>", _FIRST_SCREEN_PROBE + "</body>"))
    dom = _run_chromium(["--window-size=1400,900", "--dump-dom", probe.as_uri()], tmp_path / "profile_probe")
    lines = dom.stdout.split('<pre id="first-probe">', 1)[-1].split("</pre>", 1)[0].splitlines()
    boxes: dict[str, list] = {}
    for line in lines:
        kind, *numbers = line.split()
        boxes.setdefault(kind, []).append(tuple(int(v) for v in numbers))
    assert boxes.get("heat") and boxes.get("cmp") and boxes.get("card") and boxes.get("next"), dom.stderr[-2000:]
    shot = tmp_path / "first.png"
    _run_chromium([f"--screenshot={shot}", "--window-size=1400,900", report.resolve().as_uri()], tmp_path / "profile")
    ink = _non_white(shot)
    assert ink.shape == (900, 1400), ink.shape
    for kind in ("verdicts", "card", "heat", "cmp", "next"):
        for top, bottom, left, right in boxes[kind]:
            assert 0 <= top < bottom <= 900, (kind, top, bottom)
            assert ink[top:bottom, left:right].mean() > 0.02, (kind, ink[top:bottom, left:right].mean())
    print(f"\nfirst screen: verdict cards end at {max(b for _, b, *_ in boxes['card'])} px, heat map at "
          f"{boxes['heat'][0][1]} px, next steps at {boxes['next'][0][1]} px")
    assert "better than masses +20 %" in text or "better 3/3" in text
