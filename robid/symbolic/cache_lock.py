"""The cache's folder and the lock of one cache entry (robid.symbolic.cache): one process derives, the others wait.

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
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from robid import progress
from robid.errors import RobidInputError

try:
    import fcntl
except ImportError:  # not POSIX: the lock-file mode only
    fcntl = None

_log = logging.getLogger(__name__)

#: seconds a process waits for another one deriving the same entry (``$ROBID_CACHE_LOCK_TIMEOUT``)
LOCK_TIMEOUT_S = 600.0
#: ``file`` lock mode: seconds without a refresh after which a lock file is abandoned (``$ROBID_CACHE_STALE_LOCK``)
STALE_LOCK_S = 60.0
_HEARTBEAT_S = 5.0
_POLL_S = 0.05


class CacheLockTimeout(RobidInputError):
    """Another process held the lock of a cache entry longer than the timeout (``$ROBID_CACHE_LOCK_TIMEOUT``)."""


def cache_dir() -> Path:
    """``$ROBID_CACHE_DIR`` if set, else ``~/.cache/robid``."""
    env = os.environ.get("ROBID_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "robid"

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
