"""The fleet file (YAML, ``robid_fleet: 1``): read by robid.fleet.spec, documented in docs/fleet.md.

A fleet lists robots (serial number, robot type, installation) and, per robot, dated identifications, each a
campaign: a campaign file or an inline campaign (the keys of :data:`robid.schemas.campaign.CAMPAIGN`, read by
the campaign reader, so that its messages are the campaign file's)."""

from __future__ import annotations

from robid.schemas.fields import Field, FileSchema, Says, mapping

#: what a serial number may hold: it names the robot's folder under --out
SERIAL_CHARS = "letters, digits, - _ ."

IDENTIFICATION = mapping(
    "", "One dated identification of the robot.",
    Field("date", "string", "ISO date of the identification (YYYY-MM-DD); its artefacts go to "
          "<out>/<serial>/<date>/.", required=True),
    Field("campaign", "string|mapping", "A campaign file (relative to the fleet file) or an inline campaign "
          "(the keys of a campaign file, docs/campaign.md; robid_campaign defaults to 1, name to "
          "\"identification\", robot to the robot's).", required=True),
)

ROBOT = mapping(
    "", "One robot of the fleet.",
    Field("serial", "string", f"Serial number ({SERIAL_CHARS}), unique in the fleet; names the robot's folder.",
          required=True),
    Field("robot", "string", "The robot type: a robot file (.yaml, .urdf; relative to the fleet file) or a "
          "built-in name. Robots of one type are compared with each other.", required=True),
    Field("installation", "string", "Where the robot stands (free text).", default=""),
    Field("identifications", "list", "The robot's dated identifications.", items=IDENTIFICATION, min_items=1,
          required=True),
)

FLEET = mapping(
    "", "A robid fleet file.",
    Field("robid_fleet", "integer", "Schema version.", enum=(1,), required=True),
    Field("name", "string", "Name of the fleet (report title).", default=Says("the file name")),
    Field("description", "string", "Free text, ignored."),
    Field("robots", "list", "The robots.", items=ROBOT, min_items=1, required=True),
)

SCHEMA = FileSchema("fleet", "robid fleet file", FLEET, "docs/fleet.md",
                    "Many robots and their dated identification campaigns (docs/fleet.md).")
