"""The measurement mapping file (YAML, ``robid_mapping: 1``): read by robid.io.mapping, documented in
docs/mapping-file.md (the reading itself: docs/signals.md section 2)."""

from __future__ import annotations

from robid.schemas.fields import Field, FileSchema, Says, mapping

#: unit names per signal (robid.io.mapping.UNITS holds their factors; a test checks they agree)
UNITS = {
    "time": ("s", "ms", "us", "ns"),
    "positions": ("rad", "deg", "rev", "m", "mm"),
    "velocities": ("rad/s", "deg/s", "rpm", "m/s", "mm/s"),
    "accelerations": ("rad/s^2", "deg/s^2", "m/s^2", "mm/s^2"),
    "torques": ("Nm", "mNm", "kNm", "N", "kN"),
    "currents": ("A", "mA"),
    "motor_positions": ("rad", "deg", "rev", "m", "mm"),
}

#: the signals a mapping may define, in the order of the canonical channels q, qd, qdd, tau, i, theta
SIGNALS = {
    "positions": "Link-side joint positions -> q (required).",
    "velocities": "Measured joint velocities -> qd.",
    "accelerations": "Measured joint accelerations -> qdd.",
    "torques": "Joint torques -> tau (this or currents is required).",
    "currents": "Motor currents -> tau through gains or torque_constants (instead of torques).",
    "motor_positions": "Motor positions -> theta (joint units).",
}

#: how a file is read; at the top these are the defaults of every signal, which may override them
READ_FIELDS = (
    Field("format", "string", "csv (delimited), text (whitespace separated) or mat (MATLAB v5).",
          enum=("csv", "text", "mat"), default=Says("from the file suffix")),
    Field("delimiter", "string", "Column delimiter, one character (csv).", default=","),
    Field("header", "boolean", "The first line (after skip_rows) names the columns.",
          default=Says("true for csv, false for text")),
    Field("skip_rows", "integer", "Lines skipped at the top.", minimum=0, default=0),
    Field("comment", "string", "Lines starting with it are ignored."),
    Field("values_per_sample", "integer", "The file is a flat list of numbers, this many per sample.", minimum=1),
)

_COLUMNS = "1-based column indices or header names; all (or omitted): every column of that file"


def _part_fields(signal: str) -> tuple[Field, ...]:
    unit = Field("", "string", "", enum=UNITS[signal])
    return (
        Field("file", "string", "Another file holding the signal, relative to the measurement's folder.",
              default=Says("the measurement file")),
        Field("variable", "string", ".mat variable, dotted path into structs (rec.act_pos_se_deg)."),
        Field("columns", "integer|string|list", f"Columns: {_COLUMNS}.", items=Field("", "integer|string", "")),
        Field("column", "integer|string|list", "The same as columns (one of them).",
              items=Field("", "integer|string", "")),
        Field("unit", "string|list", f"Unit ({', '.join(UNITS[signal])}), or a list with one per column.",
              enum=UNITS[signal], items=unit, default=UNITS[signal][0]),
        Field("scale", "list", "Factors per column (sign conventions), applied with the unit.",
              items=Field("", "number", "")),
        *READ_FIELDS,
    )


#: the fields of a signal group beyond those of a part
GROUP_FIELDS = (
    Field("parts", "list", "The signal assembled from parts, each a mapping of part fields (file, variable, "
          "columns, unit, scale, read options)."),
    Field("side", "string", "joint, or motor: q = N^-1 theta_motor, tau = N^T tau_motor (not for currents).",
          enum=("joint", "motor"), default="joint"),
    Field("offset", "list", "Added after conversion, one per joint (positions and motor_positions only).",
          unit="rad (m)", items=Field("", "number|string", "")),
    Field("delay", "number|string|list", "How late the channels were recorded against the time stamps, undone "
          "when the file is read (x(t) = x_rec(t + delay), band-limited interpolation; docs/mapping-file.md): "
          "one value for the signal, or a list with one per joint; a number in s or a string with s, ms, us or ns.",
          unit="s", items=Field("", "number|string", ""), default=0),
    Field("gains", "list", "currents only: joint torque per ampere, tau = K i (one of gains, torque_constants).",
          unit="N m/A", items=Field("", "number", "")),
    Field("gain_scale", "string", "currents with gains only: a drive-gain file of robid payload calibrate-gains "
          "(GAINS.yaml, relative to this file) whose scale multiplies the gains: tau = scale K i "
          "(docs/payload.md)."),
    Field("torque_constants", "list|string", "currents only: motor torque per ampere, a list or robot (the "
          "robot file's); tau = N^T (k_T i).", unit="N m/A", items=Field("", "number", ""), enum=("robot",)),
)

