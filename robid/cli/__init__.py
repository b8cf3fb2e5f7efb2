"""Command-line entry point: ``robid <command> ...``.

Each command lives in its own module ``robid/cli/<name>_cmd.py`` exposing ``register(subparsers)`` that adds
the sub-parser and sets ``func`` to a function taking the parsed arguments. Commands contain no numerics:
they parse, call the library, print. Exit codes (interfaces.md section 4): 0 success; 2 bad input or usage,
one line ``robid: error: ...`` on stderr; 1 internal failure.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from robid.errors import RobidInputError

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
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one line
        sys.stderr.write(f"robid: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    from robid import __version__

    parser = _Parser(prog="robid", description="Dynamic model identification of industrial robots.")
    parser.add_argument("--version", action="version", version=f"robid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"robid.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"robid.cli.{name}_cmd":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        result = args.func(args)
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
