"""The campaign file (YAML, ``robid_campaign: 1``): read by robid.campaign.campaign_file, documented in
docs/campaign.md.

``processing`` and ``screening`` mirror the dataclasses robid.signals.ProcessingOptions and
robid.io.screening.ScreeningPolicy (the campaign reader checks their types with robid.record.codec);
tests/test_schemas.py checks that these fields and defaults equal the dataclasses'."""

from __future__ import annotations

from robid.defaults import (
    DEFAULT_FEEDFORWARD,
    DEFAULT_METHOD,
    DEFAULT_TORQUE_BAND,
    FEEDFORWARD_KINDS,
    METHODS,
    PROCESSING_MODES,
    TORQUE_BANDS,
)
from robid.schemas.excitation import SPEC
from robid.schemas.fields import Field, FileSchema, Says, mapping, names_list

FORMATS = ("csv", "krl", "rapid", "urscript")
FEEDFORWARD = FEEDFORWARD_KINDS
NOISE = ("none", "low", "realistic", "high")


def _processing(with_period: bool) -> Field:
    period = (Field("period", "number", "Excitation period (a measurement with a trajectory takes the "
                    "trajectory's).", unit="s", exclusive_minimum=0),) if with_period else ()
    return mapping(
        "processing", "Signal-stage options (robid.signals.ProcessingOptions, docs/signals.md)"
        + ("; these override the campaign's processing for this measurement." if with_period else
           "; a measurement's own processing block overrides them."),
        Field("mode", "string", "Signal path; auto chooses.",
              enum=PROCESSING_MODES, default="auto"),
        *period,
        Field("harmonics", "list", "Exactly the harmonics (1-based multiples of 1/T) to keep.",
              items=Field("", "integer", "", minimum=1)),
        Field("cutoff_hz", "number", "Keep every harmonic up to it (periodic) or the low-pass cut-off "
              "(non-periodic); neither this nor harmonics: chosen from the data.", unit="Hz"),
        Field("rate", "number", "Resample to this rate.", unit="Hz"),
        Field("start", "number", "Start of the time window used.", unit="s"),
        Field("end", "number", "End of the time window used.", unit="s"),
        Field("n_periods", "integer", "Periods used (default: all whole periods).", minimum=1),
        Field("derivatives", "integer", "Highest derivative of q computed.", minimum=2, maximum=4, default=2),
        Field("snr_threshold", "number", "Signal-to-noise ratio a harmonic must reach to be kept.", default=20.0),
        Field("filter_order", "integer", "Order of the low-pass filter (non-periodic path).", default=4),
        Field("decimate", "integer|string", "Decimation factor of the non-periodic path (1: every row), or auto: the "
              "largest factor keeping the rate at or above 5 times the cut-off.", default="auto"),
        Field("reject_periods", "boolean", "Leave out periods that differ from the others.", default=True),
        Field("min_speed", "number", "Rows with |qd| below it are not used (Coulomb friction is ill-defined near "
              "velocity reversals); 0 keeps every row. The same default as robid process / identify / payload.",
              unit="rad/s (m/s)", minimum=0, default=0.05),
        Field("torque_band", "string", "Harmonics of the averaged torque kept (periodic path).",
              enum=TORQUE_BANDS, default=DEFAULT_TORQUE_BAND),
        Field("drop_standstill", "boolean", "Leave out standstill segments.", default=False),
        Field("standstill_speed", "number", "Every joint slower than this is standstill.", unit="rad/s",
              default=0.01),
        Field("standstill_duration", "number", "Shortest standstill segment left out.", unit="s", default=0.5),
        Field("average_periods", "boolean", "One averaged period; false: every sample of the whole periods.",
              default=True),
        Field("position_step", "list", "Step of the logged positions per joint (default: the file's own).",
              unit="rad (m)", items=Field("", "number", "")),
        default={},
        see="those of `processing`, plus `period` (s)" if with_period else "",
    )


SCREENING = mapping(
    "screening", "How every measurement file is screened (robid.io.screening.ScreeningPolicy, docs/signals.md "
    "section 3).",
    Field("drop_bad_rows", "boolean", "Drop isolated bad rows (and record them) instead of refusing the file.",
          default=False),
    Field("max_bad_run", "integer", "Longest run of bad rows inside the recording that may be dropped.",
          default=3),
    Field("max_drop_fraction", "number", "Largest fraction of the rows that may be dropped.", default=0.05),
    Field("min_samples", "integer", "Fewest samples a file must keep.", default=32),
    Field("max_gap_factor", "number", "A time step longer than this many median steps is a break.", default=10.0),
    Field("saturation_run", "integer", "Consecutive samples at a channel's extreme that make it clipped.",
          default=10),
    Field("spike_factor", "number", "A position jump larger than this many median steps is a spike (0: off).",
          default=20.0),
    names_list("allow_constant", "Channels allowed to be constant (q4, tau2; a bare prefix such as qd: all).",
               default=[]),
    names_list("allow_saturated", "Torque or current channels allowed to sit at a limit.", default=[]),
    default={},
)

TRAJECTORY = mapping(
    "", "Exactly one of spec (a design) or file (an existing trajectory).",
    Field("spec", "mapping", "An excitation design SPEC (docs/excitation-spec.md), checked when the file is read.",
          children=SPEC.children, see="docs/excitation-spec.md"),
    Field("file", "string", "A robid TRAJ.json, or a published design run once (.mat), relative to the campaign "
          "file."),
    exactly_one=True,
)

