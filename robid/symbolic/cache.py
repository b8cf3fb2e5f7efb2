"""On-disk cache of generated code, keyed by a hash of everything the derivation depends on.

Location: ``$ROBID_CACHE_DIR`` if set, else ``~/.cache/robid``. One folder per key holding ``model.py``
(numpy functions), ``exact.py`` (rational evaluator), ``meta.json`` and, when a C compiler works, ``model_c.c``,
the portable ``model_c.so`` and the libraries built for one processor each, ``model_c-native-<cpu>.so`` with their
records ``model_c-native-<cpu>.json`` (robid.symbolic.cbuild: ``<cpu>`` hashes the processor's feature flags and
the compiler, so that a library never runs on a processor it was not built for). The deriving process builds
its processor's library with the entry; a process on another processor builds its own on first use
(:func:`native_library`, under the lock ``<key>-<native name>``), next to the entry's files and checked against
its own record, not ``meta.json``.

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

Lock modes (``$ROBID_CACHE_LOCK``):

- ``flock`` (default on POSIX): ``fcntl.flock`` on ``<key>.lock`` in the cache folder. The kernel releases it
  when its process dies, so a crashed derivation never blocks the others. The lock file is removed on release
  (a waiter checks, once it holds the lock, that the file it locked is still the one at that path). On Linux NFS
  clients flock is carried by NFS byte-range locks and works between machines, *unless* the file system is
  mounted with ``nolock`` or ``local_lock=flock|all``, where it is silently local to one machine; Lustre
  without ``-o flock`` and some FUSE and SMB mounts refuse it (then robid falls back to ``file`` with a note) or
  keep it local (``localflock``). On those, choose ``file``.
- ``file``: an ``O_CREAT | O_EXCL`` lock file ``<key>.xlock`` holding host, process id and time, refreshed
  every few seconds while its holder derives. A waiter breaks it when its holder is a dead process on the same
  host, or when it has not been refreshed for ``$ROBID_CACHE_STALE_LOCK`` seconds (default 60, measured on the
  waiter's clock, so clock skew between machines does not matter; opening the file revalidates an NFS client's
  cached attributes). Best effort: in a rare race two processes derive the same entry. Processes in the two
  modes do not exclude each other (distinct lock files): at worst both derive.

Whatever the lock does, the worst case is a duplicate derivation, never a corrupt entry: writes are atomic and
a complete valid entry is never replaced.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from robid import progress
from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.symbolic.cache_temporaries import remove_stale_temporaries, temporary_name
from robid.symbolic.cbuild import sha256

try:
    import fcntl
except ImportError:  # not POSIX: the lock-file mode only
    fcntl = None

_log = logging.getLogger(__name__)

GENERATOR_VERSION = "12"  # 9-10: batched C, native libraries per processor; 11-12: rows transposed in registers

#: seconds a process waits for another one deriving the same entry (``$ROBID_CACHE_LOCK_TIMEOUT``)
LOCK_TIMEOUT_S = 600.0
#: ``file`` lock mode: seconds without a refresh after which a lock file is abandoned (``$ROBID_CACHE_STALE_LOCK``)
STALE_LOCK_S = 60.0
_HEARTBEAT_S = 5.0
_POLL_S = 0.05
_REQUIRED_FILES = ("model.py", "exact.py")
_NO_HASHES = "written by an earlier robid, without content hashes"


class CacheLockTimeout(RobidInputError):
    """Another process held the lock of a cache entry longer than the timeout (``$ROBID_CACHE_LOCK_TIMEOUT``)."""


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
    """Write the entry's files (and, when a C compiler works, ``model_c.so``), record their hashes in
    ``meta.json`` (written last) and rename the folder into place. Call it holding :func:`entry_lock`."""
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
            from robid.symbolic.cbuild import compile_shared

            compile_shared(c_source, tmp)
        meta = json.loads(files.get("meta.json", "{}"))
        meta["files"] = {p.name: sha256(p) for p in sorted(tmp.iterdir()) if p.name != "meta.json"}
        meta["meta_sha256"] = _meta_hash(meta)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        _install(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def native_library(folder: Path, key: str) -> Path | None:
    """This processor's library of the valid entry ``folder`` (key ``key``), built on first use; None when native
    libraries are off or impossible here (no compiler, no processor identity, a read-only cache, a failed build):
    the portable ``model_c.so`` then serves. A library that does not match its record is reported and built
    again."""
    from robid.symbolic import cbuild

    name = cbuild.native_stem()
    if name is None or not (folder / "model_c.c").exists():
        return None
    so, problem = cbuild.checked_native(folder)
    if so is not None:
        return so
    try:
        with entry_lock(f"{key}-{name}"):
            so, problem = cbuild.checked_native(folder)  # built meanwhile by a process that held the lock
            if so is not None:
                return so
            if problem is not None:
                _log.warning(f"{folder}: native library {problem}: building it again")
            remove_stale_temporaries(folder.parent)  # a killed build's files
            with progress.stage(f"compiling the C regressors for this processor ({name})", _log):
                return cbuild.build_native(folder)
    except (OSError, RobidInputError) as e:  # a read-only or full cache, a lock not obtained in time
        _log.info(f"{folder}: no native library ({e}); the portable one serves")
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


# ---- the lock of one entry -----------------------------------------------------------------------------------------
def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise RobidInputError(f"{name}={text!r}: expected a number of seconds >= 0")
    return value


def lock_mode() -> str:
    """``$ROBID_CACHE_LOCK``: ``flock`` (default where ``fcntl`` exists) or ``file`` (see the module docstring)."""
    mode = os.environ.get("ROBID_CACHE_LOCK", "").strip().lower() or ("flock" if fcntl is not None else "file")
    if mode not in ("flock", "file"):
        raise RobidInputError(f"ROBID_CACHE_LOCK={mode!r}: expected 'flock' or 'file'")
    if mode == "flock" and fcntl is None:
        return "file"
    return mode


class _Waiter:
    """Sleeps between attempts; the first wait prints one progress line, the timeout raises."""

    def __init__(self, key: str, path: Path, timeout: float, mode: str):
        self.key, self.path, self.timeout, self.mode = key, path, timeout, mode
        self.t0 = time.monotonic()
        self.waited = False

    def __call__(self) -> None:
        elapsed = time.monotonic() - self.t0
        if elapsed >= self.timeout:
            hint = (
                "a derivation that takes longer, or a process that hangs: raise ROBID_CACHE_LOCK_TIMEOUT or stop it"
                if self.mode == "flock"
                else "if no robid process is deriving it, delete the lock file; ROBID_CACHE_LOCK_TIMEOUT sets the wait"
            )
            raise CacheLockTimeout(
                f"{self.path}: waited {elapsed:.1f} s for another process deriving cache entry {self.key} ({hint})"
            )
        if not self.waited:
            self.waited = True
            progress.report(f"waiting for another process deriving cache entry {self.key} (lock {self.path})")
        time.sleep(min(_POLL_S, max(self.timeout - elapsed, 0.0)))


class _FlockUnsupported(Exception):
    pass


def _flock_acquire(path: Path, wait: _Waiter) -> int:
    """Lock ``path`` with flock; the descriptor. Retries when the holder removed the file while this one waited."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    wait()
                except OSError as e:  # ENOLCK, EOPNOTSUPP, ENOSYS...: a file system without flock
                    raise _FlockUnsupported(e.strerror or str(e)) from None
            try:
                here = os.stat(path)
                mine = os.fstat(fd)
                if (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                    return fd
            except FileNotFoundError:
                pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the former holder removed this file on release: lock the one now at the path


def _flock_release(path: Path, fd: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # while still holding it: a waiter on this file sees it gone and retries
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _holder_is_dead(text: str) -> bool:
    """The lock file's holder is a process of this host that no longer exists."""
    parts = text.split()
    if os.name == "nt" or len(parts) < 2 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def _file_acquire(path: Path, wait: _Waiter, stale_after: float) -> str:
    """Create ``path`` exclusively; the token written into it. Breaks a stale lock file (module docstring)."""
    token = f"{socket.gethostname()} {os.getpid()} {time.time():.3f} {threading.get_ident()}\n"
    seen: tuple | None = None  # (inode, mtime, size) of the holder's file and when it was first seen so
    seen_since = 0.0
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            try:
                with open(path) as f:  # opening revalidates a network file system's cached attributes
                    s = os.fstat(f.fileno())
                    text = f.read()
            except FileNotFoundError:
                continue  # released meanwhile
            state = (s.st_dev, s.st_ino, s.st_mtime_ns, s.st_size)
            if state != seen:
                seen, seen_since = state, time.monotonic()
            if _holder_is_dead(text) or time.monotonic() - seen_since > stale_after:
                _log.warning(f"removing the stale lock {path} ({text.strip() or 'empty'})")
                with contextlib.suppress(FileNotFoundError):
                    here = os.stat(path)
                    if (here.st_dev, here.st_ino, here.st_mtime_ns) == state[:3]:
                        os.unlink(path)
                seen = None
                continue
            wait()
            continue
        with os.fdopen(fd, "w") as f:
            f.write(token)
        return token


@contextlib.contextmanager
def _heartbeat(path: Path, stale_after: float) -> Iterator[None]:
    """Refresh the lock file's time while its holder works, so that waiters do not take it for stale."""
    stop = threading.Event()
    period = min(_HEARTBEAT_S, max(stale_after / 4, _POLL_S))

    def beat():
        while not stop.wait(period):
            with contextlib.suppress(OSError):
                os.utime(path)

    thread = threading.Thread(target=beat, name=f"robid-cache-lock-{path.name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _file_release(path: Path, token: str) -> None:
    with contextlib.suppress(OSError):
        if path.read_text() == token:
            os.unlink(path)


@contextlib.contextmanager
def entry_lock(key: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of cache entry ``key`` (module docstring): one process derives, the others wait.

    ``timeout`` seconds (default ``$ROBID_CACHE_LOCK_TIMEOUT``, else :data:`LOCK_TIMEOUT_S`) before
    :class:`CacheLockTimeout`."""
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RobidInputError(
            f"{root}: cannot create the cache folder ({e.strerror or e}); set ROBID_CACHE_DIR"
        ) from None
    timeout = _env_seconds("ROBID_CACHE_LOCK_TIMEOUT", LOCK_TIMEOUT_S) if timeout is None else timeout
    path = root / f"{key}.lock"
    mode = lock_mode()
    stale_after = _env_seconds("ROBID_CACHE_STALE_LOCK", STALE_LOCK_S)
    wait = _Waiter(key, path, timeout, mode)
    try:
        if mode == "flock":
            try:
                fd = _flock_acquire(path, wait)
            except _FlockUnsupported as e:
                _log.warning(f"{root}: no flock on this file system ({e}); using lock files (ROBID_CACHE_LOCK=file)")
                with contextlib.suppress(OSError):
                    os.unlink(path)
                mode = "file"
        if mode == "file":
            path = wait.path = root / f"{key}.xlock"  # not the flock file: processes in either mode never break
            wait.mode = "file"  # each other's locks (at worst, both derive)
            token = _file_acquire(path, wait, stale_after)
    except OSError as e:
        raise RobidInputError(f"{path}: cannot lock the cache entry ({e.strerror or e}); set ROBID_CACHE_DIR") from None
    try:
        if mode == "flock":
            yield
        else:
            with _heartbeat(path, stale_after):
                yield
    finally:
        if mode == "flock":
            _flock_release(path, fd)
        else:
            _file_release(path, token)
