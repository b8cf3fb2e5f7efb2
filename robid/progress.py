"""Progress of long steps: messages through :mod:`logging`, progress bars through tqdm.

The library is silent by default: the ``robid`` logger (and its children, one per module:
``logging.getLogger(__name__)``) has only a :class:`logging.NullHandler`, and bars are off. An application that
wants the messages configures logging as usual (``logging.basicConfig(level=logging.INFO)``). The command line
calls :func:`cli_output`: a stderr handler printing ``robid: <message>``: the step lines (INFO) of the commands that
show them (:func:`show_steps`), only warnings with ``-q``, DEBUG lines too with ``-v``; and bars on stderr when
stderr is a terminal.

Bars: :func:`bar` is a context manager around one long loop (``total`` steps or simulated seconds); it yields a
:class:`Bar` whose ``update`` is a no-op unless bars are on and stderr is a terminal, so library code calls it
unconditionally. While a bar is shown, log lines go through ``tqdm.write`` and do not break it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

LOGGER_NAME = "robid"
logger = logging.getLogger(LOGGER_NAME)
logger.addHandler(logging.NullHandler())

_state = {"bars": False, "verbosity": 0, "open_bars": 0}


# ---- messages ------------------------------------------------------------------------------------------------------
def report(message: str, log: logging.Logger | None = None, level: int = logging.INFO) -> None:
    """Log ``message`` (a step line) on ``log`` (default: the ``robid`` logger)."""
    (log or logger).log(level, message)


@contextmanager
def stage(message: str, log: logging.Logger | None = None, level: int = logging.INFO):
    """Log the start and the duration of a stage."""
    report(f"{message} ...", log, level)
    t0 = time.perf_counter()
    yield
    report(f"{message}: done in {time.perf_counter() - t0:.1f} s", log, level)


class _StderrHandler(logging.Handler):
    """``robid: <message>`` on the current ``sys.stderr`` (looked up at every line, so that a replaced stderr,
    e.g. a test's capture, is honoured), through ``tqdm.write`` while a bar is open."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            stream = sys.stderr
            if _state["open_bars"]:
                from tqdm import tqdm

                tqdm.write(text, file=stream)
            else:
                stream.write(text + "\n")
            stream.flush()
        except Exception:  # logging's contract: a failing handler reports itself, never raises
            self.handleError(record)


@contextmanager
def cli_output(verbosity: int = 0, bars: bool = True):
    """The command line's output while a command runs: log lines on stderr at ``verbosity`` (-1 quiet: warnings
    only; 0: warnings, and the step lines once the command calls :func:`show_steps`; 1: everything down to DEBUG)
    and bars on a terminal (``bars``); all undone afterwards, so that library calls made later in the same process
    are silent again."""
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("robid: %(message)s"))
    saved_level, saved_state = logger.level, dict(_state)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity > 0 else logging.WARNING)
    _state.update(bars=bars and verbosity >= 0, verbosity=verbosity)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved_level)
        _state.update(bars=saved_state["bars"], verbosity=saved_state["verbosity"])


def show_steps() -> None:
    """A command's step lines (INFO) on stderr, unless ``-q`` (and with the DEBUG lines under ``-v``). A command
    that does not call it prints only warnings and errors by default (its error must stay the one line on stderr,
    and a cache-missing derivation would print first)."""
    if _state["verbosity"] == 0:
        logger.setLevel(logging.INFO)


# ---- bars ----------------------------------------------------------------------------------------------------------
def bars_shown() -> bool:
    """Whether a bar opened now would be drawn: bars on (the CLI) and stderr a terminal."""
    if not _state["bars"]:
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def _fixed_size(stream) -> tuple[int, int] | None:
    """None when the terminal reports its size (tqdm follows it), else 80 x 24: a terminal of unknown size (a bare
    pseudo-terminal reports 0 x 0, and tqdm would then draw nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 80, 24
    return None if size.columns > 0 and size.lines > 0 else (80, 24)


class Bar:
    """A progress bar over ``total`` (count or seconds); every method is a no-op when it is not shown."""

    def __init__(self, total: float, desc: str, unit: str = ""):
        self.total = total
        self._tqdm = None
        if bars_shown():
            from tqdm import tqdm

            count = "{n:.1f}/{total:.1f}" if isinstance(total, float) else "{n_fmt}/{total_fmt}"
            count += f" {unit}" if unit else ""
            fixed = _fixed_size(sys.stderr)
            self._tqdm = tqdm(
                total=total,
                desc=desc,
                file=sys.stderr,
                leave=False,
                mininterval=0,  # callers update at most a few hundred times (a step, a file, 0.5 % of a span)
                miniters=0,
                dynamic_ncols=fixed is None,  # follow a resized terminal
                ncols=fixed and fixed[0],
                nrows=fixed and fixed[1],
                bar_format="{desc}: {percentage:3.0f}%|{bar}| " + count + " [{elapsed}<{remaining}{postfix}]",
            )

    @property
    def enabled(self) -> bool:
        return self._tqdm is not None

    def update(self, n: float = 1) -> None:
        if self._tqdm is not None:
            self._tqdm.update(n)

    def advance_to(self, value: float) -> None:
        """Move to ``value`` (monotone: a smaller value is ignored)."""
        if self._tqdm is not None and value > self._tqdm.n:
            self._tqdm.update(min(value, self.total) - self._tqdm.n)

    def note(self, text: str) -> None:
        """A short status shown after the count (e.g. the best criterion so far)."""
        if self._tqdm is not None:
            self._tqdm.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None


@contextmanager
def bar(total: float, desc: str, unit: str = "") -> Iterator[Bar]:
    """A progress bar on stderr over ``total`` steps (an int) or simulated seconds (a float), shown only when the
    CLI turned bars on and stderr is a terminal."""
    b = Bar(total, desc, unit)
    _state["open_bars"] += b.enabled
    try:
        yield b
    finally:
        _state["open_bars"] -= b.enabled
        b.close()


def iterate(items: Iterable, desc: str, total: int | None = None, unit: str = "") -> Iterator:
    """``items`` with a bar (:func:`bar`) counting them."""
    items = list(items) if total is None else items
    with bar(len(items) if total is None else total, desc, unit) as b:
        for item in items:
            yield item
            b.update()


# ---- the earlier callback interface (kept for scripts, e.g. benchmarks/bench_excitation.py) -------------------------
_callback: dict = {"handler": None, "level": logging.NOTSET}


class _CallbackHandler(logging.Handler):
    def __init__(self, callback: Callable[[str], None]):
        super().__init__(logging.INFO)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        self.callback(record.getMessage())


def set_progress(callback: Callable[[str], None] | None) -> None:
    """Send the step lines (INFO and above) to ``callback``; None: stop. Prefer logging (or :func:`cli_output`)."""
    if _callback["handler"] is not None:
        logger.removeHandler(_callback["handler"])
        logger.setLevel(_callback["level"])
        _callback["handler"] = None
    if callback is not None:
        _callback.update(handler=_CallbackHandler(callback), level=logger.level)
        logger.addHandler(_callback["handler"])
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)


def stderr_printer(message: str) -> None:
    """A ``set_progress`` callback: ``robid: <message>`` on stderr."""
    sys.stderr.write(f"robid: {message}\n")
    sys.stderr.flush()
