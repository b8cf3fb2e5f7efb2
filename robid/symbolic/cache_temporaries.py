"""Temporary files and folders of the derivation cache, and the clean-up of those a killed process left behind.

A cache entry is written under a temporary name and renamed into place (robid/symbolic/cache.py), and so is a
compiled library (robid/symbolic/cbuild.py). A process killed meanwhile (kill -9, out of memory, a
lost Dask worker) leaves its temporary behind: a folder of several hundred kB while the C compiler ran. The
names say whose they are -- ``.<stem>-<pid>-<...>-h<host tag>`` with the owner's process id and a tag of its
host -- so that :func:`remove_stale_temporaries` can remove them:

* at once, when the owner is a process of this host that no longer exists;
* after :data:`ORPHAN_AGE_S` (by the file's age), when it is not known to be dead: another host's process on a
  shared cache, or a name without a host tag (written by an earlier robid).

The sweep runs whenever a process writes to the cache (a new entry, a native library), over the whole cache: the
run after a killed one, which derives the entry again, removes the killed one's leftovers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import threading
import time
from pathlib import Path

#: a temporary whose owner is not known to be dead is removed after this long (s)
ORPHAN_AGE_S = 3600.0


def host_tag() -> str:
    """8 hex digits of this host's name (names may hold '-', which the temporary names use as separator)."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def temporary_name(stem: str, suffix: str = "") -> str:
    """A hidden name for a temporary of ``stem`` owned by this process and thread (module docstring)."""
    return f".{stem}-{os.getpid()}-{threading.get_ident()}-{time.time_ns()}-h{host_tag()}{suffix}"


def _owner(name: str) -> tuple[int | None, str | None]:
    """(pid, host tag) of a temporary name; (None, None) when the name does not say."""
    parts = name.split(".")[1].split("-") if name.startswith(".") else []
    if len(parts) < 5 or not parts[-1].startswith("h"):
        return None, None
    pid = parts[-4]
    return (int(pid), parts[-1][1:]) if pid.isdigit() else (None, None)


def _dead_here(pid: int) -> bool:
    """Whether ``pid`` is no process of this host (not: whether another host's process is)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by another user
        return False
    return False


def is_stale(path: Path, now: float | None = None) -> bool:
    """Whether the temporary ``path`` was left behind (module docstring)."""
    pid, host = _owner(path.name)
    if pid is not None and host == host_tag() and os.name != "nt" and _dead_here(pid):
        return True
    try:
        age = (time.time() if now is None else now) - path.lstat().st_mtime
    except OSError:
        return False
    return age > ORPHAN_AGE_S


def remove_stale_temporaries(root: Path) -> list[Path]:
    """Remove the stale temporaries in the cache ``root`` (entry folders at the top, native-library files inside
    the entries); the paths removed."""
    removed = []
    if not root.is_dir():
        return removed
    now = time.time()
    candidates = list(root.glob(".*-*"))
    for entry in root.iterdir():
        if entry.is_dir() and not entry.name.startswith("."):
            candidates += [p for p in entry.glob(".*-*") if p.suffix in (".so", ".json")]
    for path in candidates:
        if path.name.endswith((".lock", ".xlock")) or not is_stale(path, now):
            continue
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed
