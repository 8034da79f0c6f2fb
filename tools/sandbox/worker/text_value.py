"""A tool's text as a cell gets it: a str that iterates by line, as a text file does.

Small models loop over a tool's text as if it were an open file or a list of its lines:
``for line in filesystem.read_text_file(p)``, ``set(text)`` to drop repeated lines,
``for name in listing``, ``with filesystem.read_text_file(p) as f``. On a plain str
each of those runs over characters, or fails: in the eval suite a set of 28 letters
"removed", a month's total of 0 from a loop that never matched, a file written one
character a line. A tool's text is a str in every other way (len,
indexing, slicing, ``in``, its methods, JSON, what print shows) but iterates by line,
without the line ends; a folder listing ("[FILE] a.csv" lines) by entry name, as
``os.listdir`` gives them; and it stands in a ``with`` as the open file (read,
readlines). Its methods that return a text (strip, replace, lower …) keep this; split
and splitlines give plain lists as always.

Runs inside the sandbox worker: standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .connected_files import listing_entries
from .state import CELLS_MODULE


class Text(str):
    """A tool's text of several lines (see the module's doc)."""

    __slots__ = ()
    __module__ = CELLS_MODULE

    def __iter__(self) -> Iterator[str]:
        lines = self.splitlines()
        entries = listing_entries(self)
        if entries and len(entries) == sum(1 for line in lines if line.strip()):
            return iter([name for name, _ in entries])
        return iter(lines)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self))

    # As an open text file: ``with tool(...) as f: for line in f`` / ``f.read()``.
    def __enter__(self) -> Text:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, size: int = -1) -> str:
        return str(self) if size is None or size < 0 else str(self)[:size]

    def readlines(self) -> list[str]:
        return self.splitlines(keepends=True)

    def close(self) -> None:
        return None


def _keeps_text(name: str):
    method = getattr(str, name)

    def call(self: str, *args: object, **kwargs: object) -> str:
        return Text(method(self, *args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


for _name in ("strip", "lstrip", "rstrip", "replace", "lower", "upper", "casefold",
              "removeprefix", "removesuffix", "expandtabs", "title", "capitalize"):
    setattr(Text, _name, _keeps_text(_name))


def as_text(value: Any) -> Any:
    """A tool's result as the cell gets it: a text as ``Text``, anything else as is."""
    if type(value) is str:
        return Text(value)
    return value
