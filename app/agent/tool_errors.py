"""What a failed tool call's error adds so that a small model's next call is right
(a file server's path errors: path_errors.py): a tool to call first, a path of one
character, a move into a folder, a wildcard for one path, an object's fields, an edit's
text that is not in the file.

Pure functions of the error text, the call's arguments and the session's tools
(``(server, tool) -> (ToolSpec, Signature)``, the bridge's table); the bridge makes
the one call among them (listing the folder) and strings the texts together.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from deskmate.app.agent.request import name_words, singular
from deskmate.tools.signatures import Signature, py_identifier
from deskmate.tools.spec import ToolSpec

Tools = Mapping[tuple[str, str], tuple[ToolSpec, Signature]]

# A file server's "no such file" (Node's and Python's words for it; path_errors.py reads the rest).
MISSING_PATH = re.compile(r"ENOENT|no such file or directory", re.I)
WRITE_FILE_TOOLS = ("write_file", "write_text_file", "create_file")
MAKE_FOLDER_TOOLS = ("create_directory", "make_directory", "mkdir")
# An error about a thing that is already there: its name was not refused for its form.
EXISTS = re.compile(r"already exists?|exists already", re.I)
PATH_WORDS = ("path", "file", "filename", "dir", "directory", "folder")


def path_arguments(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The arguments a call names a path with (``path``, ``file_path``, ``repo_dir``),
    as (key, value), those whose value is a text."""
    return [(key, value) for key, value in arguments.items()
            if key.lower().endswith(PATH_WORDS) and isinstance(value, str)]


NOT_THERE = re.compile(r"not found|does not exist|doesn't exist", re.I)
CREATES = ("create", "add", "new", "make", "insert")


def create_first(tools: Tools, server: str, tool: str, error: str) -> str:
    """For "Entity with name Ada not found" from a tool that works on a thing that must
    exist first (``add_observations``): the server's tool that creates that kind of
    thing, named by a word of the error (``create_entities``). Small models add to an
    entity they never created, then explain the error as the answer."""
    if not NOT_THERE.search(error) or MISSING_PATH.search(error):
        return ""  # (a missing path has the path hints: list the folder, make it)
    said = {singular(word.lower()) for word in re.findall(r"[A-Za-z]+", error)}
    for (s, name), (_, sig) in tools.items():
        words = name_words(name)
        if (s == server and name != tool and len(words) >= 2 and words[-2] in CREATES
                and words[-1] in said):
            return (f"\nHint: that {words[-1]} is not there yet: create it first with "
                    f"{py_identifier(server)}.{sig.call_text()}, then call {tool} again.")
    return ""


# A parameter that takes the paths a tool works on (git_add's files).
PATHS_PARAM = re.compile(r"^(files|paths|file_paths|filenames)$", re.I)


def named_first(tools: Tools, server: str, tool: str, error: str,
                arguments: Mapping[str, Any], changed: Sequence[str],
                unchanged: Sequence[str] = (),
                called: Sequence[tuple[str, str]] = ()) -> str:
    """For an error that names another tool of the server to call first ("No changes
    staged for commit. Use git_add to stage changes first"): that tool as a call to
    copy, with this call's values for the parameters of the same name and, for a list
    of paths, the files this turn changed inside the folder the call was given. Told
    the tool's name only, small models explain the error as their answer. When no file
    there changed and a write there gave a file the text it held (``unchanged``), that
    is the error's cause: there is nothing for the named tool to take; so it is when the
    named tool already ran this turn (``called``) and no file there changed."""
    named = sorted((found.start(), name, sig) for (s, name), (_, sig) in tools.items()
                   if s == server and name != tool
                   and (found := re.search(rf"\b{re.escape(name)}\b", error)))
    if named:  # the first the error names ("Use git_add …")
        _, name, sig = named[0]
        folders = [v.rstrip("/") + "/" for v in arguments.values()
                   if isinstance(v, str) and v.startswith("/")]
        untouched = not any(p.startswith(f) for p in changed for f in folders)
        if untouched and (same := [p for p in dict.fromkeys(unchanged)
                                   if any(p.startswith(f) for f in folders)]):
            return (f"\nHint: nothing changed for {name} to take: the write to "
                    f"{', '.join(same)} this turn gave it the text it already held. Make "
                    f"the change in its text first (check that what your code replaces is "
                    f"in it as written), then call {name} and {tool}.")
        if untouched and folders and (server, name) in called:
            # Told "call git_add first" once more, the 1.5B called it again: the commit
            # it made before any edit had nothing to take, and the edit never came.
            return (f"\nHint: {name} already ran this turn and {tool} still fails: no "
                    f"file there has changed, so there is nothing for {name} to take. Make "
                    f"the change the request asks for first (write or edit the file), then "
                    f"call {name} and {tool}. (A change made before this turn: give {name} "
                    f"the files it changed.)")
        values: list[str] = []
        for param in sig.params:
            if param.original in arguments:
                values.append(f"{param.name}={arguments[param.original]!r}")
            elif param.required and PATHS_PARAM.match(param.name):
                inside = [path for path in dict.fromkeys(changed)
                          if any(path.startswith(folder) for folder in folders)]
                values.append(f"{param.name}={inside!r}" if inside
                              else f"{param.name}=[...]")
            elif param.required:
                values.append(f"{param.name}=...")
        return (f"\nHint: the error names {name}: call it first, "
                f"{py_identifier(server)}.{sig.name}({', '.join(values)}), then call "
                f"{tool} again.")
    return ""


