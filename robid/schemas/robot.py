"""The robot file (YAML, ``robid: 1``): read by robid.model.yaml_reader and robid.model._yaml_sections, documented
in docs/robot-file.md (docs/interfaces.md section 1.1 is its design source)."""

from __future__ import annotations

from robid.schemas.fields import Field, FileSchema, Says, mapping, quantity, vector3

LIMITS = mapping(
    "limits", "Joint limits, all optional; used by excitation design (a SPEC's own limits win) and checks. With "
    "urdf or mjcf: each limit given replaces the file's (URDF <limit>, MJCF range and force ranges), the others are "
    "kept.",
    Field("position", "list", "[min, max] of q, min < max.", unit="rad (m)", length=2,
          items=Field("", "quantity", "", unit="rad (m)")),
    quantity("velocity", "Largest |qd|, > 0.", "rad/s (m/s)"),
    quantity("acceleration", "Largest |qdd|, > 0.", "rad/s^2 (m/s^2)"),
    quantity("jerk", "Largest |qddd|, > 0.", "rad/s^3 (m/s^3)"),
    quantity("torque", "Largest |tau| on the joint side, > 0; checked with the nominal inverse dynamics.",
             "N m (N)"),
    default={},
)

LINK = mapping(
    "link", "The body moved by this joint, in its body frame i (the frame after the joint, docs/model.md). With "
    "urdf or mjcf: each field given replaces the file's value (body frame i: the joint's child link frame, MJCF: the "
    "joint's body frame, with the links on fixed joints (bodies without joints) merged), the others are kept.",
    quantity("mass", "Mass, >= 0.", "kg", default=0.0),
    vector3("com", "Centre of mass.", "m", frame="body frame i", default=[0.0, 0.0, 0.0]),
    Field("inertia", "list",
          "Inertia about the COM, six numbers in the order [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]: tensor entries "
          "[[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] (products are the entries themselves, not their "
          "negatives). Must satisfy the triangle inequalities unless inertia_check is false.",
          unit="kg m^2", frame="axes of body frame i, about the COM", length=6,
          items=Field("", "quantity", "", unit="kg m^2"), default=[0.0] * 6),
    Field("inertia_check", "boolean",
          "false accepts an inertia that violates the rigid-body triangle inequalities (published sets kept "
          "verbatim).", default=True),
    default={},
)

COUPLING = mapping(
    "coupling", "A motor that also turns with joint K (coupled wrist): theta_m = gear_ratio q_J + ratio q_K.",
    Field("joint", "string", "Name of the other joint K (not this one).", required=True),
    quantity("ratio", "Motor turns per radian of K, not 0.", "1", required=True),
    quantity("viscous", "The motor's own viscous friction in joint-J units (fv_m r_J^2), >= 0.", "N m s/rad",
             default=0.0),
    quantity("coulomb", "The motor's own Coulomb friction in joint-J units (|r_J| fc_m), >= 0.", "N m",
             default=0.0),
)

DRIVE = mapping(
    "drive", "Motor and gear of the joint (optional); present adds the rotor term Ia_J.",
    quantity("gear_ratio", "Motor angle / joint angle, not 0.", "1", default=1.0),
    quantity("rotor_inertia", "Rotor inertia on the motor side, >= 0 (reflected: rotor_inertia gear_ratio^2).",
             "kg m^2", default=0.0),
    quantity("torque_constant", "Motor torque per ampere, not 0 (joint torque = current torque_constant "
             "gear_ratio); needed for current measurements.", "N m/A"),
    COUPLING,
)

SIGMOID = mapping(
    "", "One sigmoid of Gaz et al. 2019 eq. 3 (phi1, phi2, phi3).",
    quantity("amplitude", "a (phi1), >= 0.", "N m", required=True),
    Field("slope", "number", "b (phi2), > 0.", unit="s/rad", required=True),
    quantity("offset", "c (phi3).", "rad/s", default=0.0),
)

RIPPLE = mapping(
    "ripple", "Position-dependent Coulomb level: + r(q) sign(qd), r(q) = sum_k cos_k cos(h_k q) + sin_k sin(h_k q).",
    Field("harmonics", "list", "Harmonics h_k of the joint position, positive integers, each once.",
          items=Field("", "integer", "", minimum=1), min_items=1, required=True),
    Field("cos", "list", "a_k, one per harmonic.", unit="N m", items=Field("", "quantity", ""),
          default=Says("zeros")),
    Field("sin", "list", "b_k, one per harmonic.", unit="N m", items=Field("", "quantity", ""),
          default=Says("zeros")),
)

