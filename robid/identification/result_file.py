"""RESULT.json: write an identification result (interfaces.md section 5 plus robid extensions) and read it back.

Keys: ``robid`` (1), ``robot``, ``robot_source``, ``terms``, ``joints``, ``method`` (which estimator produced the
reported ``value``s), ``base_parameters`` [{name, expression, value, std, relative_std_percent, class,
nominal, correlated_with, unconstrained_value}], ``standard_parameters`` [{name, structural_class,
numerical_class, base_parameters, nominal, consistent_value}], ``correlated_pairs``, ``covariance``,
``estimation`` (the unconstrained estimator's summary), ``physical_consistency``, ``metrics`` {per_joint,
relative_error_norm_percent, samples}, ``validation`` [{file, per_joint, ...}], ``data`` [per file: samples,
mode, period, noise, dropped rows, processing account], ``thresholds``, ``notes``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.identification.compensator import compensator_section
from robid.identification.identify import IdentificationResult
from robid.io.files import read_json, write_atomic
from robid.io.processed_files import summary as signals_summary


def _num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def result_dict(r: IdentificationResult, reference: dict | None = None) -> dict:
    """JSON-ready result. ``reference`` ({"label": ..., "base_values": [...]}) adds e.g. the simulation truth."""
    base = r.base
    est = r.estimate
    ident = r.identifiability
    nominal = base.values(r.robot.parameters)
    std = est.std
    rel = 100.0 * std / np.maximum(np.abs(r.values), 1e-300)
    params = []
    for k, name in enumerate(base.names):
        pc = ident.by_name(name)
        entry = {
            "name": name,
            "expression": base.expressions[k],
            "value": _num(r.values[k]),
            "std": _num(std[k]),
            "relative_std_percent": _num(rel[k]),
            "class": pc.numerical_class,
            "nominal": _num(nominal[k]),
            "correlated_with": list(pc.correlated_with),
        }
        if r.values_method != est.method:
            entry["unconstrained_value"] = _num(est.values[k])
        if reference is not None:
            entry[reference["label"]] = _num(reference["base_values"][k])
        params.append(entry)
    standard = []
    cons = r.consistent
    for k, sc in enumerate(ident.standard):
        item = {
            "name": sc.name,
            "structural_class": sc.structural_class,
            "numerical_class": sc.numerical_class,
            "base_parameters": list(sc.base_parameters),
            "nominal": _num(r.robot.parameters[k]),
        }
        if cons is not None and cons.solved:
            item["consistent_value"] = _num(cons.values[k])
        standard.append(item)
    out = {
        "robid": 1,
        "robot": r.robot.name,
        "robot_source": r.robot.model.source,
        "terms": list(r.robot.terms),
        "joints": r.robot.joint_names,
        "method": r.values_method,
        "base_parameters": params,
        "standard_parameters": standard,
        "correlated_pairs": [
            {"first": p.first, "second": p.second, "correlation": _num(p.correlation)} for p in ident.correlated_pairs
        ],
        "covariance": [[_num(v) for v in row] for row in est.covariance],
        "estimation": est.to_dict(),
        "metrics": r.metrics.to_dict(),
        "validation": [{"file": f, **m.to_dict()} for f, m in r.validation],
        "data": [_data_entry(d) for d in r.datasets],
        "validation_data": [_data_entry(d) for d in r.validation_sets],
        "thresholds": {
            "poor_relative_std_percent": ident.thresholds.poor_relative_std_percent,
            "correlation": ident.thresholds.correlation_threshold,
        },
        "identifiability_notes": list(ident.notes),
        "processing": _processing_dict(r.options),
        "compensator": compensator_section(r),
        "notes": list(r.notes),
    }
    for m in out["metrics"]["per_joint"]:
        m["relative_error_percent"] = m["nrmse_percent"]
    if r.physical is not None:
        ph = r.physical
        out["physical_consistency"] = {
            "of": est.method,
            "consistent": ph.consistent,
            "solved": ph.solved,
            "statistically_compatible": ph.statistically_compatible,
            "mahalanobis": _num(ph.mahalanobis) if ph.mahalanobis is not None else None,
            "moved": [{"name": n, "value": _num(a), "nearest_consistent": _num(b)} for n, a, b in ph.moved],
            "notes": list(ph.notes),
        }
    if cons is not None:
        out["consistent_estimate"] = {
            "method": cons.method,
            "solved": cons.solved,
            "status": cons.status,
            "solver": cons.solver,
            "notes": list(cons.notes),
        }
    return out


def _processing_dict(o) -> dict:
    """The options needed to process other files exactly like the identification data (reports, validation)."""
    import dataclasses

    def plain(options):
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(options).items()}

    return {
        "options": plain(o.processing),
        "per_file": {f: plain(p) for f, p in o.file_processing.items()},
        "per_file_mapping": {f: str(m) for f, m in o.file_mapping.items() if m},
        "mapping": str(o.mapping) if o.mapping else None,
    }


def processing_options_from(data: dict, file: str | None = None):
    """ProcessingOptions stored in a RESULT.json for ``file`` (its own if recorded, else the common ones)."""
    from robid.signals import ProcessingOptions

    processing = data.get("processing") or {}
    stored = (processing.get("per_file") or {}).get(str(file)) if file is not None else None
    stored = stored or processing.get("options") or {}
    fields = {f for f in ProcessingOptions.__dataclass_fields__}
    kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in stored.items() if k in fields}
    return ProcessingOptions(**kwargs)


def _data_entry(d) -> dict:
    s = signals_summary(d.processed)
    s["file"] = d.source
    s["rows_used"] = d.rows_used
    s["notes"] = list(d.notes)
    return s


def write_result(path: str | Path, r: IdentificationResult, reference: dict | None = None) -> dict:
    data = result_dict(r, reference)
    write_atomic(path, json.dumps(data, indent=1, allow_nan=False) + "\n")
    return data


@dataclass(frozen=True)
class ResultFile:
    """What prediction and reports need from RESULT.json."""

    path: str
    data: dict
    robot: str
    terms: tuple[str, ...]
    joints: tuple[str, ...]
    names: tuple[str, ...]
    values: np.ndarray
    covariance: np.ndarray
    sigma: np.ndarray
    method: str


def read_result(path: str | Path) -> ResultFile:
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or data.get("robid") != 1:
        raise RobidInputError(f"{path}: not a robid RESULT.json (key robid: 1 missing)")
    try:
        params = data["base_parameters"]
        names = tuple(p["name"] for p in params)
        values = np.array([p["value"] for p in params], dtype=float)
        cov = np.array(data.get("covariance") or np.zeros((len(names), len(names))), dtype=float)
        sigma = np.array(data.get("estimation", {}).get("sigma_per_joint") or [], dtype=float)
        return ResultFile(
            path=str(path),
            data=data,
            robot=str(data.get("robot", "")),
            terms=tuple(data.get("terms", ())),
            joints=tuple(data.get("joints", ())),
            names=names,
            values=values,
            covariance=cov,
            sigma=sigma,
            method=str(data.get("method", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise RobidInputError(f"{path}: base_parameters: malformed ({exc})") from None
