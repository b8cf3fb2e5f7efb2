"""The campaign's ``processing.decimate``: ``auto`` (the default) or a positive integer, checked when the file is
read (robid.campaign.campaign_file), and handed to ProcessingOptions as None (automatic) or the integer."""

from pathlib import Path

import pytest
import yaml

from robid.campaign.campaign_file import read_campaign
from robid.campaign.runner import _base_processing
from robid.errors import RobidInputError

SMALL = Path(__file__).parent / "data" / "campaign" / "small_sel.yaml"


def campaign_with(tmp_path: Path, processing: dict) -> Path:
    data = yaml.safe_load(SMALL.read_text())
    data["processing"] = processing
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(data))
    (tmp_path / "arm3.yaml").write_text((SMALL.parent / "arm3.yaml").read_text())
    return path


@pytest.mark.parametrize(("written", "options"), [(None, None), ("auto", None), (1, 1), (7, 7)])
def test_decimate_reaches_the_processing_options(tmp_path, written, options):
    processing = {"min_speed": 0.1} if written is None else {"min_speed": 0.1, "decimate": written}
    spec = read_campaign(campaign_with(tmp_path, processing))
    assert _base_processing(spec).decimate == options


@pytest.mark.parametrize("bad", ["often", 0, -2, 1.5])
def test_a_bad_decimate_is_named_with_the_file(tmp_path, bad):
    path = campaign_with(tmp_path, {"decimate": bad})
    with pytest.raises(RobidInputError, match=r"campaign\.yaml.*processing.*decimate"):
        read_campaign(path)