#: the fields of a part (one file or variable of a signal); ``time`` adds rate and start
PART_KEYS = {f.name for f in _part_fields("time")}
GROUP_KEYS = {f.name for f in GROUP_FIELDS}
READ_KEYS = {f.name for f in READ_FIELDS}
TIME_KEYS = PART_KEYS | {"rate", "start"}


def _group(signal: str) -> Field:
    part = Field("", "mapping", "One part of the signal.", children=_part_fields(signal),
                 see="those of the signal but parts, side, offset, gains, torque_constants")
    fields = tuple(f if f.name != "parts" else Field("parts", "list", f.description, items=part, min_items=1)
                   for f in GROUP_FIELDS)
    see = "" if signal == "positions" else f"those of positions, with unit {', '.join(UNITS[signal])}"
    return Field(signal, "mapping", SIGNALS[signal], children=_part_fields(signal) + fields,
                 required=signal == "positions", see=see)


TIME = mapping(
    "time", "The time stamps: a column (with its unit), or a rate without a column.",
    *_part_fields("time"),
    Field("rate", "number", "Sample rate when the file has no time column: t_k = start + k / rate.", unit="Hz",
          exclusive_minimum=0),
    Field("start", "number", "Time of the first sample with rate.", unit="s", default=0.0),
    required=True,
)

TRANSMISSION = mapping(
    "transmission", "The motor-to-joint matrix N: theta_motor = N q, tau_joint = N^T tau_motor.",
    Field("gear_ratios", "list|string", "Diagonal of N, a list or robot (the robot file's drive gear ratios).",
          items=Field("", "number", ""), enum=("robot",), default="robot"),
    Field("coupling", "list", "Extra entries [motor, joint, ratio], 1-based (a coupled wrist).",
          items=Field("", "list", "", length=3, items=Field("", "number", "")), default=[]),
    Field("matrix", "list", "N in full, a square list of lists (alone, without gear_ratios and coupling).",
          items=Field("", "list", "", items=Field("", "number", ""))),
)

MAPPING = mapping(
    "", "A robid measurement mapping.",
    Field("robid_mapping", "integer", "Schema version.", enum=(1,), required=True),
    Field("description", "string", "Free text."),
    Field("dof", "integer", "Checked against the robot.", minimum=1),
    *READ_FIELDS,
    TIME,
    *(_group(signal) for signal in SIGNALS),
    TRANSMISSION,
    Field("allow_constant", "list|string", "Channels allowed to be constant (q4; qd = every qd), a list or a "
          "comma-separated string.", items=Field("", "string", ""), default=[]),
    Field("allow_saturated", "list|string", "Torque or current channels allowed to sit at a limit.",
          items=Field("", "string", ""), default=[]),
    Field("design", "string", "A published design (.mat) the record executes once, relative to the mapping file."),
    Field("topic", "string", "ROS 2 bags only: the sensor_msgs/JointState topic to read (default: the bag's only "
          "JointState topic). With topic or joint_names, time and positions may be omitted: the bag's header "
          "stamps, positions, velocities and efforts (columns t, q1.., qd1.., effort1..) are the defaults "
          "(docs/mapping-file.md, \"ROS 2 bags\")."),
    Field("joint_names", "mapping", "ROS 2 bags only: bag joint name -> robot joint name, for names that do not "
          "match the robot's.", values=Field("", "string", "")),
)

SCHEMA = FileSchema("mapping", "robid measurement mapping", MAPPING, "docs/mapping-file.md",
                    "Where each signal of a measurement is, in which unit and on which side of the gears "
                    "(docs/mapping-file.md).")