def character_hint(arguments: Mapping[str, Any], tool: str = "") -> str:
    """For a one-character path: the model's loop went over a text result character by
    character (``for d in list_allowed_directories():`` gives 'A', 'l', …) where it
    meant the text's lines. '/' counts for what a move or copy takes (the first
    character of a search's "/w/a.log" lines; nobody moves the root)."""
    moving = bool(MOVES.search(tool))
    for key, value in arguments.items():
        named = key.lower().endswith(PATH_WORDS) or (
            moving and (SOURCE_KEY.search(key) or DESTINATION_KEY.search(key)))
        if (named and isinstance(value, str) and len(value) == 1
                and (value not in "./~" or (moving and value == "/"))):
            return (f"\nHint: {key}={value!r} is a single character. A for loop over a str "
                    "goes character by character; for a text's lines use .splitlines().")
    return ""


MOVES = re.compile(r"move|rename|copy", re.I)
SOURCE_KEY = re.compile(r"source|src|from|old", re.I)
DESTINATION_KEY = re.compile(r"dest|dst|^to$|target|new", re.I)


def move_into_hint(tool: str, arguments: Mapping[str, Any], error: str) -> str:
    """For a move whose destination "already exists" because it is the folder the
    item was to go into (``move_file(source=".../a.log", destination="logs/")``): the
    destination is the item's own new path."""
    if not (MOVES.search(tool) and EXISTS.search(error)):
        return ""
    source = next((v for k, v in arguments.items() if SOURCE_KEY.search(k)), None)
    destination = next(((k, v) for k, v in arguments.items() if DESTINATION_KEY.search(k)),
                       None)
    if not (isinstance(source, str) and destination and isinstance(destination[1], str)):
        return ""
    key, folder = destination
    name = posixpath.basename(source.rstrip("/"))
    if not name or "*" in source or posixpath.basename(folder.rstrip("/")) == name:
        return ""
    meant = posixpath.join(folder, name)
    return (f"\nHint: {key} is the new path of what moves, not the folder it goes into: "
            f"{key}={meant!r}")


ONE_CHARACTER = ", a single character or none. "  # the note's words (loop.py reads them)
TEXT_WORDS = ("content", "contents", "body")  # what a write tool writes (not a search's text)


def character_note(call: str, arguments: Mapping[str, Any]) -> str:
    """For a text written that is one character (or blank): the model indexed a text
    result like a list of lines (``git_log(...)[-1]`` is the log's last character, a
    newline, and that was the file's content)."""
    for key, value in arguments.items():
        # (a digit is a text of its own: a count written to a file, "5")
        if key.lower().endswith(TEXT_WORDS) and isinstance(value, str) and len(
                value.strip()) <= 1 and not value.strip().isdigit():
            return (f"Note: {call} was given {key}={value!r}{ONE_CHARACTER}"
                    "Indexing a text (text[-1]) gives one character, not a line: for its "
                    "lines use text.splitlines() (the last: text.strip().splitlines()[-1]).")
    return ""


# A parameter whose name says it takes a pattern, where a wildcard is meant.
PATTERN_WORDS = re.compile(r"pattern|glob|query|regex|exclude|filter|match|search", re.I)
# A path whose last part has a wildcard ("/w/*.log", "*.txt"; not "Fix *bold* text").
WILDCARD_PATH = re.compile(r"(?:^|/)[^/\s]*\*[^/\s]*$")