FRICTION = mapping(
    "friction", "Nominal drive-side friction in joint units (docs/model.md, \"Joint friction\"); the fields "
    "allowed depend on model. With urdf or mjcf: replaces the file's friction (URDF <dynamics damping friction>, "
    "MJCF damping and frictionloss) as a whole.",
    Field("model", "string", "Friction law.", enum=("linear", "stribeck", "sigmoid"), default="linear"),
    quantity("viscous", "fv, >= 0.", "N m s/rad", default=0.0),
    quantity("coulomb", "fc, >= 0 (not with the sigmoid model).", "N m", default=0.0,
             applies=("linear", "stribeck")),
    quantity("static", "fs, the level at rest, >= 0 (stribeck model, required).", "N m",
             applies=("stribeck",), required=True),
    quantity("stribeck_velocity", "vs, > 0 (stribeck model, required).", "rad/s", applies=("stribeck",),
             required=True),
    Field("sigmoids", "list", "One or more sigmoids (sigmoid model, required).", items=SIGMOID, min_items=1,
          applies=("sigmoid",), required=True),
    quantity("offset", "f0, a constant torque.", "N m", default=0.0),
    RIPPLE,
    discriminator="model",
    default={},
)

ELASTICITY = mapping(
    "elasticity", "Elastic joint (Spong model: rotor on the preceding body); present makes the joint elastic.",
    quantity("stiffness", "k between the motor position (divided by the gear ratio) and the link position, > 0.",
             "N m/rad", required=True),
    quantity("damping", "d, acts on qd - thetad, >= 0.", "N m s/rad", default=0.0),
    quantity("link_viscous", "Link-side viscous friction on qd, >= 0.", "N m s/rad", default=0.0),
)

CONTROLLER = mapping(
    "controller", "Motor-side PD gains in joint units, used by modal analysis and the virtual robot.",
    quantity("position_gain", "Kp, > 0.", "N m/rad", required=True),
    quantity("velocity_gain", "Kd, >= 0.", "N m s/rad", required=True),
)

COMPENSATOR = mapping(
    "compensator", "Gravity compensator (balancer) of the joint (docs/compensator.md); the fields allowed depend "
    "on type.",
    Field("type", "string", "spring: F = stiffness (free_length - l); gas: F = -p0 area (v0 / (v0 - area "
          "(l - l0)))^n; fourier: tau = sum_k b_k sin(k (q - symmetry_angle)).",
          enum=("spring", "gas", "fourier"), required=True),
    vector3("base_point", "Anchor on the previous body.", "m", frame="frame i-1", applies=("spring", "gas"),
            required=True),
    vector3("link_point", "Anchor on this joint's body.", "m", frame="body frame i", applies=("spring", "gas"),
            required=True),
    quantity("stiffness", "Spring stiffness, > 0.", "N/m", applies=("spring",), required=True),
    quantity("free_length", "Spring free length, > 0.", "m", applies=("spring",), required=True),
    quantity("area", "Piston area, > 0.", "m^2", applies=("gas",), required=True),
    quantity("p0", "Gas pressure at length l0.", "Pa", applies=("gas",), required=True),
    quantity("l0", "Reference length, > 0.", "m", applies=("gas",), required=True),
    quantity("v0", "Gas volume at l0, > 0.", "m^3", applies=("gas",), required=True),
    quantity("n", "Polytropic exponent (1 isothermal), > 0.", "1", applies=("gas",), default=1.0),
    Field("order", "integer", "Number of sine harmonics, 1 to 12.", minimum=1, maximum=12, applies=("fourier",),
          required=True),
    quantity("symmetry_angle", "q_s, the angle of odd symmetry.", "rad", applies=("fourier",), default=0.0),
    Field("coefficients", "list", "Nominal b_k, one per harmonic.", unit="N m", items=Field("", "quantity", ""),
          applies=("fourier",), default=Says("zeros")),
    discriminator="type",
)

JOINT = mapping(
    "", "One joint, base to tip, with the body it moves; with urdf or mjcf, the additions to one joint of that file.",
    Field("parent", "string", "Closed chains only: the earlier joint whose body carries this one, or base "
          "(docs/robot-file.md, \"Closed chains\"). Not with urdf or mjcf.", default=Says("the previous joint")),
    Field("name", "string", "Identifier (letters, digits, _), unique; names the parameters (m_A1, fv_A1, ...). "
          "With urdf or mjcf: the joint's name in that file with every other character replaced by _ (joint-3: "
          "joint_3; MJCF: every character but ASCII letters, digits and _; an unnamed MJCF joint takes its body's "
          "name).",
          required=True),
    Field("type", "string", "Joint type. Not with urdf or mjcf.", enum=("revolute", "prismatic"), default="revolute"),
    quantity("a", "DH a_i (mdh: a_{i-1}). Not with urdf or mjcf.", "m", default=0.0),
    quantity("alpha", "DH alpha_i (mdh: alpha_{i-1}). Not with urdf or mjcf.", "rad", default=0.0),
    quantity("d", "DH d_i (prismatic: the constant part of d). Not with urdf or mjcf.", "m", default=0.0),
    quantity("offset", "Revolute only: constant part of theta, theta = q + offset. Not with urdf or mjcf.", "rad",
             default=0.0),
    quantity("theta", "Prismatic only: constant theta. Not with urdf or mjcf.", "rad", default=0.0),
    LIMITS,
    LINK,
    DRIVE,
    FRICTION,
    ELASTICITY,
    CONTROLLER,
    COMPENSATOR,
)

