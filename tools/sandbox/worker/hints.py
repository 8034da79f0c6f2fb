"""The hint appended to a cell's error, so that a small model's next try is right:
a tool called bare, a misspelled server, a module that is not installed, a user's path
that only the tools reach, a pattern that matched nothing in a tool's text, text used
as a number or a date (text_math.py), a text's lines and rows used as something else
(row_hints.py)."""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from typing import Any

from .regex_miss import failing_cell_line, line_values, regex_miss, value_of
from .row_hints import (
    EXTRA_FIELDS,
    empty_line,
    extra_fields,
    keyed_by_data,
    unpack_lines,
    unpack_split,
)
from .state import Toolspace
from .text_math import text_math

# Modules small models reach for to get at the web: the sandbox has no network.
WEB_MODULES = frozenset({"requests", "httpx", "urllib3", "aiohttp", "bs4", "selenium",
                         "playwright", "scrapy", "lxml", "mechanize"})
# Python's modules for working on values (not files, processes or the web, which the
# tools do): a NameError of one is a missing import.
DATA_MODULES = frozenset({"json", "re", "math", "statistics", "csv", "datetime",
                          "collections", "itertools", "functools", "decimal", "fractions",
                          "string", "textwrap", "operator", "heapq", "bisect", "calendar",
                          "zoneinfo", "difflib", "hashlib", "base64", "uuid", "html",
                          "random", "pprint", "copy", "dataclasses", "enum", "typing"})
# Python's modules for files: used without their import, the import is named (and the
# tools that change the user's files, which they cannot).
FILE_MODULES = frozenset({"os", "shutil", "pathlib", "glob"})
FILE_TOOLS = ("list_directory", "read_text_file", "read_file", "search_files",
              "directory_tree")
WRITE_TOOLS = ("move_file", "write_file", "create_directory", "edit_file")


def hint(exc: BaseException, toolspace: Toolspace) -> str:
    """A line that says how to fix ``exc``, or "". A hint that fails costs the hint,
    never the worker (a name clash in this module once ended the worker, and every
    variable of the session, on a plain KeyError)."""
    try:
        return _by_kind(exc, toolspace) or regex_miss(exc)
    except Exception:
        return ""


def _by_kind(exc: BaseException, toolspace: Toolspace) -> str:
    name = getattr(exc, "name", None)
    if isinstance(exc, NameError) and name in toolspace.tool_servers:
        calls = " or ".join(tool_call(server, name, toolspace)
                            for server in toolspace.tool_servers[name])
        return f"Hint: {name} is a tool; call it as {calls}\n"
    if isinstance(exc, NameError) and name:
        return misspelled_server(name, exc, toolspace) or unknown_name(name, exc, toolspace)
    if isinstance(exc, ModuleNotFoundError) and name:
        return missing_module(name.partition(".")[0], toolspace)
    if isinstance(exc, OSError) and exc.errno == errno.EROFS and exc.filename:
        # os.makedirs of a user's folder whose parent is missing here too: the first
        # mkdir lands on the sandbox's read-only view, not on the path checks.
        return f"Hint: {unseen_path(str(exc.filename), toolspace, write=True)}\n"
    # Code written against the shape a result was guessed to have (entity['city'],
    # read_text_file(...) + ...): the fix is to look at the shape first.
    if isinstance(exc, KeyError) and exc.args:
        return dict_keys(exc) or (f"Hint: there is no key {exc.args[0]!r} there; print() "
                                  "the value to see the keys it has\n")
    if text := text_math(exc):
        return text
    if isinstance(exc, TypeError) and str(exc).startswith("string indices must be"):
        return json_text(exc) or TEXT_NOT_RECORD
    if isinstance(exc, ValueError) and str(exc).startswith("too many values to unpack"):
        return unpack_split(exc) or unpack_lines(exc)
    if isinstance(exc, ValueError) and str(exc).startswith("not enough values to unpack"):
        return unpack_lines(exc)
    if isinstance(exc, ValueError) and str(exc).startswith(EXTRA_FIELDS):
        return extra_fields(str(exc))
    if isinstance(exc, IndexError) and "out of range" in str(exc):
        return empty_line(exc)
    if type(exc).__name__ == "JSONDecodeError":
        # json.loads() of a fetched API's text, which starts with the server's line
        # about it: the document starts further on.
        return json_text(exc)
    if isinstance(exc, TypeError) and "does not support the context manager" in str(exc):
        return text_in_with(exc)
    if isinstance(exc, AttributeError) and FILE_METHODS.match(str(exc)):
        return text_as_file(exc)
    if isinstance(exc, AttributeError) and DICT_METHODS.match(str(exc)):
        # response.get('incidents') on the fetch server's text of a JSON API.
        return json_text(exc) or TEXT_NOT_RECORD
    if isinstance(exc, TypeError) and "'dict'" in str(exc):
        return dict_fields(exc) or (
            "Hint: that value is a dict (a tool's result often is; its signature says "
            "what it returns): print() it and use the field you need\n")
    return ""


