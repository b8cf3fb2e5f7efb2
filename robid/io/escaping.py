"""Untrusted text as inert data in what robid generates: one function per target language.

A user's strings (robot and joint names, file paths, titles, dates, a TRAJ.json's ``design`` block) reach
generated Python and C sources, controller programs (KRL, RAPID, URScript), CSV comment lines, URDF/XML, YAML
and HTML. Each target gets its text through the function here made for it, and nowhere else:

==================  =====================================================  ====================================
target              where user text goes                                   function
==================  =====================================================  ====================================
any line comment    KRL ``;``, RAPID ``!``, URScript / YAML / CSV ``#``    :func:`comment_line` (ASCII, 1 line)
Python              the module docstring                                   :func:`python_docstring`
Python              a string literal                                       :func:`python_string`
C                   the leading ``/* ... */`` comment                       :func:`c_comment`
XML (URDF)          a comment; element text and attributes                 :func:`xml_comment`, :func:`xml_text`
HTML                every value (Jinja2 autoescape; ``html.escape``)       (robid.report)
JSON, YAML data     values (``json.dumps``; ``yaml.safe_dump``)            (the serialisers escape)
identifiers         generated code and program names                       :func:`check_identifier`
==================  =====================================================  ====================================

The rule behind them: a comment can only be left by a line end (or ``*/``, ``-->``), a string only by its
quote or a line end, so every character that could end a line -- ``\\n``, ``\\r``, the other C0/C1 controls,
U+0085, U+2028, U+2029 -- and every other non-printable character is written as its escape text (``\\n``,
``\\u2028``), quotes and backslashes are escaped where they mean something, and a comment terminator is split.
Identifiers in generated code are never made from user text: they are robid's own names (``q1``, ``t12``,
``robid_inverse_dynamics``); a name a user may choose (``--prefix``, a joint name) must match
:data:`IDENTIFIER` or is refused. A leaf module like :mod:`robid.io.files`: any layer may use it.
"""

from __future__ import annotations

import re
import unicodedata

from robid.errors import RobidInputError

#: the identifiers robid writes into generated code and controller programs: ASCII letters, digits, _
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\0"}


def _visible(ch: str) -> str:
    """``ch`` itself when it is printable and cannot end a line, else its escape text."""
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if unicodedata.category(ch)[0] in "CZ" and ch != " ":  # controls, format, separators (U+2028/9), ...
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return ch


def one_line(text: object) -> str:
    """``text`` as one line of printable characters: every line end and non-printable character written as its
    escape text (``a\\nb`` for a newline, ``\\u2028``, ``\\0``); letters of any script are kept."""
    return "".join(_visible(ch) for ch in str(text))


def ascii_line(text: object) -> str:
    """:func:`one_line` in ASCII: other characters as ``\\xe9``, ``\\u20ac`` (controller editors read ASCII)."""
    return one_line(text).encode("ascii", "backslashreplace").decode("ascii")


def comment_line(text: object) -> str:
    """The text of a comment that runs to the end of its line (KRL ``;``, RAPID ``!``, URScript, YAML and CSV
    ``#``): one ASCII line, so nothing after the comment marker can start a statement."""
    return ascii_line(text)


def python_docstring(text: str) -> str:
    """The body of a ``\"\"\"...\"\"\"`` docstring holding ``text`` (its ``\\n`` kept as line breaks): every line
    made :func:`one_line`, backslashes and double quotes escaped, so the literal's value is the text as shown and
    no quote can close it."""
    lines = (one_line(line) for line in str(text).split("\n"))
    return "\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)


def python_string(text: object) -> str:
    """A Python string literal (ASCII, quotes and backslashes escaped) whose value is ``text``."""
    return ascii(str(text))


def c_comment(text: str, lead: str = " * ") -> str:
    """Lines of a C block comment holding ``text``: every line :func:`ascii_line` with ``lead`` before it, and
    ``*/`` (which would close the comment) and ``/*`` written as ``*\\/`` and ``/\\*``."""
    out = []
    for line in str(text).split("\n"):
        safe = ascii_line(line).replace("*/", "*\\/").replace("/*", "/\\*")
        out.append((lead + safe).rstrip())
    return "\n".join(out)


def xml_text(text: object) -> str:
    """Text for an XML element or attribute (ElementTree escapes ``&<>"``): one line without the characters
    XML 1.0 cannot carry (controls), which are written as their escape text."""
    return one_line(text)


def xml_comment(text: str) -> str:
    """The body of one XML comment holding ``text``: lines :func:`one_line`, ``--`` split (not allowed in a
    comment, and ``-->`` would close it), framed by line breaks so it neither starts nor ends with ``-``."""
    lines = (re.sub(r"-(?=-)", "- ", one_line(line)) for line in str(text).split("\n"))
    return "\n" + "\n".join("  " + line for line in lines) + "\n"


def check_identifier(name: object, what: str, max_length: int | None = None) -> str:
    """``name`` when it matches :data:`IDENTIFIER` (and is at most ``max_length`` long), else RobidInputError
    naming ``what`` (``--prefix``, ``TRAJ.json: joint_names[2]``)."""
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise RobidInputError(f"{what}: expected an identifier (ASCII letters, digits and _, not starting with a "
                              f"digit), got {ascii_line(name)!r}"[:400])
    if max_length is not None and len(name) > max_length:
        raise RobidInputError(f"{what}: {name!r} is longer than {max_length} characters")
    return name
