"""Error types shared by every stage.

A :class:`RobidInputError` is a user mistake (bad file, bad field, bad option): the CLI turns it into one line
``robid: error: ...`` and exit status 2, without a traceback. Anything else is an internal failure (exit 1).
"""

from __future__ import annotations


class RobidInputError(ValueError):
    """Bad input: the message names the file, row, column or field at fault."""
