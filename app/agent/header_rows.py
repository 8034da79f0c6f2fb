"""A CSV's header row taken for a record: the hint after a call given a column's name.

Small models loop over a CSV's lines from the first (``for line in text.split('\\n')``)
and pass the header's fields on as values: the 1.5B called
``time.convert_time(source_timezone='timezone', …)`` for the header line
"name,timezone", was told the form of a time zone, and printed the error until the
turn ran out. The fix is to skip that line, which no server's error says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# A header's field: a column name (words, digits after a letter, "_", "-", "."; no "/").
FIELD = re.compile(r"[A-Za-z][\w .-]{0,40}")


def header_rows(texts: Iterable[str]) -> list[tuple[str, ...]]:
    """The header rows of the comma-separated blocks in ``texts``: a block's first line
    whose fields are all column names, followed by a line with as many fields that are
    not (a block of names alone, "Ana,web", may have no header)."""
    headers: list[tuple[str, ...]] = []
    for text in texts:
        lines = ["", *text.splitlines(), ""]
        for before, line, after in zip(lines, lines[1:], lines[2:], strict=False):
            fields = tuple(field.strip() for field in line.split(","))
            if (len(fields) >= 2 and before.count(",") != line.count(",")
                    and after.count(",") == line.count(",")
                    and all(map(FIELD.fullmatch, fields))
                    and not all(FIELD.fullmatch(field.strip()) for field in after.split(","))):
                headers.append(fields)
    return headers


def header_hint(arguments: Mapping[str, Any], texts: Iterable[str]) -> str:
    """The hint for a failed call given a column's name from a header row of ``texts``
    (what the turn's tools returned and the user's messages showed), as the other value
    hints are: on a line of its own after the error; "" for none."""
    values = {key: value.strip() for key, value in arguments.items()
              if isinstance(value, str) and value.strip()}
    if not values:
        return ""
    for header in header_rows(texts):
        for key, value in values.items():
            if value in header:
                return (f"\nHint: {key}={value!r} is a column name: the line "
                        f"{','.join(header)!r} is the CSV's header, not a record. Skip it "
                        "(lines[1:]) or read the rows with "
                        "csv.DictReader(io.StringIO(text)).")
    return ""
