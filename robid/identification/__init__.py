"""Identification glue: measurement files + robot -> processed signals, base regressor, estimate, classes,
metrics, and the identification record (robid.record; RESULT.json through robid.io.result_file). Numerics live in
robid.estimation and robid.signals."""

from robid.identification.datasets import DataSet, load_dataset
from robid.identification.identify import Identification, IdentificationOptions, identify, run_identification
from robid.identification.run_records import held_out_run
from robid.identification.stored_options import processing_options

__all__ = [
    "DataSet",
    "Identification",
    "IdentificationOptions",
    "held_out_run",
    "identify",
    "load_dataset",
    "processing_options",
    "run_identification",
]
