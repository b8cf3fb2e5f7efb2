"""Progress reporting: silent in library use; the CLI installs a printer on stderr."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import contextmanager

_callback: Callable[[str], None] | None = None


def set_progress(callback: Callable[[str], None] | None) -> None:
    global _callback
    _callback = callback


def stderr_printer(message: str) -> None:
    sys.stderr.write(f"robid: {message}\n")
    sys.stderr.flush()


def report(message: str) -> None:
    if _callback is not None:
        _callback(message)


@contextmanager
def stage(message: str):
    """Report the start and the duration of a stage."""
    report(f"{message} ...")
    t0 = time.perf_counter()
    yield
    report(f"{message}: done in {time.perf_counter() - t0:.1f} s")
