"""Notes are returned, never written into the caller's list (docs/architecture.md, "Notes are returned").

A function that says something returns its notes (``value, notes = f(...)``, or a field of the frozen result it
returns) and its caller gathers them in order; no function in robid/ appends, extends, inserts, assigns an item or
``+=`` to a list it received as a parameter named ``notes`` (or ``lines``, ``warnings``, ``messages``). A list built
locally and frozen into a result is fine.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "robid"

#: parameter names that carry notes (``lines``: the signal stage's account, ProcessedSignals.method)
NOTE_PARAMETERS = frozenset({"notes", "lines", "warnings", "messages", "choices"})

#: the list methods that change a list in place
MUTATING_METHODS = frozenset({"append", "extend", "insert", "__setitem__", "__iadd__", "pop", "remove", "clear"})


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return names


def _mutations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, str]]:
    """(line, what) of every in-place change of a notes parameter of ``fn`` (nested functions included: a closure
    that appends to its enclosing function's parameter changes the caller's list all the same)."""
    watched = _parameters(fn) & NOTE_PARAMETERS
    found = []
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in watched
                and node.func.attr in MUTATING_METHODS):
            found.append((node.lineno, f"{node.func.value.id}.{node.func.attr}(...)"))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in watched:
            found.append((node.lineno, f"{node.target.id} {type(node.op).__name__}="))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in watched:
                    found.append((node.lineno, f"{t.value.id}[...] changed"))
    return found


def notes_written_in_place(source: str, filename: str = "<source>") -> list[str]:
    """``file:line function: what`` of every function of ``source`` that changes a notes list it was given."""
    out = []
    for fn in ast.walk(ast.parse(source, filename)):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            out += [f"{filename}:{line} {fn.name}: {what}" for line, what in _mutations(fn)]
    return out


def test_no_function_writes_into_a_notes_list_it_was_given():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        offenders += notes_written_in_place(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT.parent)))
    assert not offenders, "return the notes instead of writing into the caller's list:\n" + "\n".join(offenders)


def test_the_check_finds_every_way_of_writing_into_a_given_list():
    source = textwrap.dedent('''
        def appends(x, notes):
            notes.append("a")

        def extends(x, notes: list[str]):
            notes.extend(["a"])

        def inserts(*, notes):
            notes.insert(0, "a")

        def adds(notes):
            notes += ["a"]

        def sets_an_item(notes):
            notes[0] = "a"

        def deletes_an_item(notes):
            del notes[0]

        def in_a_closure(notes):
            def say(text):
                notes.append(text)
            say("a")

        def an_account(t, lines: list[str]):
            lines.append("a")
    ''')
    found = notes_written_in_place(source)
    named = {line.split()[1].rstrip(":") for line in found}
    assert named == {"appends", "extends", "inserts", "adds", "sets_an_item", "deletes_an_item", "in_a_closure",
                     "an_account"}


def test_the_check_lets_returned_and_local_notes_pass():
    source = textwrap.dedent('''
        def returns_its_own(x):
            notes: list[str] = []
            notes.append("a")
            return x, tuple(notes)

        def reads_the_given_ones(x, notes):
            own = ["b"]
            return (*notes, *own)

        def gathers(x):
            notes = []
            value, more = returns_its_own(x)
            notes += more
            return value, notes
    ''')
    assert notes_written_in_place(source) == []
