"""The palletizer campaign (docs/campaign.md, "The palletizer campaign"): robid/campaign/palletizer.yaml as it is,
on the virtual KR 180 PA class palletizer (a closed chain), with its report.

Promises: the KRL program exported and checked at the 12 ms interpolation with the parallelogram's passive elbow
among its limits; every identified base parameter within 3.5 reported standard deviations of the virtual robot's
truth (39 parameters: the largest of 39 honest |z| passes 3.0 in 10 % of runs, 3.5 in 2 %) and their rms below
1.45, as the demo's; validation NRMSE below 3 % per joint; the report draws the loop.
"""

import numpy as np
import pytest
import yaml

from robid.campaign import run_campaign
from robid.campaign.campaign_file import campaign_from_dict
from robid.cli.demo_cmd import demo_campaign_path
from robid.excitation.programs.parse_back import PARSERS, read_program_texts


def test_palletizer_campaign_meets_its_promises(tmp_path):
    path = demo_campaign_path().with_name("palletizer.yaml")
    spec = campaign_from_dict(yaml.safe_load(path.read_text()), tmp_path / "palletizer.yaml")
    run = run_campaign(spec, tmp_path, log=lambda m: None)
    record = run.record
    program = tmp_path / "trajectories" / "palletizer" / "ident.src"
    motion = PARSERS["krl"](read_program_texts(program, "krl"))  # executed at the 12 ms interpolation
    assert motion.q.shape[1] == 4 and motion.sample_time == pytest.approx(0.012)  # the active joints only
    elbow = motion.q[:, 2] - motion.q[:, 1]  # q_E3 = q_A3 - q_A2 (the parallelogram)
    lo, hi = np.radians([-70.0, 65.0])
    assert lo <= elbow.min() and elbow.max() <= hi
    truth = record.references()["truth"]
    z = {p.name: (p.value - t) / p.std for p, t in zip(record.base_parameters, truth, strict=True)}
    print("largest |estimate - truth| / std:", max(abs(v) for v in z.values()))
    assert all(abs(v) <= 3.5 for v in z.values()), {k: round(v, 1) for k, v in z.items() if abs(v) > 3.5}
    assert np.sqrt(np.mean(np.square(list(z.values())))) < 1.45
    validation = record.validation_data[0].fit.nrmse_percent()
    print("validation NRMSE per joint [%]:", validation)
    assert max(validation) < 3.0
    html = (tmp_path / "reports" / "palletizer" / "report.html").read_text()
    assert "<h3>Closed chain</h3>" in html and 'alt="closed loops of the robot"' in html
