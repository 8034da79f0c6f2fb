"""The line added to a cell's error about a value: the failing line's variables as the
cell held them. The error names the kind of failure, not the value; small models wrote
the same line again (a table's header row split as a data row, a datetime split on a space
it does not have, a note indexed as a record).

Runs inside the sandbox worker: standard library only."""

from __future__ import annotations

from .regex_miss import line_values

# Errors about a value the code met (not a name, a module, a path or a tool): what the
# failing line held is what the fix depends on.
VALUE_ERRORS = (ValueError, IndexError, TypeError, KeyError, AttributeError,
                ZeroDivisionError)
VALUES_SHOWN = 4
VALUE_REPR_CHARS = 90
VALUES_MARK = "The values on that line:"


def values_line(exc: BaseException) -> str:
    """The failing line's variables as the cell held them, each cut short: "The values
    on that line: line = '| Days | First hour |'; parts = ['| Days', …] (list of 9)".
    Only plain data is shown (text, numbers, lists, dicts, None), never a module, a
    function or a server; at most VALUES_SHOWN. A line that cannot be read costs the
    line, never the cell's error."""
    try:
        if not isinstance(exc, VALUE_ERRORS):
            return ""
        shown = []
        for name, value in line_values(exc):
            if not isinstance(value, str | bytes | int | float | list | tuple | dict | set
                              | type(None)):
                continue
            shown.append(f"{name} = {_short_repr(value)}")
            if len(shown) == VALUES_SHOWN:
                break
        return f"{VALUES_MARK} {'; '.join(shown)}\n" if shown else ""
    except Exception:
        return ""


def _short_repr(value: object) -> str:
    """``repr`` within VALUE_REPR_CHARS (reprlib: a long list is not written out first),
    with the kind and size of a container or a long text."""
    import reprlib

    short = reprlib.Repr()
    short.maxstring = short.maxother = VALUE_REPR_CHARS
    short.maxlist = short.maxtuple = short.maxdict = short.maxset = 6
    short.maxlevel = 2
    text = short.repr(value)
    if len(text) > VALUE_REPR_CHARS + 10:
        text = text[:VALUE_REPR_CHARS] + "…"
    if isinstance(value, list | tuple | dict | set):
        return f"{text} ({type(value).__name__} of {len(value)})"
    if isinstance(value, str | bytes) and len(value) > VALUE_REPR_CHARS:
        return f"{text} ({type(value).__name__} of {len(value)} characters)"
    return text
