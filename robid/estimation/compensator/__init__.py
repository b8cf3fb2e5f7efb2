"""Identifiability of gravity compensators, arrays only (docs/compensator.md).

* :mod:`~robid.estimation.compensator.collinearity` -- which compensator parameters the data cannot tell from the
  gravity terms of their joint, and the combination that is well identified (section 3);
* :mod:`~robid.estimation.compensator.fixing` -- holding parameters at datasheet values, re-estimating the others,
  propagating the datasheet tolerance (section 4);
* :mod:`~robid.estimation.compensator.refinement` -- variable-projection refinement of a geometry the column is
  nonlinear in, with a separability check (section 5);
* :mod:`~robid.estimation.compensator.gas` -- the gas cylinder's p0 column and the physical region of its geometry.

No files and no robot objects: robid.identification.compensator_analysis wires these to an identification result.
"""

from robid.estimation.compensator.collinearity import (
    GRAVITY_KINDS,
    CollinearityReport,
    CombinedQuantity,
    CompensatorCollinearity,
    PartnerCorrelation,
    collinearity_report,
    combined_quantity,
    multiple_correlation,
)
from robid.estimation.compensator.fixing import FixedEstimate, ParameterChange, fix_parameters
from robid.estimation.compensator.gas import gas_cylinder_column, gas_volume_positive
from robid.estimation.compensator.refinement import (
    NonlinearParameter,
    NonlinearRefinement,
    refine_nonlinear_compensator,
    serial_inflation,
)

__all__ = [
    "GRAVITY_KINDS",
    "CollinearityReport",
    "CombinedQuantity",
    "CompensatorCollinearity",
    "FixedEstimate",
    "NonlinearParameter",
    "NonlinearRefinement",
    "ParameterChange",
    "PartnerCorrelation",
    "collinearity_report",
    "combined_quantity",
    "fix_parameters",
    "gas_cylinder_column",
    "gas_volume_positive",
    "multiple_correlation",
    "refine_nonlinear_compensator",
    "serial_inflation",
]
