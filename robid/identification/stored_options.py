"""The processing settings an identification record stores, and back (robid.record.ProcessingSettings): what it
takes to process another file the way identification processed its own -- the options of a known file, the common
ones without one file's timing for any other, the row screening and the reference models."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from robid.record.codec import from_plain, to_plain
from robid.record.identification import (
    ProcessingSettings,
    ReferenceSettings,
)
from robid.signals import ProcessingOptions


def processing_settings(o) -> ProcessingSettings:
    """What it takes to process other files like the identification data (IdentificationOptions ``o``)."""
    return ProcessingSettings(
        options=to_plain(o.processing),
        per_file={str(f): to_plain(p) for f, p in o.file_processing.items()},
        per_file_mapping={str(f): str(m) for f, m in o.file_mapping.items() if m},
        mapping=str(o.mapping) if o.mapping else None,
        screening=to_plain(o.policy),
        coulomb=o.coulomb,
        static_deflection=o.static_deflection,
        motor_encoders_only=o.motor_encoders_only,
        references=tuple(reference_settings(r) for r in o.references),
        friction_models=tuple(str(m) for m in o.friction_models),
        compare_methods=tuple(str(m) for m in o.compare_methods),
    )


def reference_settings(reference) -> ReferenceSettings:
    """What the record keeps of a reference model (robid.identification.references.ReferenceModel): the values
    that differ from its robot file's nominal ones."""
    robot = reference.robot
    nominal = np.asarray(robot.parameters, dtype=float)
    changed = {n: float(v) for n, v, w in zip(robot.parameter_names, reference.parameters, nominal, strict=True)
               if v != w}
    sigmoid = () if reference.sigmoid is None else tuple(tuple(float(v) for v in row) for row in reference.sigmoid)
    return ReferenceSettings(label=reference.label, robot=reference.source, terms=tuple(robot.terms),
                             parameters=changed, armature=tuple(float(a) for a in reference.armature),
                             sigmoid_friction=sigmoid)


def references_of(settings: ProcessingSettings) -> tuple:
    """The reference models a record names, loaded again (robid.identification.references.load_reference)."""
    from robid.identification.references import load_reference

    return tuple(load_reference(r.label, r.robot, parameters=dict(r.parameters), armature=r.armature or None,
                                terms=r.terms, where=f"RESULT.json processing.references[{k}]",
                                sigmoid_friction=dict(zip(("phi1", "phi2", "phi3"), r.sigmoid_friction, strict=True))
                                if r.sigmoid_friction else None)
                 for k, r in enumerate(settings.references))


def processing_options(settings: ProcessingSettings, file: str | None = None) -> ProcessingOptions:
    """The ProcessingOptions a record stores for ``file`` (a key of ``per_file``), else the common ones; a
    malformed entry is refused naming its key."""
    if file in settings.per_file:
        return from_plain(ProcessingOptions, settings.per_file[file], f"RESULT.json processing.per_file.{file}")
    return from_plain(ProcessingOptions, settings.options, "RESULT.json processing.options")


#: ProcessingOptions fields that describe one file's timing (its period, harmonics, window), not the method
FILE_TIMING = ("period", "period_source", "harmonics", "excited_harmonics", "n_periods", "start", "end", "design")


def options_for_file(record, path: str) -> tuple[ProcessingOptions, str | None, list[str]]:
    """(ProcessingOptions, mapping, notes) for processing ``path`` the way identification processed its files.

    A file identification knew (one of its runs, or a file with options of its own) is matched by its path as
    given to identification, else by the same resolved path, else by its file name when exactly one known file
    has it; it gets the options identification used for it. Any other file gets the common options without the
    timing fields (``FILE_TIMING``: a period or band found or given for other files says nothing about this
    one), and a note says so."""
    settings = record.processing
    known = list(dict.fromkeys([*settings.per_file, *(r.file for r in record.runs)]))
    resolved = Path(path).resolve()
    for found, how in (
        ([k for k in known if k == path], ""),
        ([k for k in known if Path(k).resolve() == resolved], "the same file"),
        ([k for k in known if Path(k).name == Path(path).name], "the same file name"),
    ):
        if len(found) == 1:
            key = found[0]
            notes = [f"processed with the options identification used for {key} ({how})"] if how else []
            return processing_options(settings, key), settings.per_file_mapping.get(key, settings.mapping), notes
    notes = [
        f"not a file of the identification ({', '.join(known)}): processed with its common options, without "
        "their period, band and time window"
    ]
    return without_file_timing(processing_options(settings)), settings.mapping, notes


def without_file_timing(options: ProcessingOptions) -> ProcessingOptions:
    """``options`` without the fields that describe one file's timing (``FILE_TIMING``): what another run -- a
    validation run, a file to predict -- is processed with, its period and band its own."""
    return dataclasses.replace(options, **({k: None for k in FILE_TIMING} | {"period_source": "user"}))


def screening_policy(settings: ProcessingSettings):
    """The row screening identification used (robid.io.screening.ScreeningPolicy), default where none is stored."""
    from robid.io.screening import ScreeningPolicy

    return from_plain(ScreeningPolicy, settings.screening, "RESULT.json processing.screening")