FIELDS_SHOWN = 8


def dict_fields(exc: TypeError) -> str:
    """For a dict used as a str or a number (``converted + ' ' + title`` with
    convert_time's result): its plain values, each written as the index that reaches
    it. Told to print it and use the field it needs, the 1.5B printed the list it was
    building instead, found it empty and gave up."""
    for name, value in line_values(exc):
        if isinstance(value, dict) and value:
            fields = list(_leaves(name, value, depth=3))
            if fields:
                more = " …" if len(fields) > FIELDS_SHOWN else ""
                shown = ", ".join(f"{path} ({leaf!r})" for path, leaf in fields[:FIELDS_SHOWN])
                return (f"Hint: {name} is a dict, not a single value; its values are "
                        f"{shown}{more}: use the index of the one you need\n")
    return ""


def _leaves(path: str, value: Any, depth: int) -> Iterator[tuple[str, Any]]:
    """(the index that reaches it, its value) for each short plain value inside."""
    if isinstance(value, dict) and depth:
        for key, inner in value.items():
            yield from _leaves(f"{path}[{key!r}]", inner, depth - 1)
    elif _shown_value(value):
        yield path, value


# A tool's text indexed or used like a dict, holding no JSON to parse.
TEXT_NOT_RECORD = ("Hint: that value is a str, not a dict or a list (a tool's result is often "
                   "text): print() it first; for its lines use .splitlines()\n")
# A str used like a dict, or like a web response (requests' .json()).
DICT_METHODS = re.compile(
    r"'(?:str|Text)' object has no attribute '(?:get|keys|items|values|json)'")
# A str read like an open file (a tool's text result): f.read(), f.readlines().
FILE_METHODS = re.compile(r"'str' object has no attribute '(read|readlines|readline)'")


def text_in_with(exc: BaseException) -> str:
    """``with files.read_text_file(path=...) as f:`` — a tool's result is the text
    itself, not a file to open: the line without ``with``, to copy."""
    import ast
    import linecache

    found = failing_cell_line(exc)
    if found is None or not str(exc).startswith("'str'"):
        return ""
    frame, lineno = found
    source = "".join(linecache.getlines(frame.f_code.co_filename))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.With) and node.lineno == lineno and len(node.items) == 1):
            continue
        item = node.items[0]
        call = ast.get_source_segment(source, item.context_expr)
        if not call:
            continue
        if isinstance(item.optional_vars, ast.Name):
            name = item.optional_vars.id
            return (f"Hint: {call} returns the text itself (a str), not a file to open: "
                    f"write {name} = {call} (no with), and use {name} as the text: "
                    f"{name}.splitlines() gives its lines\n")
        return (f"Hint: {call} returns its result (a str), not a file to open: "
                f"write result = {call} (no with) and use result\n")
    return ""


def text_as_file(exc: BaseException) -> str:
    """``text.readlines()`` on a tool's text result: it is the text, not a file."""
    import linecache

    method, found = FILE_METHODS.match(str(exc)), failing_cell_line(exc)
    if method is None or found is None:
        return ""
    frame, lineno = found
    line = linecache.getline(frame.f_code.co_filename, lineno)
    names = re.findall(rf"([A-Za-z_]\w*)\s*\.\s*{method.group(1)}\s*\(", line)
    name = next((n for n in names if isinstance(
        frame.f_locals.get(n, frame.f_globals.get(n)), str)), None)
    if name is None:
        return ""
    instead = name if method.group(1) == "read" else f"{name}.splitlines()"
    return (f"Hint: {name} is a str, the text itself, not a file: write {instead} "
            f"where you wrote {name}.{method.group(1)}()\n")


