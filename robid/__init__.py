"""robid: dynamic model identification of industrial robots.

Public surface (docs/interfaces.md section 2): :func:`load_robot` returning a :class:`Robot`, and :class:`Campaign`
(a campaign file as Python keyword arguments, docs/campaign.md). They are imported on first use, so that
``import robid.record`` (reading a RESULT.json) or ``robid --help`` load no numerical code.
"""

from robid.errors import RobidInputError
from robid.version import __version__

__all__ = ["BaseParameters", "Campaign", "Robot", "RobidInputError", "load_robot", "__version__"]

_ROBOT_API = ("BaseParameters", "Robot", "load_robot")


def __getattr__(name: str):
    if name in _ROBOT_API:
        from robid import robot

        return getattr(robot, name)
    if name == "Campaign":
        from robid.campaign.api import Campaign

        return Campaign
    raise AttributeError(f"module 'robid' has no attribute {name!r}")