#: the joint fields that place a joint by DH parameters: refused in a file with ``urdf`` (the URDF places it)
DH_JOINT_FIELDS = ("parent", "type", "a", "alpha", "d", "offset", "theta")

LOOP_END = mapping(
    "", "One frame of the closing pair: a point on one body of the loop.",
    Field("body", "string", "The joint whose body carries the frame.", required=True),
    vector3("xyz", "Origin of the frame: the point where the cut joint's axis crosses the loop's plane.", "m",
            frame="body frame of body", default=[0.0, 0.0, 0.0]),
)

LOOP = mapping(
    "", "A closed loop (docs/robot-file.md, \"Closed chains\"): its passive joints and closing pair of frames.",
    Field("name", "string", "Name of the loop (free text).", default=Says("loops[k]")),
    Field("kind", "string", "parallelogram: passive angles linear in the active ones (checked on the geometry); "
          "planar: any planar loop, solved numerically.", enum=("parallelogram", "planar"), required=True),
    Field("passive", "list", "The two passive joints the loop determines.", length=2, items=Field("", "string", ""),
          required=True),
    Field("close", "list", "The closing pair of frames, which coincide when the loop is assembled (at the zero pose "
          "of every joint, the robot file's assembly).", length=2, items=LOOP_END, required=True),
)

#: the fields of a joint entry in a file with ``urdf`` (docs/robot-file.md, "Starting from a URDF")
URDF_JOINT_FIELDS = tuple(k for k in JOINT.ordered_keys() if k not in DH_JOINT_FIELDS)

#: the top-level fields of DH files only
DH_TOP_FIELDS = ("kinematics",)

ROBOT = mapping(
    "", "A robid robot file.",
    Field("robid", "integer", "Schema version.", enum=(1,), required=True),
    Field("name", "string", "Robot name (free text).", default=Says("the file name")),
    Field("description", "string", "Free text, ignored."),
    vector3("gravity", "Gravity acceleration. With urdf or mjcf: replaces the file's (MJCF: <option gravity> in the "
            "frame of the body the chain hangs from; URDF: [0, 0, -9.81], rotated by the fixed joint from a "
            "link named world when there is one; the base frame is the URDF's base link).", "m/s^2",
            frame="base frame of the chain", default=[0.0, 0.0, -9.81]),
    Field("kinematics", "string", "dh: standard Denavit-Hartenberg; mdh: modified (Craig). Not with urdf or mjcf.",
          enum=("dh", "mdh"), default="dh"),
    Field("urdf", "string", "A URDF file (path relative to this file's folder) that gives the kinematics, the link "
          "inertias, the limits and the <dynamics> friction; joints then adds to its joints by name "
          "(docs/robot-file.md, \"Starting from a URDF\"). Meshes are not read."),
    Field("mjcf", "string", "An MJCF file (MuJoCo; path relative to this file's folder) that gives the kinematics, "
          "the link inertias, armature (rotor inertia), damping and frictionloss (friction), ranges and force ranges "
          "(limits) and gravity; joints then adds to its joints by name, as with urdf (docs/robot-file.md, "
          "\"Starting from a URDF\"). Meshes are not needed."),
    Field("joints", "list", "The joints, base to tip. With urdf or mjcf: optional, entries in any order, each naming "
          "a movable joint of that file once.", items=JOINT, min_items=1,
          default=Says("required without urdf or mjcf")),
    Field("loops", "list", "Closed loops (parallelogram arms, four-bar linkages): the joints they name are passive. "
          "Not with urdf or mjcf.", items=LOOP, min_items=1),
)

SCHEMA = FileSchema("robot", "robid robot file", ROBOT, "docs/robot-file.md",
                    "Robot description for robid: DH or modified DH kinematics, a URDF or an MJCF file, inertia, "
                    "drives, friction, elasticity, compensators (docs/robot-file.md).")
