"""The check of an answer that picks the most, the earliest or a count by eye.

Asked which entity had the most observations, the 1.5B printed each one's count and
named the wrong one; asked which event in a log happened first, it printed the log and
gave its first line (the log was not in date order). "First" and "last" count only
where they end a clause: "the first commit" names a thing, it compares nothing. The
system prompt says to compare and count in code; a small model reads the printed data
instead. When a request that only asks (no change to make) asks which item is the most
or least of something (a superlative that compares items), or how many, a total or an
average, and no cell that ran this turn compared, sorted, counted or added anything (nor
called a tool whose name says it does: ``get_sum``, ``sortBy``), the answer is sent back
once, asking for the code.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Collection, Iterable, Sequence

from deskmate.app.agent.parse import NOT_RUN, WORK_IT_OUT, CodeAction, parse_reply
from deskmate.app.llm.base import ChatMessage

# A superlative that picks one item of several ("the most observations"); "first" and
# "last" only where they end a clause ("which happened first?", "who ran last, and …"):
# before a noun they name a thing ("the first commit"), they do not compare.
SUPERLATIVE = re.compile(
    r"\b(most(?! recent(?:ly)?)|least|fewest|earliest|oldest|largest|smallest|biggest|"
    r"highest|lowest|longest|shortest|cheapest|priciest|dearest|"
    r"(?:first|last)(?=\s*(?:[,.?!;:]|$)|\s+(?:and|or|of all|overall)\b))\b", re.I)
AGGREGATE = re.compile(r"\b(how many|total|sum|average|mean|median)\b", re.I)
# Paths and web addresses in a request name things, and may hold any word
# (.../fs-earliest-event/..., totals-2024.csv): they are left out of the match.
PATHS = re.compile(r"\S*[/\\]\S*|\S+\.[A-Za-z0-9]{1,5}\b")
COMPARES = frozenset({"max", "min", "sorted", "sort", "most_common", "nlargest",
                      "nsmallest"})
COUNTS = frozenset({"sum", "len", "count", "Counter", "mean", "median", "fsum", "fmean"})
# Tools that do the work themselves (the everything server's get_sum, a listing's sortBy).
TOOL_WORDS = re.compile(r"sum|add|count|total|sort|max|min|average|mean|median|stat", re.I)



def cells_run(messages: Sequence[ChatMessage], objects: Collection[str]) -> list[str]:
    """The code of the turn's cells (``messages``, from the turn's start) that ran: not
    those answered with a message that says they were not run."""
    cells = []
    for message, after in itertools.pairwise(messages):
        if message.role != "assistant" or after.content.startswith(NOT_RUN):
            continue
        parsed = parse_reply(message.content, objects)
        if isinstance(parsed, CodeAction):
            cells.append(parsed.code)
    return cells


def asks_to_work_out(request: str) -> tuple[str, str] | None:
    """("compare", "earliest") or ("count", "how many") for a request that asks for a
    superlative among items or an aggregate; None for others."""
    request = PATHS.sub(" ", request)
    if found := SUPERLATIVE.search(request):
        return "compare", found.group(0)
    if found := AGGREGATE.search(request):
        return "count", found.group(0)
    return None


def worked_out(kind: str, cells: Iterable[str], calls: Iterable[tuple[str, str]],
               sent: Iterable[str]) -> bool:
    """Whether a cell that ran did that kind of work (compare: max, sorted, <; count:
    len, sum, +), or a tool call whose name or arguments say the tool did it."""
    if any(TOOL_WORDS.search(tool) for _, tool in calls) or any(
            TOOL_WORDS.search(key) for arguments in sent for key in _keys(arguments)):
        return True
    return any(_does(kind, code) for code in cells)


def _keys(arguments: str) -> list[str]:
    """The argument names of a call sent as JSON (their values are the user's: a path
    like totals.txt says nothing of what the tool did)."""

    try:
        value = json.loads(arguments)
    except ValueError:
        return []
    return [str(key) for key in value] if isinstance(value, dict) else []


def _does(kind: str, code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True  # (not code this check can read: no check)
    names = COMPARES if kind == "compare" else COUNTS
    for node in ast.walk(tree):
        if kind == "compare" and isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Gt | ast.Lt | ast.GtE | ast.LtE) for op in node.ops):
            return True
        if kind == "count" and (isinstance(node, ast.AugAssign) or (
                isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Div))):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = (func.id if isinstance(func, ast.Name)
                    else func.attr if isinstance(func, ast.Attribute) else "")
            if name in names:
                return True
    return False


def work_it_out(kind: str, words: str) -> str:
    """The check's message."""
    if kind == "compare":
        what, how = "compared", "max(), min() or sorted() with a key"
    else:
        what, how = "counted or added up", "len(), sum() or a loop that adds"
    return (f"{WORK_IT_OUT}for \"{words}\", and no code in this task has {what} the "
            "data yet: an answer read off printed values by eye is often wrong. Work it "
            f"out in code from the values the tools returned ({how}), print the result, "
            "then answer.")
