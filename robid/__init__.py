"""robid: dynamic model identification of industrial robots.

Public surface (interfaces.md section 2): :func:`load_robot` returning a :class:`Robot`.
"""

from robid.errors import RobidInputError
from robid.robot import BaseParameters, Robot, load_robot

__version__ = "0.1.0"

__all__ = ["BaseParameters", "Robot", "RobidInputError", "load_robot", "__version__"]