def dict_keys(exc: KeyError) -> str:
    """The keys the dict that lacked the key has, named: "print it to see" is advice a
    small model skips, and it guesses the next key ('city', then 'location', then 'city').
    The dict is the one the failing line indexed with that key (``result["target"]`` in
    ``result["target"]["time"]``, not ``result``), with a short look at its values and
    the key the model likely meant, written as the index to copy."""
    key = exc.args[0]
    found = indexed_dict(exc, key)
    if found is None:
        found = next(((name, value) for name, value in line_values(exc)
                      if isinstance(value, dict) and key not in value), None)
    if found is None:
        return ""
    name, value = found
    if not value:
        return f"Hint: {name} is an empty dict\n"
    if by_data := keyed_by_data(name, value, key):
        return by_data
    shown = ", ".join(_key_and_value(k, v) for k, v in list(value.items())[:KEYS_SHOWN])
    more = f" and {len(value) - KEYS_SHOWN} more" if len(value) > KEYS_SHOWN else ""
    close = close_key(key, list(value))
    # ... or the key one level down (convert_time's result holds 'datetime' in 'source'
    # and 'target'): the indexes that reach it.
    below = [f"{name}[{k!r}][{key!r}]" for k, v in value.items()
             if isinstance(v, dict) and key in v][:3]
    # A time or a date asked of a datetime's text: its slice, before the key that holds it.
    meant = (_part_of_datetime(name, value, key)
             or (f"; likely meant {name}[{close!r}]" if close is not None
                 else f"; likely meant {' or '.join(below)}" if below else ""))
    return f"Hint: {name} has no key {key!r}; its keys are {shown}{more}{meant}\n"


ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
# Keys asked for that name a part of a datetime, and the slice of an ISO text that gives it.
DATETIME_PARTS = {"time": slice(11, 16), "localtime": slice(11, 16), "hour": slice(11, 13),
                  "clock": slice(11, 16), "date": slice(0, 10), "day": slice(0, 10)}


def _part_of_datetime(name: str, value: dict, key: object) -> str:
    """For a time or a date asked of a dict that holds an ISO datetime text (the time
    server's ``{'timezone': 'Asia/Tokyo', 'datetime': '2026-12-06T23:30:00+09:00'}``):
    the slice that gives it. Told the dict's keys, the 1.5B asked for 'time' twice more
    (a closest key, 'datetime' or 'timezone', could not be told apart)."""
    part = DATETIME_PARTS.get(_plain(key)) if isinstance(key, str) else None
    held = next(((k, v) for k, v in value.items()
                 if isinstance(v, str) and ISO_DATETIME.match(v)), None)
    if part is None or held is None:
        return ""
    index = f"{name}[{held[0]!r}]"
    return (f"; the {key} is part of {index}: {index}[{part.start}:{part.stop}] gives "
            f"{held[1][part]!r}")


KEYS_SHOWN = 12
VALUE_CHARS = 40


def _key_and_value(key: object, value: object) -> str:
    """``'datetime'`` with its value when that is short and plain (a str, a number), so
    the key that holds what the request asks for shows itself."""
    return f"{key!r} ({value!r})" if _shown_value(value) else repr(key)


def _shown_value(value: object) -> bool:
    """A value short and plain enough to show beside its key (a str, a number)."""
    return isinstance(value, str | int | float | bool) and len(repr(value)) <= VALUE_CHARS


def close_key(key: object, keys: list[object]) -> object | None:
    """The one key that is ``key`` written otherwise (another case, ``_`` for a space),
    holds it as a word part ('datetime' for 'time'), or is spelled closest; None when no
    key is, or two are equally."""
    if not isinstance(key, str):
        return None
    texts = [k for k in keys if isinstance(k, str)]
    plain = [k for k in texts if _plain(k) == _plain(key)]
    if len(plain) == 1:
        return plain[0]
    holding = [k for k in texts if key.lower() in k.lower() or k.lower() in key.lower()]
    if len(holding) == 1:
        return holding[0]
    import difflib

    ratios = sorted(((difflib.SequenceMatcher(None, key.lower(), k.lower()).ratio(), k)
                     for k in texts), reverse=True)
    if ratios and ratios[0][0] >= 0.75 and (len(ratios) == 1 or ratios[1][0] < ratios[0][0]):
        return ratios[0][1]
    return None


