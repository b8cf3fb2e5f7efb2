"""Every option a command's output names is one that command accepts (a message that says "allow it with
--allow-constant" from a command without that option sends the user nowhere).

:func:`unknown_options` finds the ``--option`` words of a command's output that its parser does not know; an
option after ``robid <command>`` in the same line is checked against that command instead (a message may send the
user to another command). ``robid`` checks its own output when ``ROBID_CHECK_OPTIONS`` is set (the test suite
sets it, so every command a test runs is checked): an unknown option is then an internal error, exit status 1,
naming the option and the command. Campaigns, the demo and fleets print the library's messages, which name the
command line's options; they are not checked (their messages should name the campaign file's fields: the
request layer of the issue "The house").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys

#: commands whose output is not checked (module docstring)
UNCHECKED = ("campaign", "demo", "fleet")

_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
_COMMAND = re.compile(r"\brobid ([a-z][a-z-]*)\b")


def enabled() -> bool:
    return bool(os.environ.get("ROBID_CHECK_OPTIONS"))


def accepted(parser: argparse.ArgumentParser) -> set[str]:
    """The long options of a parser and of its sub-parsers (without the leading dashes)."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(o[2:] for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                out |= accepted(child)
    return out


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def unknown_options(text: str, command: str, parser: argparse.ArgumentParser) -> list[str]:
    """``--option`` words of ``text`` (output of ``robid command``) that the command named before them on their
    line does not accept (module docstring)."""
    subs = commands(parser)
    out = []
    for line in text.splitlines():
        for match in _OPTION.finditer(line):
            named = [m.group(1) for m in _COMMAND.finditer(line[: match.start()]) if m.group(1) in subs]
            target = named[-1] if named else command
            if target in subs and match.group(1) not in accepted(subs[target]) | {"help"}:
                out.append(f"--{match.group(1)} (robid {target})")
    return out


@contextlib.contextmanager
def recorded():
    """Copies everything written to stdout and stderr into a buffer (yielded), passing it through."""
    buffer = io.StringIO()

    class Tee:  # not an io base class: isatty, fileno, encoding, ... are the stream's own (progress bars ask)
        def __init__(self, stream):
            self.stream = stream

        def write(self, text):
            buffer.write(text)
            return self.stream.write(text)

        def __getattr__(self, name):
            return getattr(self.stream, name)

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Tee(out), Tee(err)
    try:
        yield buffer
    finally:
        sys.stdout, sys.stderr = out, err
