"""The hint for arithmetic or a comparison on text: numbers and dates read from a file
or a tool's text are str until converted.

The 1.5B read a CSV with csv.DictReader and wrote ``grade['coursework'] * 0.2``
("can't multiply sequence by non-int of type 'float'"), subtracted two of the time
server's ISO datetimes ("unsupported operand type(s) for -: 'str' and 'str'"), then
printed the traceback's text, or wrote the same line again, until its steps ran out:
Python's message names the types, not the value nor the conversion. The hint names
each text operand on the failing line with its value and the call that converts it.
"""

from __future__ import annotations

import ast
import linecache
import re
from datetime import datetime

from .regex_miss import failing_cell_line, value_of

# Python's messages for str in arithmetic or an order comparison with a number.
TEXT_MATH = re.compile(
    r"can't multiply sequence by non-int of type '(?:float|str)'"
    r"|unsupported operand type\(s\) for (?:[-+*/%]|//|\*\*): '(?:str|int|float)' and "
    r"'(?:str|int|float)'"
    r"|not supported between instances of '(?:str|int|float)' and '(?:str|int|float)'")
NUMBER = re.compile(r"\s*[-+]?(?:\d+(?:[.,]\d*)?|\.\d+)\s*")
SHOWN = 3  # operands named
GENERIC = ("Hint: a value here is text (str), not a number or a date: convert what you "
           "read from text first — float(x) or int(x) for numbers, "
           "datetime.fromisoformat(x) for ISO dates and times\n")


def text_math(exc: BaseException) -> str:
    """The hint for ``exc``, a TypeError of text in arithmetic or an order comparison
    with a number; "" for any other."""
    message = str(exc)
    if not isinstance(exc, TypeError) or not TEXT_MATH.search(message) or (
            "'str'" not in message and "sequence" not in message):
        return ""
    operands, line = _text_operands(exc)
    if " for +: " in message:
        # A number put into text is a "+" too (`count + ' files'`), whose fix is str():
        # only text that holds a number, or a sum() of texts, is hinted.
        operands = [(source, value) for source, value in operands if _convertible(value)]
        if not operands and "sum(" not in line:
            return ""
    named = [_conversion(source, value) for source, value in operands][:SHOWN]
    if not named:
        return GENERIC
    return "Hint: " + "; ".join(named) + "\n"


def _convertible(value: str) -> bool:
    return bool(NUMBER.fullmatch(value)) or _iso(value)


def _iso(value: str) -> bool:
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        return False
    return True


def _conversion(source: str, value: str) -> str:
    shown = value if len(value) <= 40 else value[:40] + "…"
    if NUMBER.fullmatch(value):
        call = f"float({source})" if "," not in value else f"float({source}.replace(',', '.'))"
        return f"{source} is text ({shown!r}): write {call}"
    if _iso(value):
        return f"{source} is text ({shown!r}): write datetime.fromisoformat({source})"
    return f"{source} is text ({shown!r}), not a number"


def _text_operands(exc: BaseException) -> tuple[list[tuple[str, str]], str]:
    """(source, value) of each operand of the failing line's arithmetic and comparisons
    that is a variable or a constant index into one (never a call) holding a str, and
    the line."""
    found = failing_cell_line(exc)
    if found is None:
        return [], ""
    frame, lineno = found
    line = linecache.getline(frame.f_code.co_filename, lineno).strip()
    try:  # (a compound statement's head, "if total > 10:", parses with a body)
        tree = ast.parse(f"{line} pass" if line.endswith(":") else line)
    except SyntaxError:
        return [], line
    operands: dict[str, tuple[int, str]] = {}  # source -> (where on the line, value)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            sides = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
        else:
            continue
        for side in sides:
            value = value_of(side, frame)
            if isinstance(value, str):
                operands.setdefault(ast.unparse(side), (side.col_offset, value))
    ordered = sorted(operands.items(), key=lambda item: item[1][0])  # as the line reads
    return [(source, value) for source, (_, value) in ordered], line