def _plain(text: str) -> str:
    return text.lower().replace("_", "").replace("-", "").replace(" ", "")


def indexed_dict(exc: BaseException, key: object) -> tuple[str, dict] | None:
    """The expression the failing line indexed with ``key``, written as the code wrote
    it, and its value, when that is a dict without the key; read from variables and
    constant indexes only (nothing that would call a tool again)."""
    import ast
    import linecache

    found = failing_cell_line(exc)
    if found is None:
        return None
    frame, lineno = found
    try:
        tree = ast.parse("".join(linecache.getlines(frame.f_code.co_filename)))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value == key
                and node.lineno <= lineno <= (node.end_lineno or node.lineno)):
            continue
        value = value_of(node.value, frame)
        if isinstance(value, dict) and key not in value:
            return ast.unparse(node.value), value
    return None


def json_text(exc: BaseException) -> str:
    """For a str indexed like a dict where the str holds a JSON document (a file's
    text, a web API's body after the fetch server's line about it): the call that parses
    it. Small models index such text straight away, and "print it first" leaves the
    parsing to them, which they then skip."""
    for name, value in line_values(exc):
        if not isinstance(value, str) or (start := json_start(value)) is None:
            continue
        where = (f"json.loads({name})" if start == 0 else
                 f"json.loads({name}[{name}.index({value[start]!r}):])")
        after = "" if start == 0 else " after a line of text"
        return (f"Hint: {name} is a str that holds a JSON document{after}; parse it and "
                f"index what that returns: import json; data = {where}\n")
    return ""


def json_start(text: str) -> int | None:
    """Where a JSON object or array starts in ``text`` (0, or after a preamble), when
    it runs to the end of the text."""
    import json

    for opener in "{[":
        start = text.find(opener)
        if start < 0:
            continue
        try:
            _, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            continue
        if not text[end:].strip():
            return 0 if not text[:start].strip() else start
    return None


