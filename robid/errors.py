"""Error types shared by every stage.

A :class:`RobidInputError` is a user mistake (bad file, bad field, bad option): the CLI turns it into one line
``robid: error: ...`` and exit status 2, without a traceback. Anything else is an internal failure (exit 1).

A :class:`RobidOptionError` is a bad option *value* found by the library, named by the option's field
(``method``) rather than by how a front end spells it: the command line words it ``--method``, a campaign file
``campaign.yaml: identification.method`` (robid.requests.Where). No error the library raises names a
command-line flag (tests/test_requests.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable


class RobidInputError(ValueError):
    """Bad input: the message names the file, row, column or field at fault."""


#: ``{field}`` in an option error's message: another option, worded as the front end spells it
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")


class RobidOptionError(RobidInputError):
    """A bad option value: ``field`` the option (a field name such as ``compare_methods``; None: the error is about
    a file or a run and only mentions options), ``message`` what is wrong; ``{other_field}`` in the message names an
    option. Its plain text uses the field names; a front end
    words it with :meth:`worded`."""

    def __init__(self, field: str | None, message: str):
        self.field, self.message = field, message
        super().__init__(self.worded(lambda name: name))

    def worded(self, label: Callable[[str], str], mention: Callable[[str], str] | None = None) -> str:
        """The message with its option named by ``label`` (e.g. ``--method``) and the options it mentions by
        ``mention`` (default ``label``); ``field`` None: a message about something else that mentions options."""
        mention = mention or label
        text = _PLACEHOLDER.sub(lambda m: mention(m.group(1)), self.message)
        return text if self.field is None else f"{label(self.field)}: {text}"
