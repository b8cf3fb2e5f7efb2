"""``python -m robid.schemas [--root DIR] [--check]``: write ``schemas/*.schema.json`` and the generated field
tables of the docs pages from the typed definitions (run from the repository root after changing a reader)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robid.schemas.generate import write_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robid.schemas", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root (default: the current folder)")
    parser.add_argument("--no-docs", action="store_true", help="write the schema files only")
    args = parser.parse_args(argv)
    if not (args.root / "docs").is_dir() and not args.no_docs:
        sys.stderr.write(f"{args.root}: no docs/ folder; run from the repository root or give --root or --no-docs\n")
        return 2
    for path in write_all(args.root, docs=not args.no_docs):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