def wildcard_hint(tools: Tools, server: str, sig: Signature,
                  arguments: Mapping[str, Any]) -> str:
    """For a failed call given a wildcard (``source="/w/*.log"``) where the tool takes one
    path: no shell expands it, so the names come from a search (or a listing) first, and
    the tool is called for each."""
    given = next(((p, arguments[p.original]) for p in sig.params
                  if isinstance(arguments.get(p.original), str)
                  and WILDCARD_PATH.search(arguments[p.original])
                  and not PATTERN_WORDS.search(p.name)), None)
    if given is None:
        return ""
    searcher = next((f"{py_identifier(server)}.{other.call_text()}"
                     for (s, _), (_, other) in tools.items() if s == server
                     and any(PATTERN_WORDS.search(p.name) and p.required for p in other.params)),
                    None) or next((f"{py_identifier(server)}.{other.call_text()}"
                                   for (s, name), (_, other) in tools.items()
                                   if s == server and name.startswith("list_")), None)
    param, value = given
    searcher = glob_search(tools, server, value) or searcher
    where = f"get the names with {searcher} (print them), then " if searcher else ""
    return (f"\nHint: {param.name}={value!r} is a wildcard pattern, and {sig.name} takes one "
            f"path: nothing expands the pattern, so {where}call {sig.name} once for each "
            "name in a for loop.")


# A parameter that names the folder a search starts from.
FOLDER_WORDS = re.compile(r"path|dir|folder|root", re.I)


def glob_search(tools: Tools, server: str, value: str) -> str:
    """The server's search for a wildcard path, called with the path's folder and its
    last part as the pattern (``search_files(path='/w', pattern='*.log')`` for
    ``'/w/*.log'``): a call to copy, where a signature left the split to the model,
    which then searched the whole wildcard as a folder. "" when no tool takes a folder
    and a pattern, or the wildcard is in the folder too."""
    folder, _, pattern = value.rpartition("/")
    if "*" in folder or "?" in folder or not pattern:
        return ""
    for (s, _), (_, other) in tools.items():
        if s != server:
            continue
        required = [p for p in other.params if p.required]
        where = next((p for p in required if FOLDER_WORDS.search(p.name)), None)
        what = next((p for p in required if PATTERN_WORDS.search(p.name)), None)
        if where is not None and what is not None and len(required) == 2:
            return (f"{py_identifier(server)}.{other.name}({where.name}={folder or '.'!r}, "
                    f"{what.name}={pattern!r})")
    return ""


def shape_hint(tools: Tools, server: str, sig: Signature, kind: str, expected: Any,
               instance: Any) -> str:
    """For arguments the tool's schema refused (``kind`` is the failed JSON-schema
    keyword, ``expected`` its value, ``instance`` the refused part): a text where a list
    is expected (the lines a search returned, given whole), or objects whose keys are the
    ones another tool of the server takes (entities given to add_observations, which
    wants observations of existing entities, when create_entities takes them)."""
    types = expected if isinstance(expected, list) else [expected]
    if kind == "type" and isinstance(instance, str) and "array" in types:
        lines = instance.splitlines()
        if len(lines) > 1:
            return (f"\nHint: that value is a str of {len(lines)} lines where a list is "
                    "expected: text.splitlines() gives the list of its lines.")
        return "\nHint: that value is a str where a list is expected: put it in one, [value]."
    if kind not in ("required", "additionalProperties") or not isinstance(instance, dict):
        return ""
    keys = [key for key in instance if isinstance(key, str)]
    if len(keys) < 2:
        return ""
    takers = [(other, param) for (s, _), (spec, other) in tools.items() if s == server
              for param in other.params if set(keys) <= _object_fields(spec, param.original)]
    if any(other.name == sig.name for other, _ in takers):
        return ""  # the tool itself takes such objects: a field is missing, not the tool
    if not takers:
        return ""
    other, param = takers[0]
    return (f"\nHint: objects with {', '.join(keys)} are what "
            f"{py_identifier(server)}.{other.name} takes, as {param.name}: "
            f"{py_identifier(server)}.{other.call_text()}")


def _object_fields(spec: ToolSpec, original: str) -> set[str]:
    """The fields of the objects parameter ``original`` takes (itself or its items)."""
    schema = (spec.input_schema.get("properties") or {}).get(original)
    if not isinstance(schema, dict):
        return set()
    item = schema.get("items")
    fields = (item if isinstance(item, dict) else schema).get("properties")
    return set(fields) if isinstance(fields, dict) else set()


# An edit tool's "the text to replace is not in the file" (the file server's words, and
# common others').
NO_MATCH = re.compile(r"could not find (?:an )?exact match|no (?:exact )?match(?:es)? found"
                      r"|not found in (?:the )?file", re.I)
READ_FILE_TOOLS = ("read_text_file", "read_file")


def file_reader(tools: Tools, server: str | None = None) -> tuple[str, str] | None:
    """(server, tool) of a connected tool that reads a whole file's text: ``server``'s
    own, or with no server named, the first server's that has one."""
    for name in READ_FILE_TOOLS:
        found = next((s for (s, tool) in tools
                      if tool == name and server in (None, s)), None)
        if found is not None:
            return found, name
    return None
