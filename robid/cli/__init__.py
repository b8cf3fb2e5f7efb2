"""Command-line entry point: ``robid <command> ...``.

Each command lives in its own module ``robid/cli/<name>_cmd.py`` exposing ``register(subparsers)`` that adds
the sub-parser and sets ``func`` to a function taking the parsed arguments. Commands contain no numerics:
they parse, call the library, print. Exit codes (docs/interfaces.md section 4): 0 success; 2 bad input or usage,
one line ``robid: error: ...`` on stderr; 1 internal failure.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from robid.errors import RobidInputError, RobidOptionError

COMMAND_MODULES = (
    "robots",
    "model",
    "design",
    "export",
    "export_model",
    "simulate",
    "process",
    "identify",
    "predict",
    "report",
    "modal",
    "modal_fit",
    "campaign",
    "demo",
    "payload",
    "schema",
    "fleet",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one line
        sys.stderr.write(f"robid: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    from robid.version import __version__

    parser = _Parser(prog="robid", description="Dynamic model identification of industrial robots.")
    parser.add_argument("--version", action="version", version=f"robid {__version__}")
    _add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"robid.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"robid.cli.{name}_cmd":
                continue  # command not built yet
            raise
        module.register(sub)
    _add_verbosity_below(parser)
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, top: bool) -> None:
    """-v/--verbose (debug lines) and -q/--quiet (warnings only, no bars) on stderr; on the sub-commands too
    (``robid identify -v ...``), where an option string the command already has is left to it."""
    suffix, default = ("", 0) if top else ("_sub", argparse.SUPPRESS)
    options = {
        "log_verbose": (("-v", "--verbose"), "more detail on stderr: debug lines"),
        "log_quiet": (("-q", "--quiet"), "only warnings and errors on stderr: no step lines, no progress bars"),
    }
    for dest, (flags, text) in options.items():
        free = [f for f in flags if f not in parser._option_string_actions]
        if free:
            parser.add_argument(*free, action="count", default=default, dest=dest + suffix, help=text)


def _add_verbosity_below(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in {id(c): c for c in action.choices.values()}.values():
                _add_verbosity(child, top=False)
                _add_verbosity_below(child)


def _verbosity(args: argparse.Namespace) -> int:
    """-1 quiet, 0 step lines, 1 debug; a command's own --quiet (design, process) is quiet too."""
    verbose = getattr(args, "log_verbose", 0) + getattr(args, "log_verbose_sub", 0)
    quiet = getattr(args, "log_quiet", 0) + getattr(args, "log_quiet_sub", 0) + (getattr(args, "quiet", None) is True)
    return 1 if verbose > quiet else -1 if quiet else 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from robid.cli import option_audit

    if option_audit.enabled() and args.command not in option_audit.UNCHECKED:
        with option_audit.recorded() as output:
            code = _run(args)
        unknown = option_audit.unknown_options(output.getvalue(), args.command, parser)
        if unknown:
            sys.stderr.write(f"robid: internal: the output of robid {args.command} names options it does not "
                             f"accept: {', '.join(dict.fromkeys(unknown))}\n")
            return 1
        return code
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from robid import progress

    try:
        with progress.cli_output(_verbosity(args)):
            result = args.func(args)
    except RobidOptionError as exc:  # the library names the option's field: the command line's flag for it
        from robid.requests import Where

        sys.stderr.write(f"robid: error: {Where.command_line().words(exc)}\n")
        return 2
    except RobidInputError as exc:
        sys.stderr.write(f"robid: error: {exc}\n")
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("robid: interrupted\n")
        return 130
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
