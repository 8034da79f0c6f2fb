"""The note after a cell that built a value a tool takes and never gave it to one.

Asked to create Alice and Bob and relate them, a small model wrote ``entities = [alice,
bob]``, called ``memory.create_relations(relations)`` and answered that both were
created: ``entities`` was never passed to ``create_entities``. A name the cell assigns
and never reads, that is the name of a parameter of a tool the cell did not call, gets
a note naming that tool.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

NOT_GIVEN = " was made and not given to any call; "  # the note's words (loop.py reads them)


def unread_names(code: str) -> list[str]:
    """The names the cell assigns (at any depth) and never reads, in order."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    stored: dict[str, None] = {}
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                stored.setdefault(node.id, None)
            else:
                loaded.add(node.id)
    return [name for name in stored if name not in loaded and not name.startswith("_")]


def unused_note(code: str, takers: Callable[[str], Sequence[str]]) -> str:
    """The note for ``code``'s unread names that a tool not called takes (``takers``:
    the calls of the tools with a parameter of that name, none of them called)."""
    lines = []
    for name in unread_names(code):
        if calls := takers(name):
            lines.append(f"Note: {name}{NOT_GIVEN}"
                         f"{' or '.join(calls[:2])} takes it.")
    return "\n".join(lines)
