"""On-disk cache of generated code, keyed by a hash of everything the derivation depends on.

Location: ``$ROBID_CACHE_DIR`` if set, else ``~/.cache/robid``. One folder per key holding ``model.py``
(numpy functions), ``exact.py`` (rational evaluator) and ``meta.json``. A folder is written under a temporary
name and renamed into place, so a crash never leaves a half-written entry.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

from robid.model.robot_model import RobotModel

GENERATOR_VERSION = "8"


def cache_dir() -> Path:
    env = os.environ.get("ROBID_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "robid"


def model_key(model: RobotModel, terms: tuple[str, ...]) -> str:
    """Hash of the kinematics, gravity, joint names, drives (rotor columns; gear ratios for the coupled rotor),
    coupled drives (partner joint and ratios, with the ``drive_coupling`` term), elastic joints (elastic layout),
    balancer geometry and terms.

    Not of the inertial, friction or balancer values: the same generated code serves any of them."""
    desc = {
        "generator": GENERATOR_VERSION,
        "gravity": [repr(float(g)) for g in model.gravity],
        "terms": list(terms),
        "joints": [
            {
                "name": j.name,
                "type": j.type,
                "geometry": repr(j.geometry),
                "drive": j.drive is not None,
                # the coupled rotor's columns carry 1/gear_ratio; the elastic layout depends on which joints are
                "gear_ratio": repr(j.drive.gear_ratio) if "rotor_coupled" in terms and j.drive else None,
                "elastic": j.elasticity is not None if "stiffness" in terms else None,
                "compensator": _compensator_shape(j.compensator),
            }
            for j in model.joints
        ],
    }
    if "drive_coupling" in terms:  # only then: the keys of models without coupled drives stay what they were
        desc["drive_couplings"] = [
            [j.name, j.drive.coupling.joint, repr(float(j.drive.coupling.ratio)), repr(float(j.drive.gear_ratio))]
            for j in model.joints
            if j.drive is not None and j.drive.coupling is not None
        ]
    text = json.dumps(desc, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _compensator_shape(c) -> str | None:
    """What of a balancer enters the regressor columns: type and geometry, not the identified values."""
    if c is None:
        return None
    fields = {
        "spring": ("base_point", "link_point"),
        "gas": ("base_point", "link_point", "area", "l0", "v0", "n"),
        "fourier": ("order", "symmetry_angle"),
    }[c.type]
    return repr((c.type, *(getattr(c, f) for f in fields)))


def entry_path(key: str) -> Path:
    return cache_dir() / key


def write_entry(key: str, files: dict[str, str], c_source: str | None = None) -> Path:
    """Write the entry's files (and, when a C compiler works, ``model_c.so``) and rename the folder into place."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text)
        if c_source is not None:
            from robid.symbolic.ccode import compile_shared

            compile_shared(c_source, tmp)
        if final.exists():
            shutil.rmtree(tmp)  # another process finished first; its entry is equivalent
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read_meta(key: str) -> dict | None:
    path = entry_path(key) / "meta.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
