"""The Python form of a campaign file (docs/campaign.md, "Python API"): :class:`Campaign` takes the keys of
``robid_campaign: 1`` as keyword arguments, builds the same mapping and reads it with the same reader
(robid.campaign.campaign_file.campaign_from_dict), so that every check and every message is the YAML file's; ``run()``
is ``robid campaign``.

    import robid
    run = robid.Campaign("kr_heavy", name="demo", trajectories={...}, measurements={...},
                         identification={"measurements": ["ident"], "validation": ["valid"]}).run(out="robid-demo")
    run.record, run.result_path, run.report_path
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from robid.campaign.campaign_file import CampaignSpec, campaign_from_dict, read_campaign
from robid.campaign.runner import CampaignRun, run_campaign

#: what error messages name as the source of a campaign built in Python (a campaign file names itself)
PYTHON_SOURCE = "robid.Campaign"


class Campaign:
    """A campaign (docs/campaign.md): the keyword arguments are the top-level keys of a campaign file, with the
    same values (mappings, lists, strings and numbers; tuples and paths are taken as lists and strings), read and
    checked at once as the file would be (``RobidInputError`` naming the field).

    ``robot``: a built-in name or a robot file; ``report``: a mapping (``{"title": ...}``), True (the default:
    a report with the default title) or False. Relative file names (robot, measurement files, mappings,
    trajectory files, references) are taken relative to ``base`` (default: the current folder), as a campaign
    file's are taken relative to its folder. ``out``: the root folder of the artefacts (``--out``; ``run`` may
    name another)."""

    def __init__(
        self,
        robot: str | os.PathLike,
        *,
        measurements: Mapping[str, Any],
        identification: Mapping[str, Any],
        name: str = "campaign",
        terms=None,
        trajectories: Mapping[str, Any] | None = None,
        export=None,
        screening: Mapping[str, Any] | None = None,
        processing: Mapping[str, Any] | None = None,
        references: Mapping[str, Any] | None = None,
        report: Mapping[str, Any] | bool = True,
        description: str | None = None,
        base: str | os.PathLike | None = None,
        out: str | os.PathLike = ".",
    ):
        given = {
            "name": name,
            "description": description,
            "robot": robot,
            "terms": terms,
            "trajectories": trajectories,
            "export": export,
            "measurements": measurements,
            "screening": screening,
            "processing": processing,
            "identification": identification,
            "references": references,
            "report": {} if report is True else report,
        }
        data = {"robid_campaign": 1, **{k: _plain(v) for k, v in given.items() if v is not None}}
        source = Path(base if base is not None else ".") / PYTHON_SOURCE
        self._init(campaign_from_dict(data, source), out)

    def _init(self, spec: CampaignSpec, out) -> None:
        self.spec = spec
        self.out = Path(out)

    @classmethod
    def from_yaml(cls, path: str | os.PathLike, *, out: str | os.PathLike = ".") -> Campaign:
        """The campaign of a campaign file (read and checked as ``robid campaign`` reads it)."""
        campaign = cls.__new__(cls)
        campaign._init(read_campaign(path), out)
        return campaign

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def data(self) -> dict:
        """The campaign as the mapping a campaign file holds (``robid_campaign: 1`` and the keys given)."""
        return self.spec.raw

    def to_yaml(self) -> str:
        """The campaign file's text (relative file names stay relative: write it in ``base``)."""
        import yaml

        return yaml.safe_dump(self.data, sort_keys=False, default_flow_style=None, width=120)

    def run(
        self, out: str | os.PathLike | None = None, *, force: bool = False, log: Callable[[str], None] | None = None
    ) -> CampaignRun:
        """Run the campaign's steps under ``out`` (default: the one given when built), as ``robid campaign``:
        steps whose inputs did not change are not recomputed (``force``: all are); the step lines go to ``log``
        (e.g. ``print``; default: where :func:`~robid.campaign.runner.run_campaign` sends them). Returns the
        :class:`~robid.campaign.runner.CampaignRun`: ``record`` (the IdentificationRecord), ``result_path``,
        ``report_path`` (None without a report), ``steps`` and ``recomputed``."""
        return run_campaign(self.spec, self.out if out is None else out, force=force, log=log)

    def __repr__(self) -> str:
        s = self.spec
        return (f"Campaign({s.name!r}, robot={s.robot!r}, identify={list(s.identify)}, "
                f"validate={list(s.validate)}, method={s.method!r}, out={str(self.out)!r})")


def _plain(value: Any) -> Any:
    """A Python value as YAML would hold it: tuples as lists, paths as strings, numpy numbers as floats or ints,
    mapping keys as strings (the reader checks the rest)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy scalars and arrays
        return _plain(value.tolist())
    return value
