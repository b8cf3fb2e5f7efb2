"""Identification glue: measurement files + robot -> processed signals, base regressor, estimate, classes,
metrics, RESULT.json (interfaces.md section 5). Numerics live in robid.estimation and robid.signals."""

from robid.identification.datasets import DataSet, load_dataset
from robid.identification.identify import IdentificationOptions, IdentificationResult, identify
from robid.identification.result_file import ResultFile, read_result, write_result

__all__ = [
    "DataSet",
    "IdentificationOptions",
    "IdentificationResult",
    "ResultFile",
    "identify",
    "load_dataset",
    "read_result",
    "write_result",
]
