"""The excitation design SPEC file (YAML) of ``robid design`` and of a campaign's ``trajectories.<name>.spec``:
read by robid.excitation.spec, documented in docs/excitation-spec.md (the method: docs/excitation.md)."""

from __future__ import annotations

from robid.schemas.fields import Field, FileSchema, Says, mapping, quantity, vector3


def _per_joint(name: str, description: str, unit: str) -> Field:
    return Field(name, "quantity|list", f"{description} One value for every joint, or a list with one per joint; "
                 "> 0.", unit=unit, items=Field("", "quantity", "", unit=unit))


LIMITS = mapping(
    "limits", "Limits of the design; each overrides the robot file's, which supplies what is not given. "
    "Position, velocity and acceleration must be known from one or the other.",
    Field("position", "list", "[min, max] per joint.", unit="rad (m)",
          items=Field("", "list", "", length=2, items=Field("", "quantity", ""))),
    _per_joint("velocity", "Largest |qd|.", "rad/s"),
    _per_joint("acceleration", "Largest |qdd|.", "rad/s^2"),
    _per_joint("jerk", "Largest |qddd|.", "rad/s^3"),
    _per_joint("torque", "Largest |tau| with the nominal inverse dynamics.", "N m"),
    default={},
)

PLANE = mapping(
    "", "A half space n . p >= offset.",
    vector3("normal", "n, not zero.", "1", frame="base frame", required=True),
    quantity("offset", "d.", "m", required=True),
)

CARTESIAN = mapping(
    "", "A point fixed in a body kept inside a box and above planes.",
    Field("name", "string", "Label in messages.", default=Says("<joint>-point<k>")),
    Field("body", "string|integer", "Joint name, or 1-based joint index, whose body carries the point.",
          required=True),
    vector3("point", "The point.", "m", frame="body frame of body", default=[0.0, 0.0, 0.0]),
    mapping("box", "Axis-aligned box; null entries are unbounded.",
            Field("min", "list", "Lower corner.", unit="m", length=3, items=Field("", "quantity|null", "")),
            Field("max", "list", "Upper corner.", unit="m", length=3, items=Field("", "quantity|null", "")),
            frame="base frame"),
    quantity("floor", "Shorthand for the plane z >= floor.", "m", frame="base frame"),
    Field("planes", "list", "Half spaces.", items=PLANE, frame="base frame"),
)

_CAPSULE_FIELDS = (
    Field("name", "string", "Label in messages.", default=Says("tool, or <joint>-link")),
    Field("body", "string|integer", "Joint name, or 1-based joint index, whose body carries it.", required=True),
    vector3("from", "One end of the segment.", "m", frame="body frame of body", default=[0.0, 0.0, 0.0]),
    vector3("to", "The other end.", "m", frame="body frame of body", default=Says("from")),
    quantity("radius", "Radius, > 0.", "m", required=True),
)
CAPSULE = mapping("", "A capsule fixed in a body: the points within radius of the segment from-to (from = to: a "
                  "sphere).", *_CAPSULE_FIELDS)

OBSTACLE = mapping(
    "", "A workspace obstacle: a plane to stay above, or an axis-aligned box to stay out of (one of them).",
    Field("name", "string", "Label in messages.", default=Says("obstacle<k>")),
    mapping("plane", "Stay in n . p >= offset.", vector3("normal", "n, not zero.", "1", frame="base frame",
                                                         required=True),
            quantity("offset", "d.", "m", required=True)),
    mapping("box", "Keep out of [min, max].", vector3("min", "Lower corner.", "m", frame="base frame", required=True),
            vector3("max", "Upper corner.", "m", frame="base frame", required=True)),
)

COLLISION = mapping(
    "collision", "Collision-aware design (docs/excitation.md, 'Collisions'): volumes kept apart in continuous time.",
    quantity("clearance", "Distance kept between any two volumes, >= 0.", "m", default=0.02),
    mapping("tool", "The tool volume, a capsule on a body.", *_CAPSULE_FIELDS),
    Field("links", "list", "The robot's own volumes (for self-collision and obstacles).", items=CAPSULE),
    Field("obstacles", "list", "Workspace obstacles.", items=OBSTACLE),
    Field("self_collision", "boolean", "Keep the tool and link capsules two or more joints apart from each other.",
          default=False),
)

SPEC = mapping(
    "", "An excitation design SPEC.",
    Field("description", "string", "Free text, ignored."),
    Field("harmonics", "integer", "H, the number of harmonics (>= 4 for rest_order 4, >= 5 for 6).", minimum=1,
          required=True),
    quantity("period", "T, > 0; the fundamental is 1/T Hz.", "s", required=True),
    Field("center", "list", "Mean pose, one value per joint, inside the position range narrowed by margin.",
          unit="rad (m)", items=Field("", "quantity", ""), default=Says("middle of the position range")),
    Field("rest_to_rest", "boolean", "Start and end each period at rest; false: a plain periodic series.",
          default=True),
    Field("rest_order", "integer", "m: the motion is C^m at start and end.", minimum=2, default=4),
    Field("criterion", "string", "Optimisation criterion (docs/excitation.md); cond_both minimises the "
          "column-scaled and the raw condition numbers together.",
          enum=("cond", "logdet", "cond_raw", "cond_both"), default="cond_both"),
    Field("raw_weight", "number", "cond_both only: weight of log cond_raw against log cond, > 0.",
          exclusive_minimum=0, default=1.0),
    Field("min_rms_velocity", "number", "Excitation floor: every joint's RMS velocity over the period at least "
          "this fraction of its reachable speed: the velocity limit, or the largest single-harmonic velocity "
          "amplitude the position range, acceleration and jerk limits allow in the period (Coulomb friction "
          "needs motion above the identification's min_speed); 0 turns it off.", minimum=0, exclusive_maximum=1,
          default=0.2),
    LIMITS,
    Field("seed", "integer", "Seed of the multi-start optimiser.", minimum=0, default=0),
    Field("margin", "number", "Safety margin, a fraction of each limit in [0, 0.5).", minimum=0, exclusive_maximum=0.5,
          default=0.05),
    Field("starts", "integer", "Number of optimiser starts.", minimum=1, default=4),
    Field("grid_points", "integer", "Criterion and constraint grid over one period.", minimum=8, default=250),
    Field("max_iterations", "integer", "SLSQP iterations per start.", minimum=1, default=150),
    Field("cartesian", "list", "Cartesian limits on points of the bodies.", items=CARTESIAN, default=[]),
    COLLISION,
)

SCHEMA = FileSchema("excitation", "robid excitation design SPEC", SPEC, "docs/excitation-spec.md",
                    "Excitation design options of robid design (docs/excitation-spec.md).")