CLOSE_LINES = 3  # of the file, shown after an edit that matched nothing
SCANNED_LINES = 3000  # of the file, compared with the text to replace
OLD_WORDS = ("old", "search", "find")  # start the names of an edit's text to replace
NEW_WORDS = ("new", "replace")  # ... and of the text that replaces it
MAX_OCCURRENCES = 5  # edits suggested for one misspelt word (each replaces one occurrence)


def edit_target(error: str, arguments: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """For an edit whose text to replace is not in the file: the file's path and the
    texts the call looked for (``edits[].oldText``, or any ``old…`` argument)."""
    if not NO_MATCH.search(error):
        return None
    path = next((value for _, value in path_arguments(arguments)
                 if value.startswith("/")), None)
    wanted: list[str] = []
    for key, value in arguments.items():
        if isinstance(value, str) and key.lower().startswith(OLD_WORDS):
            wanted.append(value)
        for item in value if isinstance(value, list) else []:
            if isinstance(item, dict):
                wanted += [text for name, text in item.items() if isinstance(text, str)
                           and name.lower().startswith(OLD_WORDS)]
    wanted = [text for text in dict.fromkeys(wanted) if text.strip()]
    return (path, wanted) if path and wanted else None


def closest_lines(path: str, text: Any, wanted: list[str]) -> str:
    """The lines of the file (``text``, as read) closest to what the edit looked for,
    numbered, so the next edit copies the text as the file has it (the model wrote the
    word it was asked to fix, spelled right, as the text to replace)."""
    import difflib

    content = text if isinstance(text, str) else json.dumps(text)
    lines = content.splitlines()[:SCANNED_LINES]
    if not lines:
        return ""
    scored: dict[int, float] = {}
    for target in wanted:
        first = target.strip().splitlines()[0].strip() if target.strip() else ""
        for number, line in enumerate(lines):
            words = re.findall(r"\w+", line)
            ratio = max([difflib.SequenceMatcher(None, first, line.strip()).ratio()]
                        + [difflib.SequenceMatcher(None, first.lower(), w.lower()).ratio()
                           for w in words])
            scored[number] = max(scored.get(number, 0.0), ratio)
    best = sorted(sorted(scored, key=lambda n: -scored[n])[:CLOSE_LINES])
    shown = "\n".join(f"{n + 1}: {lines[n]}" for n in best if scored[n] >= 0.5)
    if not shown:
        return ""
    return (f"\nThe lines of {path} closest to the text to replace (copy it from here, as "
            f"the file writes it):\n{shown}")


def fixed_edits(arguments: Mapping[str, Any], text: Any) -> dict[str, Any] | None:
    """For edits whose one-word text to replace is not in the file: the arguments with
    each such edit made for the file's words close to it, one edit per occurrence, the
    replacement in each word's case (the model wrote ``receive`` for ``recieve`` and
    ``Recieve``, the word it was to fix spelled right); None when some edit's text is
    not one word or has nothing close."""
    import difflib

    content = text if isinstance(text, str) else json.dumps(text)
    words = list(dict.fromkeys(re.findall(r"\w+", content)))
    fixed, changed = dict(arguments), False
    for key, value in arguments.items():
        if not isinstance(value, list):
            continue
        edits: list[Any] = []
        for item in value:
            old_key = next((k for k in item if k.lower().startswith(OLD_WORDS)), None) \
                if isinstance(item, dict) else None
            new_key = next((k for k in item if k.lower().startswith(NEW_WORDS)), None) \
                if isinstance(item, dict) else None
            old, new = (item.get(old_key), item.get(new_key)) if old_key and new_key else (
                None, None)
            if not (isinstance(old, str) and isinstance(new, str)) or old in content:
                edits.append(item)
                continue
            if not re.fullmatch(r"\w+", old.strip()):
                return None
            close = [w for w in words if w != old and difflib.SequenceMatcher(
                None, w.lower(), old.strip().lower()).ratio() >= 0.75]
            if not close:
                return None
            for word in close:
                edits += [{**item, old_key: word, new_key: same_case(word, new)}
                          ] * min(content.count(word), MAX_OCCURRENCES)
            changed = True
        fixed[key] = edits
    return fixed if changed else None


def same_case(word: str, text: str) -> str:
    """``text`` in the case of ``word`` (Recieve, receive -> Receive; RECIEVE -> RECEIVE)."""
    if word.isupper() and len(word) > 1:
        return text.upper()
    if word[:1].isupper():
        return text[:1].upper() + text[1:]
    return text
