"""The typed description of robid's input files, one source for the readers' allowed keys, the JSON Schema
files in ``schemas/`` and the field tables of the docs.

* robot files (``robid: 1``, docs/robot-file.md): :data:`robid.schemas.robot.ROBOT`
* campaign files (``robid_campaign: 1``, docs/campaign.md): :data:`robid.schemas.campaign.CAMPAIGN`
* measurement mappings (``robid_mapping: 1``, docs/mapping-file.md): :data:`robid.schemas.mapping.MAPPING`
* excitation design SPEC files (docs/excitation-spec.md): :data:`robid.schemas.excitation.SPEC`
* fleet files (``robid_fleet: 1``, docs/fleet.md): :mod:`robid.schemas.fleet`

``python -m robid.schemas`` rewrites ``schemas/*.schema.json`` and the docs tables; ``robid schema KIND`` prints
one schema. A leaf package: it imports nothing of robid outside itself.
"""

from __future__ import annotations

from robid.schemas import campaign, excitation, fleet, mapping, robot
from robid.schemas.fields import NO_DEFAULT, Field, FileSchema, Says

#: every file kind by name
SCHEMAS: dict[str, FileSchema] = {s.kind: s for s in (robot.SCHEMA, campaign.SCHEMA, mapping.SCHEMA,
                                                     excitation.SCHEMA, fleet.SCHEMA)}

__all__ = ["NO_DEFAULT", "SCHEMAS", "Field", "FileSchema", "Says"]
