"""The signal stage: a canonical measurement in, processed signals out -- resampling, periodic and non-periodic
processing, band choice, data selection and noise estimates (docs/signals.md). Arrays and records only:
measurement files are read by :mod:`robid.io.measurement_file` and processed signals written by
:mod:`robid.io.processed_files`.

    from robid.io.measurement_file import read_measurement
    from robid.signals import process
    m = read_measurement("run.csv", robot)                       # canonical CSV
    m = read_measurement("log.csv", robot, mapping="ur.yaml")   # any other layout
    p = process(m)                                               # ProcessedSignals
"""

from robid.signals.processing import ProcessingOptions, process
from robid.signals.records import DroppedRow, DropRecord, Measurement, NoiseEstimate, ProcessedSignals

__all__ = [
    "DropRecord",
    "DroppedRow",
    "Measurement",
    "NoiseEstimate",
    "ProcessedSignals",
    "ProcessingOptions",
    "process",
]
