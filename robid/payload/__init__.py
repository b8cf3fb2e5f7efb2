"""Payload identification (``robid payload``, docs/payload.md): a short wrist excitation designed on the payload's
columns, the payload's ten inertial parameters (or mass and COM) from the torque it adds, with uncertainty, and
its export as controller load data."""

from robid.payload.body import PAYLOAD_PARAMETERS, PayloadBody
from robid.payload.design import PayloadDesign, PayloadDesignSettings, design_payload_excitation
from robid.payload.estimate import PayloadEstimate, estimate_payload
from robid.payload.export import FORMATS, render
from robid.payload.identify import identify_payload
from robid.payload.regressor import payload_regressor, with_payload

__all__ = [
    "FORMATS",
    "PAYLOAD_PARAMETERS",
    "PayloadBody",
    "PayloadDesign",
    "PayloadDesignSettings",
    "PayloadEstimate",
    "design_payload_excitation",
    "estimate_payload",
    "identify_payload",
    "payload_regressor",
    "render",
    "with_payload",
]
