"""UR10e campaign (measurements/ur10e/campaign.yaml) on the runs of Mamedov et al. 2020, read from
../shared/anchors/data: robid identified on the four runs the authors trimmed, every other unloaded excitation run
and the six single-joint runs predicted, and the authors' identified parameters scored on the same samples
(robid.identification.references). The same comparison against the raw K i with the authors' own processing is
tests/test_ur10e_crossvalidation.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "measurements" / "ur10e" / "campaign.yaml"
DATA = ROOT.parent / "shared" / "anchors" / "data" / "dynamic_calibration"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"the UR10e data set is not at {DATA}")


@pytest.fixture(scope="module")
def ur10e_run(tmp_path_factory):
    from robid.campaign import read_campaign, run_campaign

    return run_campaign(read_campaign(CAMPAIGN), tmp_path_factory.mktemp("ur10e"), log=lambda _: None)


def _nrmse(fit) -> np.ndarray:
    return np.array([j.nrmse_percent for j in fit.per_joint])


def test_robid_predicts_every_excitation_run_better_than_the_authors_parameters(ur10e_run):
    record = ur10e_run.record
    excitation = [r for r in record.runs if "joint_" not in r.file]
    assert len(excitation) == 16
    for run in excitation:
        ours, theirs = _nrmse(run.fit), _nrmse(run.references[0].fit)
        assert run.references[0].fit.samples == run.fit.samples
        # measured on 2026-11-26: held-out runs 3.4-38.7 % against the authors' 5.3-58.4 %, every joint lower
        assert np.all(ours < theirs), (run.file, ours, theirs)


def test_single_joint_runs_the_moving_joint_as_well_as_the_authors(ur10e_run):
    singles = [r for r in ur10e_run.record.validation_data if "joint_" in r.file]
    assert len(singles) == 6
    for run in singles:
        k = int(Path(run.file).stem[-1]) - 1
        ours, theirs = _nrmse(run.fit)[k], _nrmse(run.references[0].fit)[k]
        # measured: 10.7 / 4.2 / 5.9 / 7.6 / 13.6 / 10.8 % against 10.5 / 4.8 / 6.7 / 7.7 / 13.4 / 11.6 %
        assert ours < theirs + 1.0, (run.file, ours, theirs)


def test_the_report_holds_the_comparison_table(ur10e_run):
    html = ur10e_run.report_path.read_text()
    assert "Comparison with reference models" in html
    assert html.count("Mamedov 2020: identified parameters") >= 22  # the legend and one row per run


def test_single_joint_runs_friction_follows_the_identified_curve(ur10e_run):
    """Issue 13: the friction curves of the single-joint runs against the identified friction model. The moving
    joint's data-implied friction (measured torque minus every other identified term; the report's orange
    scatter) about the identified friction (fv qd + fc sign(qd) + f0, or the adopted nonlinear model), on samples
    faster than 0.05 rad/s. Measured
    2026-11-27: residual rms 2.93 / 3.49 / 1.61 / 0.31 / 0.30 / 0.23 N m against a friction rms of 26.6 / 22.5 /
    11.3 / 4.45 / 3.61 / 3.41 N m (7-15 %), mean within 0.21 N m: these runs did not shape the estimate."""
    import robid
    from robid.report._compute import friction_curve
    from robid.report._data import ReportData
    from robid.report.sections.friction import _friction_joints, _implied

    robot = robid.load_robot("ur10e")
    data = ReportData(title="", subtitle="", robot=robot, record=ur10e_run.record)
    prefixes = dict(_friction_joints(data))
    assert sorted(prefixes) == list(range(6))
    for run in (r for r in data.validation_runs if "joint_" in r.file):
        j = int(Path(run.file).stem[-1]) - 1
        qd, implied = _implied(data, j, "tau_friction", "qd", [run])
        linear = friction_curve(
            qd, prefixes[j], robot.joint_names[j], data.names, data.values, data.covariance, data.nominal, {}
        )
        identified, _ = data.model.friction_curve(robot, j, qd)  # the identified model's curve (the figure's)
        if data.model.is_linear:
            assert np.allclose(identified, linear.identified)
        moving = np.abs(qd) > 0.05
        residual = implied[moving] - identified[moving]
        scale = np.sqrt(np.mean(identified[moving] ** 2))
        rms = np.sqrt(np.mean(residual**2))
        print(f"{run.file}: friction residual rms {rms:.2f} (mean {residual.mean():+.2f}) of {scale:.2f} N m")
        assert rms < 0.2 * scale and abs(residual.mean()) < 0.05 * scale, (run.file, rms, residual.mean(), scale)


def test_the_report_headline_says_robid_beats_the_reference_and_names_the_joints_not_judged(ur10e_run):
    """Issue 33: the first screen says robid predicts every excitation run better than the authors' parameters,
    and lists the joints at rest in the single-joint runs as not judged (their NRMSE of hundreds of per cent is a
    holding torque's, no fit's). The report stays under 2 MB."""
    import robid
    from robid.report import report_data
    from robid.report.judgement import judge_runs
    from robid.report.sections.overview import against_references
    from robid.report.sections.summary import fit_quality

    data = report_data(ur10e_run.record, robid.load_robot("ur10e"))
    judgements = judge_runs(data)
    versus = against_references(judgements)
    fit, _ = fit_quality(data, judgements)
    print(versus.headline, "|", fit.headline)
    assert "better on every one of the 16 excitation run(s)" in versus.headline and versus.level == "good"
    assert "30 joint(s) at rest in 6 run(s) not judged" in fit.headline
    for run in (r for r in judgements if "joint_" in r.file):
        assert len(run.at_rest) == 5 and run.moving == (f"J{run.file[-5]}",)
    html = ur10e_run.report_path.read_text()
    overview = html.split('<section id="overview">', 1)[1].split("</section>", 1)[0]
    assert versus.headline in overview and "not judged" in overview
    size = ur10e_run.report_path.stat().st_size
    print(f"report: {size / 1e6:.2f} MB")
    assert size <= 2_000_000


#: appended to a test copy of the report: the heat map's box and its rows (CSS px), and each row's run
_HEAT_PROBE = """<script>
(function () {
  var out = [];
  document.querySelectorAll("table.heat").forEach(function (t) {
    var r = t.getBoundingClientRect();
    out.push(["heat", Math.round(r.top), Math.round(r.bottom), Math.round(r.left), Math.round(r.right)].join(" "));
    t.querySelectorAll("tbody tr").forEach(function (row) {
      var b = row.getBoundingClientRect();
      out.push(["row", Math.round(b.top), Math.round(b.bottom), row.querySelectorAll("td").length].join(" "));
    });
  });
  var p = document.createElement("pre");
  p.id = "heat-probe";
  p.textContent = out.join("\\n");
  document.body.appendChild(p);
})();
</script>"""


def test_the_first_screen_shows_every_run_and_joint_of_the_campaign(ur10e_run, tmp_path):
    """Issue 33 acceptance on the real campaign (22 runs x 6 joints, not only the small case of test_report_html):
    in headless Chromium at 1400 x 900 px, without scrolling, the heat map's every row -- one per run, a cell per
    joint and the comparison column -- lies inside the window, and a screenshot has ink in each."""
    from test_report_html import _non_white, _run_chromium

    report = ur10e_run.report_path
    text = report.read_text()
    probe = tmp_path / "heat.html"
    probe.write_text(text.replace("</body>", _HEAT_PROBE + "</body>"))
    dom = _run_chromium(["--window-size=1400,900", "--dump-dom", probe.as_uri()], tmp_path / "profile_probe")
    lines = dom.stdout.split('<pre id="heat-probe">', 1)[-1].split("</pre>", 1)[0].splitlines()
    heat = [tuple(int(v) for v in line.split()[1:]) for line in lines if line.startswith("heat ")]
    rows = [tuple(int(v) for v in line.split()[1:]) for line in lines if line.startswith("row ")]
    runs = len(ur10e_run.record.validation_data) + 1  # the identification data and every predicted run
    print(f"\nUR10e first screen: heat map {heat}, {len(rows)} rows, last ends at {max(r[1] for r in rows)} px")
    assert len(heat) == 1 and len(rows) >= runs - 1, (heat, len(rows), runs, dom.stderr[-2000:])
    top, bottom, left, right = heat[0]
    assert 0 <= top < bottom <= 900 and right <= 1400
    assert all(cells >= 6 for _, _, cells in rows)  # a cell per joint at least
    shot = tmp_path / "first.png"
    _run_chromium([f"--screenshot={shot}", "--window-size=1400,900", report.resolve().as_uri()], tmp_path / "profile")
    ink = _non_white(shot)
    for row_top, row_bottom, _ in rows:
        assert ink[row_top:row_bottom, left:right].mean() > 0.02, (row_top, row_bottom)
