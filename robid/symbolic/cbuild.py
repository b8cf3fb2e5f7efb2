"""Compiling the generated C (robid.symbolic.ccode) into shared libraries, each built on first use next to the
cache entry's source ``model_c.c``: the one for this processor and, only when that one cannot be had, the portable
one.

No sympy here: a process that finds its cache entry loads (and, on a new processor, builds) the library without
the symbolic stack.

- **Native** (``model_c-native-<cpu>.so``): ``-march=native`` adds the processor's vector units (AVX2 and FMA, or
  AVX-512, where the batched functions use them). ``<cpu>`` is a hash of :func:`cpu_identity` (the compiler and
  its version, the architecture, the processor's model and every feature flag of ``/proc/cpuinfo``), so a shared
  cache never hands a library to a processor it was not built for: another processor finds no library under its
  own name and builds one. ``ROBID_NATIVE=0`` turns native libraries off.
- **Portable** (``model_c-portable-<machine>.so``): ``-O3 -fno-math-errno``, the compiler's default target, any
  processor of the architecture ``<machine>``. Built only when it is asked for (``ROBID_BACKEND=portable``) or
  when no native library can be built or loaded (native libraries off, no processor identity, a failed build): a
  process whose native library works never compiles it (before generator 13 the entry carried it, built with
  the entry and never loaded where the native one worked: half of every derivation's compiling).

Each library has a record ``<name>.json`` (its sha256, flags and, for a native one, the identity it was built
for) written after it; a library whose hash does not match its record is not loaded.

Every build is IEEE arithmetic: no ``-ffast-math`` (``-fno-math-errno`` only lets sqrt vectorise). When the
batched source does not compile (a compiler without vector extensions), it is built in its scalar form
(``-DROBID_SCALAR_ONLY``); when nothing compiles there is no library and the numpy code serves.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

#: flags of every build: IEEE arithmetic (no fast-math); errno not set by sqrt, so that sqrt vectorises
COMMON_FLAGS = ("-O3", "-fno-math-errno", "-fPIC", "-shared")
#: the portable library: the compiler's default target, any processor of the architecture
PORTABLE_FLAGS = COMMON_FLAGS
#: a library for this processor only (named by :func:`cpu_key`)
NATIVE_FLAGS = (*COMMON_FLAGS, "-march=native")
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "flags", "Features", "CPU implementer", "CPU part")


def compiler() -> str | None:
    for cc in ("cc", "gcc", "clang"):
        path = shutil.which(cc)
        if path:
            return path
    return None


def build(c_path: Path, so_path: Path, flags) -> bool:
    """Compile ``c_path`` into ``so_path`` with ``flags``; False (and no file) when no compiler works. A source the
    compiler refuses is tried once more in its scalar form (``-DROBID_SCALAR_ONLY``)."""
    cc = compiler()
    if cc is None:
        return False
    for extra in ((), ("-DROBID_SCALAR_ONLY",)):
        try:
            subprocess.run(
                [cc, *flags, *extra, "-o", str(so_path), str(c_path), "-lm"],
                check=True,
                capture_output=True,
                timeout=900,
            )
            return True
        except (OSError, subprocess.SubprocessError):
            so_path.unlink(missing_ok=True)
    return False


def write_source(source: str, folder: Path, stem: str = "model_c") -> Path:
    """Write the C source ``folder/<stem>.c`` (part of the cache entry; its libraries are built on first use)."""
    c_path = folder / f"{stem}.c"
    c_path.write_text("#include <math.h>\n\n" + source)
    return c_path


@functools.lru_cache(maxsize=1)
def cpu_identity() -> str | None:
    """What a ``-march=native`` library depends on (:func:`identity_from` of this machine). None where it cannot be
    read: no native build."""
    cc = compiler()
    if cc is None:
        return None
    try:
        text = Path("/proc/cpuinfo").read_text()
        version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return identity_from(text, cc, version, platform.machine())


def identity_from(cpuinfo: str, cc: str, version: str, machine: str) -> str | None:
    """Canonical JSON of the compiler (path, first line of ``--version``), the architecture, and the processor's
    vendor, family, model and sorted feature flags from ``/proc/cpuinfo`` text (x86 ``flags``, Arm ``Features``);
    None without feature flags."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in _CPU_FIELDS and key not in fields:  # the first processor's (all are alike on one machine)
            fields[key] = " ".join(sorted(value.split())) if key in ("flags", "Features") else value.strip()
    if not (fields.get("flags") or fields.get("Features")):
        return None
    head = version.splitlines()[0] if version else ""
    return json.dumps({"compiler": cc, "version": head, "machine": machine, **fields}, sort_keys=True)