EXPORT = mapping(
    "", "A controller program of a trajectory, checked by parse-back at the controller rate.",
    Field("trajectory", "string", "Name of a trajectory.", required=True),
    Field("format", "string", "Program format.", enum=FORMATS, required=True),
    Field("periods", "integer", "Periods in the program.", minimum=1, default=1),
    Field("rate", "number", "Sample rate of the program (default: the format's controller rate).", unit="Hz"),
)

SIMULATE = mapping(
    "simulate", "A run of the virtual robot (docs/simulation.md).",
    Field("trajectory", "string", "Name of a trajectory.", required=True),
    Field("periods", "integer", "Periods run.", minimum=1, default=2),
    Field("noise", "string", "Sensor noise preset (ignored when q_noise or tau_noise is given).", enum=NOISE,
          default="realistic"),
    Field("seed", "integer", "Seed of the noise.", default=0),
    Field("rate", "number", "Controller sample rate.", unit="Hz", default=250.0),
    Field("q_noise", "number", "Position noise standard deviation (instead of noise).", unit="rad", default=0.0),
    Field("tau_noise", "number", "Torque noise, a fraction of each joint's RMS torque (instead of noise).",
          default=0.0),
    applies=("simulate",),
)

MEASUREMENT = mapping(
    "", "A measurement: simulate (the virtual robot) or file (a real recording).",
    SIMULATE,
    Field("file", "string", "A measurement file or a folder of signal files, relative to the campaign file.",
          applies=("file",)),
    Field("mapping", "string", "Its mapping file (docs/mapping-file.md); none: the canonical CSV.",
          applies=("file",)),
    Field("trajectory", "string", "The trajectory it ran: its period and excited harmonics drive processing.",
          applies=("file",)),
    _processing(with_period=True),
    keyed_variants=("simulate", "file"),
)

IDENTIFICATION = mapping(
    "identification", "What is identified and validated, and how.",
    names_list("measurements", "Measurements identified on (at least one).", min_items=1, required=True),
    names_list("validation", "Measurements the model is validated on.", default=[]),
    Field("method", "string", "Estimator (docs/estimation.md); auto: eiv in the elastic layout, wls elsewhere.",
          enum=METHODS, default=DEFAULT_METHOD),
    names_list("terms", "Terms of identification when they differ from the campaign's (e.g. with stiffness, "
               "damping: the elastic layout).", default=Says("the campaign's terms; the elastic layout when "
                                                               "the robot declares springs and the measurements "
                                                               "hold motor positions")),
    Field("feedforward", "string", "idim-iv and didim: the controller's feed-forward.", enum=FEEDFORWARD,
          default=DEFAULT_FEEDFORWARD),
    Field("friction_models", "string|list", "Friction models compared per joint: auto (linear, stribeck, "
          "sigmoid where the problem is small enough), none, or a list of at least two of linear, stribeck, "
          "sigmoid.", items=Field("", "string", ""), default="auto"),
    Field("compare_methods", "list", "Other estimators scored on the validation runs.",
          items=Field("", "string", "", enum=METHODS), default=[]),
    required=True,
)

SIGMOID_FRICTION = mapping(
    "sigmoid_friction", "Sigmoid friction of Gaz et al. 2019, one value per joint in each list.",
    Field("phi1", "list", "Amplitudes.", unit="N m", items=Field("", "number", ""), required=True),
    Field("phi2", "list", "Slopes.", unit="s/rad", items=Field("", "number", ""), required=True),
    Field("phi3", "list", "Offsets.", unit="rad/s", items=Field("", "number", ""), required=True),
)

REFERENCE = mapping(
    "", "A published or nominal model scored on the same samples as the identified one.",
    Field("robot", "string", "Robot file (relative to the campaign file) or built-in name.", required=True),
    Field("parameters", "string", "Parameter file {name: value} replacing the robot's nominal values."),
    Field("armature", "list", "Reflected rotor inertias, one per joint (a URDF without drives).",
          unit="kg m^2", items=Field("", "number", "")),
    names_list("terms", "Terms of the reference model.", default=Says("all that apply")),
    Field("label", "string", "Name in the record and the report.", default=Says("the reference's name")),
    SIGMOID_FRICTION,
)

CAMPAIGN = mapping(
    "", "A robid campaign file.",
    Field("robid_campaign", "integer", "Schema version.", enum=(1,), required=True),
    Field("name", "string", "Folder-safe name (letters, digits, - _ .): artefacts go to trajectories/<name>/, "
          "measurements/<name>/, reports/<name>/.", required=True),
    Field("description", "string", "Free text, ignored."),
    Field("robot", "string", "Robot file (.yaml, .urdf; relative to the campaign file) or built-in name.",
          required=True),
    names_list("terms", "Model terms (docs/model.md).", default=Says("all that apply")),
    Field("trajectories", "mapping", "Excitation trajectories by name.", values=TRAJECTORY, default={}),
    Field("export", "list", "Controller programs.", items=EXPORT, default=[]),
    Field("measurements", "mapping", "Measurements by name.", values=MEASUREMENT, required=True),
    SCREENING,
    _processing(with_period=False),
    IDENTIFICATION,
    Field("references", "mapping", "Reference models by name.", values=REFERENCE, default={}),
    Field("report", "mapping|boolean", "The HTML report: {title: ...}, or false for none.",
          children=(Field("title", "string", "Report title.", default=Says("robid campaign <name>")),),
          default={}),
)

SCHEMA = FileSchema("campaign", "robid campaign file", CAMPAIGN, "docs/campaign.md",
                    "A scripted robid identification campaign (docs/campaign.md).")
