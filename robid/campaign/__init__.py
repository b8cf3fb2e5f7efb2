"""Scripted identification campaigns: a YAML file names the robot, the excitation designs, exports,
measurements (real files or the virtual robot), processing, estimation, validation and report; the runner
executes the steps in order, caches each by the fingerprint of its inputs and writes every artefact atomically
(docs/campaign.md). No numerics here: every step calls a library function. :class:`Campaign` is the same file
as Python keyword arguments (``robid.Campaign(...).run()``)."""

from robid.campaign.api import Campaign
from robid.campaign.campaign_file import CampaignSpec, read_campaign
from robid.campaign.runner import CampaignRun, run_campaign

__all__ = ["Campaign", "CampaignRun", "CampaignSpec", "read_campaign", "run_campaign"]
