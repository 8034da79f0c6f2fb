"""Hints for a text's lines and rows used as something else: ``a, b = line.split()``
over a line of more words, a CSV text unpacked by a loop as rows, rows with more keys
than a ``csv.DictWriter``'s fieldnames, an index on the empty line a text split on
``"\\n"`` ends with, a row keyed by a data row's values instead of the header's names.
hints.py asks these by the error's kind."""

from __future__ import annotations

import re

from .regex_miss import failing_cell_line, line_values
from .state import CELL_PREFIX


def unpack_split(exc: BaseException) -> str:
    """``time, title = line.split()`` over "13:30 design review": the line splits into
    more parts than names; maxsplit keeps the rest of the line in the last name."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith(CELL_PREFIX)]
    line = (frames[-1].line or "") if frames else ""
    found = re.search(r"^\s*(\w+(?:\s*,\s*\w+)+)\s*=.*\.split\((.*)\)", line)
    if not found:
        return ""
    names = [n.strip() for n in found.group(1).split(",")]
    separator = found.group(2).strip()
    call = f"split({separator + ', ' if separator else ''}maxsplit={len(names) - 1})"
    times = "once" if len(names) == 2 else f"{len(names) - 1} times"
    return (f"Hint: the text splits into more parts than the {len(names)} names; "
            f".{call} splits {times} and keeps the rest of the text in {names[-1]}\n")


EXTRA_FIELDS = "dict contains fields not in fieldnames: "


def extra_fields(message: str) -> str:
    """csv.DictWriter given the rows as read, with the new column added: it writes only
    its fieldnames and refuses a row with other keys. The 1.5B, told only the error,
    wrote the same cell twice more (dev2: a final mark per student, the rows still
    holding each mark it came from)."""
    others = message[len(EXTRA_FIELDS):]
    return (f"Hint: csv.DictWriter writes only the fieldnames it was given, and the rows "
            f"hold other keys too ({others}): create it with extrasaction='ignore' "
            "(csv.DictWriter(file, fieldnames=fieldnames, extrasaction='ignore')) to leave "
            "them out, or write rows that hold only the fieldnames' keys\n")


SEPARATORS = (",", "\t", ";", "|")
LOOP_NAMES = re.compile(r"\bfor\s+\(?(\w+(?:\s*,\s*\w+)+)\)?\s+in\s+(\w+)\s*[:\])]")


def unpack_lines(exc: BaseException) -> str:
    """``for city, at, zone in launches`` over a CSV file's text: the loop takes its lines
    (a tool's text; a str's characters), one str each, not the row's values. The 1.5B,
    shown only the error and the text, wrote the same loop twice more (dev2: launch
    times by city). The loop to write splits each line on the separator that gives as
    many parts as the names."""
    import linecache

    found = failing_cell_line(exc)
    if found is None:
        return ""
    frame, lineno = found
    loop = LOOP_NAMES.search(linecache.getline(frame.f_code.co_filename, lineno))
    if loop is None:
        return ""
    names = [name.strip() for name in loop.group(1).split(",")]
    source = loop.group(2)
    text = dict(line_values(exc)).get(source)
    if not isinstance(text, str):
        return ""
    rows = [row for row in text.splitlines() if row.strip()]
    sample = rows[-1] if rows else ""
    separator = next((s for s in SEPARATORS if len(sample.split(s)) == len(names)), None)
    if separator is None:
        return ""
    # A first line without a digit, above rows with one, is a header to leave out.
    header = len(rows) > 1 and not any(c.isdigit() for c in rows[0]) and any(
        c.isdigit() for c in sample)
    skip = "[1:]" if header else ""
    takes = "lines" if type(text) is not str else "characters"
    return (f"Hint: {source} is text, so the loop takes its {takes}, each one str, not "
            f"{len(names)} values; split each line on {separator!r}: for line in "
            f"{source}.splitlines(){skip}: {', '.join(names)} = line.split({separator!r})"
            + (" (the [1:] leaves out its header line)" if header else "") + "\n")


def empty_line(exc: BaseException) -> str:
    """``min(lines, key=lambda x: x.split()[0])`` over ``text.split('\\n')``: a text
    that ends with a newline splits into one empty line more, and indexing its parts
    fails. Named where the failing line holds an empty line (a variable, or an item of
    a list of lines)."""
    for name, value in line_values(exc):
        if isinstance(value, str) and not value.strip():
            where = f"{name} is {value!r}"
        elif (isinstance(value, list) and value and all(isinstance(v, str) for v in value)
              and (empty := next((i for i, v in enumerate(value) if not v.strip()),
                                 None)) is not None):
            where = f"{name}[{empty}] is {value[empty]!r}"
        else:
            continue
        return (f"Hint: {where}, an empty line (a text split on '\\n' ends with one when "
                "it ends with a newline): keep the lines that have text, "
                "[line for line in text.splitlines() if line.strip()]\n")
    return ""


def keyed_by_data(name: str, row: dict, key: object) -> str:
    """A row whose keys are its own values (``{'2025-06-02': '2025-06-02', 'groceries':
    'groceries', …}``), indexed by a column's name: the rows were zipped with a data row
    (the header line cut off by a ``[1:]`` before it was taken as the names). The 1.5B,
    shown the row's keys, read them for the data and answered that nothing was over
    budget (dev2). csv.DictReader takes the names from the first line."""
    if len(row) < 2 or not all(isinstance(k, str) and k == v for k, v in row.items()):
        return ""
    shown = ", ".join(repr(k) for k in list(row)[:4]) + (" …" if len(row) > 4 else "")
    return (f"Hint: {name} has no key {key!r}: its keys are its own values ({shown}), so "
            "the rows were zipped with a data row, not with the header line's names (a "
            "[1:] that cut the header off before it was taken?). Let csv take the names "
            "from the first line: rows = list(csv.DictReader(io.StringIO(text))) (import "
            f"csv, io), then row[{key!r}] for each row\n")
