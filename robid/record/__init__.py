"""Typed records that travel between robid's stages and files: frozen dataclasses with a JSON form.

* :mod:`robid.record.identification` -- :class:`IdentificationRecord`, what identification returns and RESULT.json
  serialises (schema ``MAJOR.MINOR``; readers refuse an unknown major version);
* :mod:`robid.record.runs` -- the record of one run: processing summary, torque fit, ranges, figure series;
* :mod:`robid.record.codec` -- the generic conversion of frozen dataclasses to JSON-ready data and back.

This package imports nothing of robid but its errors, and of the numerical stack only numpy: reading a
RESULT.json loads neither the robot model, nor scipy, sympy or cvxpy (checked in tests/test_architecture.py).
"""

from robid.record.identification import (
    SCHEMA_VERSION,
    BaseParameter,
    CompensatorReport,
    IdentificationRecord,
    ProcessingSettings,
    ReferenceSettings,
    StandardParameter,
)
from robid.record.runs import (
    DisplaySeries,
    JointFit,
    JointRange,
    ProcessingGuard,
    ProcessingSummary,
    ReferenceFit,
    ResidualSpectrum,
    RunRecord,
    TorqueFit,
)

#: the old name of CompensatorReport (until issue 35 gave the concept one name), kept for scripts importing it
BalancerCollinearity = CompensatorReport

__all__ = [
    "SCHEMA_VERSION",
    "BalancerCollinearity",  # the old name of CompensatorReport, kept for scripts that import it
    "BaseParameter",
    "CompensatorReport",
    "DisplaySeries",
    "IdentificationRecord",
    "JointFit",
    "JointRange",
    "ProcessingGuard",
    "ProcessingSettings",
    "ProcessingSummary",
    "ReferenceFit",
    "ReferenceSettings",
    "ResidualSpectrum",
    "RunRecord",
    "StandardParameter",
    "TorqueFit",
]
