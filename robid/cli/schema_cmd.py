"""``robid schema {robot,campaign,mapping,excitation} [--out FILE]``: the JSON Schema of a file kind, for editors
(docs/robot-file.md, "Editor support")."""

from __future__ import annotations

KINDS = ("robot", "campaign", "mapping", "excitation", "fleet")


def register(sub) -> None:
    p = sub.add_parser(
        "schema",
        help="JSON Schema of a robid file (robot, campaign, mapping, excitation SPEC) for editors",
        description="Print or write the JSON Schema (draft-07) of a robid input file, generated from the same "
        "definition the reader uses. Fields: docs/robot-file.md, docs/campaign.md, docs/mapping-file.md, "
        "docs/excitation-spec.md.",
    )
    p.add_argument("kind", choices=KINDS, help="the file kind")
    p.add_argument("--out", metavar="FILE", help="write it to FILE instead of printing it")
    p.set_defaults(func=run)


def run(args) -> int:
    from robid.io.files import write_atomic
    from robid.schemas import SCHEMAS
    from robid.schemas.generate import json_text

    text = json_text(SCHEMAS[args.kind])
    if args.out:
        write_atomic(args.out, text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0
