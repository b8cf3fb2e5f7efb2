"""Acceptance of the demo (issue 6): a shortened built-in demo campaign on the virtual heavy robot.

The built-in campaign file is used as it is, without the report step; the assertions are the
demo's own promises: validation NRMSE per joint below 3 % and every identified base parameter within 3 reported
standard deviations of the virtual robot's truth.
"""

import yaml

from robid.campaign import run_campaign
from robid.campaign.schema import campaign_from_dict
from robid.cli.demo_cmd import demo_campaign_path
from robid.io.result_file import read_result


def test_shortened_demo_meets_its_promises(tmp_path):
    data = yaml.safe_load(demo_campaign_path().read_text())

    data["report"] = False
    spec = campaign_from_dict(data, tmp_path / "demo.yaml")
    run = run_campaign(spec, tmp_path, log=lambda m: None)
    record = run.record
    assert record.robot == "kr-heavy" or record.robot.startswith("kr")
    assert (tmp_path / "trajectories" / "demo" / "ident.src").exists()  # the KRL program
    validation = record.validation_data[0].fit.nrmse_percent()
    print("validation NRMSE per joint [%]:", [round(x, 2) for x in validation])
    assert max(validation) < 3.0
    truth = record.references()["truth"]
    z = {p.name: (p.value - t) / p.std for p, t in zip(record.base_parameters, truth, strict=True)}
    print("largest |estimate - truth| / std:", max(abs(v) for v in z.values()))
    assert all(abs(v) <= 3.0 for v in z.values()), {k: round(v, 1) for k, v in z.items() if abs(v) > 3}
    # the record travels: RESULT.json read back equals the record the campaign returned
    assert read_result(run.result_path) == record