def cpu_key() -> str | None:
    """16 hex digits of the sha256 of :func:`cpu_identity`; None: no native library on this machine."""
    identity = cpu_identity()
    return hashlib.sha256(identity.encode()).hexdigest()[:16] if identity else None


def native_stem(stem: str = "model_c") -> str | None:
    """``<stem>-native-<cpu key>``, or None when native libraries are off (``ROBID_NATIVE=0``) or impossible."""
    if os.environ.get("ROBID_NATIVE", "").strip().lower() in ("0", "no", "false", "off"):
        return None
    key = cpu_key()
    return f"{stem}-native-{key}" if key else None


def portable_stem(stem: str = "model_c") -> str:
    """``<stem>-portable-<machine>``: the architecture in the name, so that a cache shared between architectures
    never hands one architecture's library to another."""
    machine = re.sub(r"[^A-Za-z0-9_]", "_", platform.machine()) or "unknown"
    return f"{stem}-portable-{machine}"


def library_stem(kind: str, stem: str = "model_c") -> str | None:
    """The name (without suffix) of the ``kind`` library, ``"native"`` or ``"portable"``; None: no such library
    here."""
    return native_stem(stem) if kind == "native" else portable_stem(stem)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def checked_library(folder: Path, kind: str, stem: str = "model_c") -> tuple[Path | None, str | None]:
    """``(library, None)`` when the ``kind`` library (``"native"``, ``"portable"``) exists and matches its record;
    ``(None, None)`` when there is none; ``(None, what)`` when it is corrupt."""
    name = library_stem(kind, stem)
    if name is None:
        return None, None
    so, record = folder / f"{name}.so", folder / f"{name}.json"
    if not record.exists():
        return None, None  # not built yet, or its build is not finished (the record is written last)
    try:
        meta = json.loads(record.read_text())
        ok = isinstance(meta, dict) and meta.get("sha256") == sha256(so)
    except FileNotFoundError:
        return None, f"{so.name} missing"
    except (OSError, ValueError) as e:
        return None, f"{record.name} unreadable ({e})"
    return (so, None) if ok else (None, f"{so.name} does not match the hash in {record.name}")


def checked_native(folder: Path, stem: str = "model_c") -> tuple[Path | None, str | None]:
    """:func:`checked_library` of this processor's library."""
    return checked_library(folder, "native", stem)


def build_library(folder: Path, kind: str, stem: str = "model_c") -> Path | None:
    """Compile ``folder/<stem>.c`` into the ``kind`` library ``folder/<name>.so`` (:func:`library_stem`) and write
    its record ``<name>.json``; both go under temporary names first and are renamed into place, the record last.
    None when there is no such library here or the build fails."""
    name = library_stem(kind, stem)
    if name is None:
        return None
    from robid.symbolic.cache_temporaries import temporary_name

    tag = temporary_name(name)  # owner process and host in the name: a killed build's files are swept
    tmp_so, tmp_record = folder / f"{tag}.so", folder / f"{tag}.json"
    flags = NATIVE_FLAGS if kind == "native" else PORTABLE_FLAGS
    try:
        if not build(folder / f"{stem}.c", tmp_so, flags):
            return None
        record = {"sha256": sha256(tmp_so), "flags": list(flags), "machine": platform.machine()}
        if kind == "native":
            record["cpu"] = json.loads(cpu_identity())
        tmp_record.write_text(json.dumps(record, indent=1))
        os.replace(tmp_so, folder / f"{name}.so")
        os.replace(tmp_record, folder / f"{name}.json")
    except OSError:
        return None
    finally:
        tmp_so.unlink(missing_ok=True)
        tmp_record.unlink(missing_ok=True)
    return folder / f"{name}.so"
