"""On-disk cache of generated code, keyed by a hash of everything the derivation depends on.

Location: ``$ROBID_CACHE_DIR`` if set, else ``~/.cache/robid``. One folder per key holding ``model.py``
(numpy functions), ``exact.py`` (rational evaluator), ``meta.json`` and, when there is C code, its source
``model_c.c`` and the libraries compiled from it (robid.symbolic.cbuild), each with a record of its sha256:
``model_c-native-<cpu>.so`` for a processor (``<cpu>`` hashes the processor's feature flags and the compiler, so
that a library never runs on a processor it was not built for) and, only where no native library can be had, the
portable ``model_c-portable-<machine>.so``. Each library is built at the first call that needs one
(robid.dynamics.compiled: calls of at least 1000 samples; :func:`compiled_library`, under the lock
``<key>-<library name>``) and checked against its own record, not ``meta.json`` (entries written before
2026-11-29 also hold their deriving processor's library among their hashed files; they read as before). Generator 13
changed the layout (up to 12 the entry also held a portable ``model_c.so``, compiled with every derivation and not
loaded where the native library worked): the generator is part of the key, so an older entry is never read by
this robid (nor a newer one by an older robid), and the model is derived again under the new key.

The cache is safe to share between processes, on one machine or on a shared file system:

- **Atomic entries.** A folder is written under a temporary name and renamed into place, so a crash never leaves
  a half-written entry; the temporaries of a killed process are removed by the next writer (by owner process and
  age: robid/symbolic/cache_temporaries.py).
- **Checked entries.** ``meta.json`` records the sha256 of every other file of the entry (``files``) and of its
  own content (``meta_sha256``: the canonical JSON of the rest). :func:`lookup` checks them all; an entry with a
  missing file, a changed byte, an unreadable ``meta.json`` or no hashes (written by robid before they were
  added; the layout is otherwise unchanged, so ``GENERATOR_VERSION`` stays and such an entry is replaced in
  place) is not used. Under the lock it is reported (``cache entry <key> is corrupt (<what>): deriving it
  again``; ``stale`` for one without hashes), moved aside and removed, and the entry is derived again: a note,
  never a traceback.
- **One derivation per key.** :func:`entry_lock` serialises "look up, else derive and write" for one key: the
  first process derives, the others wait (one progress line), then find the entry and load it. Waiting longer
  than ``$ROBID_CACHE_LOCK_TIMEOUT`` seconds (default 600) raises :class:`CacheLockTimeout`, a
  :class:`RobidInputError` (the CLI prints one line, exit 2). A process that finds the entry valid takes no lock
  (a read-only cache works).

Lock modes (``$ROBID_CACHE_LOCK``, ``flock`` or ``file``): robid/symbolic/cache_lock.py.

Whatever the lock does, the worst case is a duplicate derivation, never a corrupt entry: writes are atomic and
a complete valid entry is never replaced.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import time
from pathlib import Path

from robid import progress
from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.symbolic.cache_lock import (  # noqa: F401 -- the lock's names, re-exported: robid.symbolic.cache.entry_lock
    LOCK_TIMEOUT_S,
    STALE_LOCK_S,
    CacheLockTimeout,
    cache_dir,
    entry_lock,
    lock_mode,
)
from robid.symbolic.cache_temporaries import remove_stale_temporaries, temporary_name
from robid.symbolic.cbuild import sha256

_log = logging.getLogger(__name__)

GENERATOR_VERSION = "13"  # 9-10: batched C, native libraries per processor; 11-12: rows transposed in registers;
# 13: no portable library in the entry (built on demand)

_REQUIRED_FILES = ("model.py", "exact.py")
_NO_HASHES = "written by an earlier robid, without content hashes"


def model_key(model: RobotModel, terms: tuple[str, ...]) -> str:
    """Hash of the kinematics, gravity, joint names, drives (rotor columns; gear ratios for the coupled rotor),
    coupled drives (partner joint and ratios, with the ``drive_coupling`` term), elastic joints (elastic layout),
    compensator geometry and terms.

    Not of the inertial, friction or compensator values: the same generated code serves any of them."""
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
    if model.chain is not None:  # only then: the keys of serial robots stay what they were
        desc["chain"] = _chain_shape(model.chain)
    text = json.dumps(desc, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _chain_shape(chain) -> dict:
    """What of a closed chain enters the generated code: the tree, the passive joints' geometry, the loops and the
    parallelogram relation (not the passive bodies' inertial values)."""
    return {
        "order": list(chain.order),
        "parents": list(chain.parents),
        "passive": [[j.name, j.type, repr(j.geometry)] for j in chain.passive],
        "loops": [repr(loop) for loop in chain.loops],
        "relation": None if chain.relation is None else [[repr(v) for v in row] for row in chain.relation],
    }


def _compensator_shape(c) -> str | None:
    """What of a compensator enters the regressor columns: type and geometry, not the identified values."""
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


# ---- checked entries -----------------------------------------------------------------------------------------------


def _meta_hash(meta: dict) -> str:
    """sha256 of meta.json's content without its own hash (canonical JSON: sorted keys, no spaces)."""
    rest = {k: v for k, v in meta.items() if k != "meta_sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


_VERIFIED: dict[str, tuple] = {}  # folder -> file signatures at the last successful check (one check per process)


def _signature(folder: Path, names) -> tuple:
    out = []
    for name in ("meta.json", *sorted(names)):
        s = os.stat(folder / name)
        out.append((name, s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns))
    return tuple(out)


def check_entry(folder: Path) -> tuple[dict | None, str | None]:
    """``(meta, None)`` for a valid entry, ``(None, None)`` when there is none, ``(None, what)`` when it is corrupt
    (``what`` says which file and how)."""
    if not folder.is_dir():
        return None, None
    try:
        text = (folder / "meta.json").read_bytes()
    except FileNotFoundError:
        return None, "meta.json missing"
    except OSError as e:
        return None, f"meta.json unreadable: {e.strerror or e}"
    try:
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None, "meta.json is not valid JSON"
    if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict) or "meta_sha256" not in meta:
        return None, _NO_HASHES
    if _meta_hash(meta) != meta["meta_sha256"]:
        return None, "meta.json does not match its content hash"
    if meta.get("key") != folder.name:
        return None, f"meta.json belongs to entry {meta.get('key')!r}"
    files = meta["files"]
    for name in _REQUIRED_FILES:
        if name not in files:
            return None, f"meta.json records no hash of {name}"
    try:
        signature = _signature(folder, files)
    except FileNotFoundError as e:
        return None, f"{Path(e.filename).name} missing"
    except OSError as e:
        return None, f"{Path(e.filename or 'a file').name} unreadable: {e.strerror or e}"
    if _VERIFIED.get(str(folder)) == signature:
        return meta, None
    for name, digest in sorted(files.items()):
        if Path(name).name != name:
            return None, f"meta.json names a file outside the entry: {name!r}"
        try:
            actual = sha256(folder / name)
        except FileNotFoundError:
            return None, f"{name} missing"
        except OSError as e:
            return None, f"{name} unreadable: {e.strerror or e}"
        if actual != digest:
            return None, f"{name} does not match its content hash"
    _VERIFIED[str(folder)] = signature
    return meta, None


def lookup(key: str, discard_corrupt: bool = False) -> tuple[Path, dict] | None:
    """The entry's folder and metadata when it exists and all its content hashes match, else None.

    ``discard_corrupt`` (only while holding :func:`entry_lock`): a corrupt entry is reported and removed, so that
    it can be derived again."""
    folder = entry_path(key)
    meta, problem = check_entry(folder)
    if meta is not None:
        return folder, meta
    if problem is not None and discard_corrupt:
        state = "stale" if problem == _NO_HASHES else "corrupt"
        _log.warning(f"cache entry {key} is {state} ({problem}): deriving it again")
        _discard(folder)
    return None


def read_meta(key: str) -> dict | None:
    """The metadata of a valid entry (content hashes checked), else None."""
    entry = lookup(key)
    return entry[1] if entry is not None else None


def _discard(folder: Path) -> None:
    """Move an entry aside (one rename, so a reader never sees it half-deleted), then delete it."""
    aside = folder.with_name(f".{folder.name}-corrupt-{os.getpid()}-{time.time_ns()}")
    try:
        os.replace(folder, aside)
    except FileNotFoundError:
        return
    except OSError as e:
        raise RobidInputError(
            f"{folder}: corrupt cache entry that cannot be moved aside ({e.strerror or e}); delete it, or set "
            "ROBID_CACHE_DIR to another folder"
        ) from None
    _VERIFIED.pop(str(folder), None)
    shutil.rmtree(aside, ignore_errors=True)


def write_entry(key: str, files: dict[str, str], c_source: str | None = None) -> Path:
    """Write the entry's files (and the C source ``model_c.c`` of ``c_source``; its libraries are built on first use,
    :func:`compiled_library`), record their hashes in ``meta.json`` (written
    last) and rename the folder into place. Call it holding :func:`entry_lock`."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    for path in remove_stale_temporaries(root):  # what killed writers left (robid/symbolic/cache_temporaries.py)
        _log.info(f"cache: removed {path.name}, left by a process that died while writing")
    final = root / key
    tmp = root / temporary_name(key)
    tmp.mkdir()  # not mkdtemp: the folder's mode follows the umask, so that a shared cache stays readable
    try:
        for name, text in files.items():
            if name != "meta.json":
                (tmp / name).write_text(text)
        if c_source is not None:
            from robid.symbolic.cbuild import write_source

            write_source(c_source, tmp)  # its libraries are built at the first call that needs one
        meta = json.loads(files.get("meta.json", "{}"))
        meta["files"] = {p.name: sha256(p) for p in sorted(tmp.iterdir()) if p.name != "meta.json"}
        meta["meta_sha256"] = _meta_hash(meta)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        _install(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def compiled_library(folder: Path, key: str, kind: str = "native") -> Path | None:
    """The ``kind`` library (``"native"``: this processor's; ``"portable"``) of the valid entry ``folder`` (key
    ``key``), built on first use; None when there is no such library here (native libraries off or impossible, no
    compiler, a read-only cache, a failed build). A library that does not match its record is reported and built
    again."""
    from robid.symbolic import cbuild

    name = cbuild.library_stem(kind)
    if name is None or not (folder / "model_c.c").exists():
        return None
    so, problem = cbuild.checked_library(folder, kind)
    if so is not None:
        return so
    try:
        with entry_lock(f"{key}-{name}"):
            so, problem = cbuild.checked_library(folder, kind)  # built meanwhile by a process that held the lock
            if so is not None:
                return so
            if problem is not None:
                _log.warning(f"{folder}: {kind} library {problem}: building it again")
            remove_stale_temporaries(folder.parent)  # a killed build's files
            target = "this processor" if kind == "native" else "any processor"
            with progress.stage(f"compiling the C regressors for {target} ({name})", _log):
                return cbuild.build_library(folder, kind)
    except (OSError, RobidInputError) as e:  # a read-only or full cache, a lock not obtained in time
        _log.info(f"{folder}: no {kind} library ({e})")
        return None


def _install(tmp: Path, final: Path) -> None:
    """Rename ``tmp`` to ``final``; a valid entry already there (a process that derived it too) is kept."""
    if final.exists():
        if check_entry(final)[0] is not None:
            shutil.rmtree(tmp)  # another process finished first; its entry is equivalent
            return
        _discard(final)
    try:
        os.replace(tmp, final)
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST) or check_entry(final)[0] is None:
            raise
        shutil.rmtree(tmp)  # written meanwhile by a process that did not wait for the lock


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
