"""The signal stage: reading measurements (canonical CSV or any layout through a mapping), validation,
resampling, periodic and non-periodic processing, data selection and noise estimates (docs/signals.md).

    from robid.signals import read_measurement, process
    m = read_measurement("run.csv", robot)                       # canonical CSV
    m = read_measurement("log.csv", robot, mapping="ur.yaml")   # any other layout
    p = process(m)                                               # ProcessedSignals
"""

from robid.signals.mapping import Mapping, parse_channel_list, read_mapping
from robid.signals.output import summary, write_processed_csv, write_summary_json
from robid.signals.processing import ProcessingOptions, process
from robid.signals.reading import read_measurement, read_trajectory_timing
from robid.signals.records import DroppedRow, DropRecord, Measurement, NoiseEstimate, ProcessedSignals
from robid.signals.validation import ValidationPolicy

ScreeningPolicy = ValidationPolicy  # TEMPORARY alias until the signals/io branch lands

__all__ = [
    "DropRecord",
    "DroppedRow",
    "Mapping",
    "Measurement",
    "NoiseEstimate",
    "ProcessedSignals",
    "ProcessingOptions",
    "ValidationPolicy",
    "parse_channel_list",
    "process",
    "read_mapping",
    "read_measurement",
    "read_trajectory_timing",
    "summary",
    "write_processed_csv",
    "write_summary_json",
]