def misspelled_server(name: str, exc: BaseException, toolspace: Toolspace) -> str:
    """``tooy.add(...)``: a name close to a server's (case aside) gets its right spelling."""
    import difflib  # only when a cell failed: the worker's start stays fast
    import traceback

    by_lower = {server.lower(): server for server in toolspace.server_names}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    # time_server, timeServer, git_client: a server's name with a word added, written
    # after the code was told not to reuse the server's own name for its variables —
    # used as the server is (time_server.convert_time): a value such as local_time, a
    # loop's name that the loop no longer sets, is no server (told "did you mean
    # 'time'?", the 1.5B passed the server as the time).
    frames = traceback.extract_tb(exc.__traceback__)
    line = (frames[-1].line or "") if frames else ""
    parts = [part.lower() for part in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    within = [by_lower[part] for part in parts if part in by_lower] \
        if re.search(rf"\b{re.escape(name)}\s*\.", line) else []
    if not close and len(within) != 1:
        return ""
    server = by_lower[close[0]] if close else within[0]
    return f"Hint: did you mean {server!r}? It is a server: dir({server}) lists its tools\n"


def tool_call(server: str, tool: str, toolspace: Toolspace) -> str:
    """``time.convert_time(source_timezone: str, time: str)``: the call with its
    signature when the host sent it, else ``server.tool(...)``."""
    line = toolspace.signatures.get(f"{server}.{tool}")
    return f"{server}.{line}" if line else f"{server}.{tool}(...)"


def unknown_name(name: str, exc: BaseException, toolspace: Toolspace) -> str:
    """A server or tool the model made up (``calculator.calculate(...)``, ``get_time()``):
    the closest tool names with their signatures, else the servers and how to search. A
    name not called nor used as an object (a variable never set) gets no hint."""
    import difflib
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    line = (frames[-1].line or "") if frames else ""
    if name in DATA_MODULES and f"{name}." in line:
        # Python's own module, used without its import (not a tool to search for).
        return f"Hint: {name} is Python's module: add `import {name}` at the top of the cell\n"
    if name in FILE_MODULES and f"{name}." in line:
        # os.makedirs / shutil.move without the import: told to search the tools for
        # `os`, the 1.5B searched for the tool it already had and never made the folder.
        tools = file_calls(WRITE_TOOLS, toolspace)
        changes = (f"; the user's files change through the tools: {'; '.join(tools)}"
                   if tools else "")
        return (f"Hint: {name} is Python's module: add `import {name}` at the top of the "
                f"cell{changes}\n")
    if not toolspace.server_names or not (f"{name}(" in line or f"{name}." in line):
        return ""
    close = difflib.get_close_matches(name.lower(), list(toolspace.tool_servers), n=2,
                                      cutoff=0.6)
    if close:
        calls = " or ".join(tool_call(server, tool, toolspace)
                            for tool in close for server in toolspace.tool_servers[tool][:1])
        return f"Hint: {name} is not defined; did you mean {calls}?\n"
    return (f"Hint: {name} is not defined. The tools are methods of the servers "
            f"{', '.join(toolspace.server_names)}; search_tools(\"what you want to do\") "
            "finds the right one\n")


def missing_module(module: str, toolspace: Toolspace) -> str:
    hint = "Hint: only Python's standard library is installed in this sandbox"
    if module in WEB_MODULES:
        web = [f"{server}.{tool}(url=...)" for tool, servers in toolspace.tool_servers.items()
               if "fetch" in tool or "url" in tool for server in servers][:2]
        how = " or ".join(web) if web else 'search_tools("fetch a web page")'
        hint += f", and it has no network: get web pages through the tools: {how}"
    return hint + "\n"


def file_calls(names: tuple[str, ...], toolspace: Toolspace) -> list[str]:
    """The first three of the connected file tools ``names``, as calls to write."""
    return [tool_call(server, tool, toolspace) for tool in names
            for server in toolspace.tool_servers.get(tool, [])][:3]


# A tool that deletes files: a word of its name deletes, and it takes a path (not the
# memory server's delete_entities), or, where the host sent no signature, a word of its
# name is a file's.
DELETE_WORDS = frozenset({"delete", "remove", "rm", "unlink", "trash", "erase"})
FILE_WORDS = frozenset({"file", "files", "dir", "directory", "folder", "path"})
PATH_PARAMETER = re.compile(r"[(,]\s*\w*(?:path|file|dir|directory|folder)s?\s*:", re.I)


def delete_calls(toolspace: Toolspace) -> list[str]:
    """The first three connected tools that delete files, as calls to write."""
    return [tool_call(server, tool, toolspace)
            for tool, servers in toolspace.tool_servers.items()
            if DELETE_WORDS & name_words(tool)
            for server in servers if _takes_a_path(server, tool, toolspace)][:3]


def _takes_a_path(server: str, tool: str, toolspace: Toolspace) -> bool:
    line = toolspace.signatures.get(f"{server}.{tool}")
    if line:
        return bool(PATH_PARAMETER.search(line))
    return bool(FILE_WORDS & name_words(tool))


def name_words(tool: str) -> set[str]:
    return set(re.split(r"[_\W]+", tool.lower()))


def unseen_path(path: str, toolspace: Toolspace, write: bool = False,
                delete: bool = False) -> str:
    """The message of the error a cell gets for a path of the user's it cannot reach;
    ``write``: the cell meant to change it (rename, delete, make a folder); ``delete``:
    to delete it, which only a tool that deletes can do: the write and move tools named
    for other changes cannot, and where no tool deletes, the answer should say so."""
    if delete:
        deleters = delete_calls(toolspace)
        if not deleters:
            return (f"{path} is not in this sandbox: code here cannot see the user's files, "
                    "and no connected tool deletes a file. If the request needs it gone, "
                    "say in your answer that it cannot be deleted with these tools.")
        return (f"{path} is not in this sandbox: code here cannot see the user's files. "
                f"Delete it through a tool: {'; '.join(deleters)}")
    tools = file_calls(WRITE_TOOLS if write else FILE_TOOLS, toolspace)
    fallback = 'search_tools("move or write a file")' if write else 'search_tools("read a file")'
    how = "; ".join(tools) if tools else fallback
    return (f"{path} is not in this sandbox: code here cannot see the user's files. "
            f"Reach them through the tools: {how}")
