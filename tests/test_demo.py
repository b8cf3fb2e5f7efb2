"""Acceptance of the demo (issues 6 and 12): the built-in demo campaign on the virtual heavy robot.

The built-in campaign file is used as it is, without the report step; the assertions are the demo's own
promises: validation NRMSE per joint below 3 %, every identified base parameter within about 3 reported
standard deviations of the virtual robot's truth (the rms of |estimate - truth| / std below 1.3), and the
stiffness of the elastic axes 1-3 within 0.3 % (and 3 std) of the truth with its damping, printed by
``robid demo`` beside the truth.
"""

import numpy as np
import yaml

from robid.campaign import run_campaign
from robid.campaign.campaign_file import campaign_from_dict
from robid.cli.demo_cmd import demo_campaign_path, spring_lines
from robid.io.result_file import read_result


def test_shortened_demo_meets_its_promises(tmp_path):
    data = yaml.safe_load(demo_campaign_path().read_text())

    data["report"] = False
    spec = campaign_from_dict(data, tmp_path / "demo.yaml")
    run = run_campaign(spec, tmp_path, log=lambda m: None)
    record = run.record
    assert record.robot == "kr-heavy" or record.robot.startswith("kr")
    assert (tmp_path / "trajectories" / "demo" / "ident.src").exists()  # the KRL program
    truth = record.references()["truth"]
    z = {p.name: (p.value - t) / p.std for p, t in zip(record.base_parameters, truth, strict=True)}
    print("largest |estimate - truth| / std:", max(abs(v) for v in z.values()))
    # 67 parameters: with honest std the largest of 67 |z| passes 3.0 in 17 % of runs and 3.5 in 3 %. The demo
    # runs at robid's defaults (design criterion and floor, centre, data selection, layout, method): measured
    # 2026-11-29 on its seeds (11/12) rms 0.93, largest 2.09; with the noise seeds 21, 31, 41 rms 1.27, 1.04, 1.15,
    # largest 3.79 (Ia_A1), 2.27, 3.54 (Ia_A4): over the four the rms of all z is 1.10 (eiv's std about 10 % small
    # on average). Pinned to criterion cond without a floor and min_speed 0.2, as the demo was until then: rms 1.43,
    # largest 3.1, d_A2 at -2.2.
    assert all(abs(v) <= 3.5 for v in z.values()), {k: round(v, 1) for k, v in z.items() if abs(v) > 3.5}
    assert np.sqrt(np.mean(np.square(list(z.values())))) < 1.3
    # issue 12: the elastic axes' springs, identified in the elastic layout
    assert record.motor_joints == ("A1", "A2", "A3") and record.method == "eiv"  # chosen by default, and said:
    assert any(c.startswith("layout: elastic") for c in record.choices)
    assert any(c.startswith("method: eiv (auto)") for c in record.choices)
    springs = {"k_A1": 4.5778e6, "k_A2": 7.5189e6, "k_A3": 4.0999e6}
    for name, true in springs.items():
        assert abs(record.value(name) / true - 1) < 3e-3, (name, record.value(name))  # std 0.02-0.06 %
        assert abs(z[name]) <= 3.0
    # the damping is estimated too, with a wide std (12-47 % on earlier designs; d_A2 = 1030 +- 1690 against 4800
    # on the pinned design of 2026-11-27): whatever the design leaves of it, the estimate is within 3 std of the
    # truth and its class says how well it is determined (never 'well-identified' with a std above half its value)
    dampers = [record.parameter(f"d_{joint}") for joint in ("A1", "A2", "A3")]
    for d in dampers:
        assert abs(z[d.name]) <= 3.0, (d.name, d.value, d.std)
        if d.std > 0.5 * abs(d.value):
            assert d.identifiability != "well-identified", (d.name, d.value, d.std, d.identifiability)
    assert sum(d.std < 0.5 * d.value for d in dampers) >= 2  # two of the three are determined to 50 %
    lines = spring_lines(record)
    print(lines)
    assert "k_A2" in lines and "d_A3" in lines and "truth 7.519e+06" in lines
    # the record travels: RESULT.json read back equals the record the campaign returned
    assert read_result(run.result_path) == record
    validation = record.validation_data[0].fit.nrmse_percent()
    print("validation NRMSE per joint [%]:", validation)
    unvalidated = [j for j, v in zip(record.joints, validation, strict=True) if v is None]
    assert not unvalidated, f"the validation run leaves {unvalidated} without rows faster than min_speed"
    assert max(validation) < 3.0
    # issue 33: the report's fit verdict on the noise-only robot is GOOD (its bands count the model error; measured
    # 2026-11-28 on main's demo design: every joint 0.4-0.8 % NRMSE, 92-96 % inside the band, A3 needing 72 % on its
    # few independent samples above min_speed)
    from robid.report import report_data
    from robid.report.sections.summary import fit_quality

    verdict, _ = fit_quality(report_data(record))
    print("fit verdict:", verdict.badge, verdict.headline)
    assert verdict.level == "good", verdict.headline
