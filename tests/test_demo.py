"""Acceptance of the demo (issue 6): a shortened built-in demo campaign on the virtual heavy robot.

The built-in campaign file is used as it is, without the report step; the assertions are the
demo's own promises: validation NRMSE per joint below 3 % and every identified base parameter within 3 reported
standard deviations of the virtual robot's truth.
"""

import yaml

from robid.campaign import run_campaign
from robid.campaign.schema import campaign_from_dict
from robid.cli.demo_cmd import demo_campaign_path


def test_shortened_demo_meets_its_promises(tmp_path):
    data = yaml.safe_load(demo_campaign_path().read_text())

    data["report"] = False
    spec = campaign_from_dict(data, tmp_path / "demo.yaml")
    run = run_campaign(spec, tmp_path, log=lambda m: None)
    result = run.summary
    assert result["robot"] == "kr-heavy" or result["robot"].startswith("kr")
    assert (tmp_path / "trajectories" / "demo" / "ident.src").exists()  # the KRL program
    validation = [m["nrmse_percent"] for m in result["validation"][0]["per_joint"]]
    print("validation NRMSE per joint [%]:", [round(x, 2) for x in validation])
    assert max(validation) < 3.0
    z = {p["name"]: (p["value"] - p["truth"]) / p["std"] for p in result["base_parameters"]}
    print("largest |estimate - truth| / std:", max(abs(v) for v in z.values()))
    assert all(abs(v) <= 3.0 for v in z.values()), {k: round(v, 1) for k, v in z.items() if abs(v) > 3}
