"""What a user's request asks for, read from its words: the loop's head start and its
checks before an answer (app/agent/loop.py) decide from these.

Plain patterns, not a model: they run before every step, and a miss costs no more than
the check or the ordering they drive (each check is made once a turn at most).
"""

from __future__ import annotations

import os.path
import re

from deskmate.tools.sandbox.results import RequestFiles
from deskmate.tools.signatures import py_identifier

# A request that asks for information (a question, or "list/show/find/look up ..."): the
# head start puts tools that only read first.
ASKS = re.compile(r"\?\s*$|^\s*(?:who|what|which|where|when|why|how|is|are|does|do|did|"
                  r"can|list|show|find|look\s+up|tell|count|get|read)\b", re.I | re.M)
# A request for a change: a sentence (or a clause after a comma, "and", "then", "please")
# that starts with a verb that writes, moves, records or deletes something.
CHANGES = re.compile(
    r"(?:^|[.;:!?]\s+|,\s*|\b(?:and|then|please|also)\s+)(set|write|save|create|add|append|"
    r"rename|move|delete|remove|update|commit|replace|fix|change|edit|bump|store|record|"
    r"copy|stage|tag|mark|insert|put|make|link|connect|correct|"
    # (a request to "Rewrite the dates …" or to "tick off eggs" was taken for a question:
    # no check that a change was made, and a head start of tools that only read)
    r"rewrite|reformat|tick|cross|fill|clean|prepend|revert|restore|undo|normali[sz]e|"
    r"standardi[sz]e|reorder|swap|increase|decrease|raise|merge|drop|trim|archive|assign|"
    r"enable|disable)\b", re.I | re.M)
# A step the request rules out: "but do not commit it", "don't push yet", "never delete
# anything", "without committing". The verb ends its clause, or a pronoun, "yet" or
# "anything" does: "do not add a trailing newline" rules out no tool that adds.
_CLAUSE_END = r"(?=(?:\s+(?:it|them|this|that|these|those|yet|anything|either))?\s*(?:[.,;:!?]|$))"
RULED_OUT = re.compile(r"\b(?:do\s+not|don'?t|never|not\s+to)\s+([a-z]+)" + _CLAUSE_END
                       + r"|\bwithout\s+([a-z]+ing)" + _CLAUSE_END, re.I | re.M)
# Extensions of the files people keep data or code in.
EXTENSIONS = (r"(?:txt|md|rst|csv|tsv|json|jsonl|ya?ml|toml|ini|log|py|js|ts|tsx|jsx|go|rs|"
              r"java|kt|c|h|cpp|hpp|cs|rb|php|sh|html|css|xml|sql|db|sqlite|cfg|conf|env|"
              r"lock|pdf|png|jpe?g|gif|svg|zip|gz)")
# A request that refers to the user's data: a path, a file name, or a store of records.
USER_DATA = re.compile(
    r"(?:^|\s)[~.]?/\w|\b\w+\." + EXTENSIONS + r"\b|"
    r"\b(?:files?|folders?|director(?:y|ies)|repo(?:sitory)?|"
    r"commits?|branch(?:es)?|database|tables?|memory|graph|records?|notes?|inbox|logs?|"
    r"server|environment)\b", re.I)
# A file's name as an answer may give one (README.md, src/main.go).
FILE_NAMED = re.compile(r"(?<![\w.-])[\w][\w-]*(?:\.[\w-]+)*\." + EXTENSIONS + r"\b", re.I)
CONTENTS = re.compile(r"\b(?:contains?|containing|says?|mentions?|inside|contents?|"
                      r"written in|defines?)\b", re.I)
WEB_ADDRESS = re.compile(r"https?://[^\s\"'<>()\[\]`]+", re.I)
# Where a tool's output lists a file: a diff's headers, a file server's listing.
LISTED = re.compile(r"^(?:\+\+\+ b/|--- a/|diff --git a/|\[FILE\] |\[DIR\] )(\S+)", re.M)
WELL_KNOWN = re.compile(r"(?<![\w.-])(?:Makefile|Dockerfile|LICENSE|README|Procfile|Gemfile|"
                        r"Rakefile|Jenkinsfile|CODEOWNERS)(?![\w.-])")
# An absolute path in the request, up to the sentence's punctuation after it.
PATH = re.compile(r"(?<![\w.:/~-])/(?:[\w.@+-]+/)*[\w.@+-]+/?")
# An error report, as the sandbox writes one; an answer holding it restates an error.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s*Error: ", re.M)

# The values an answer gives: names (runs of capitalised words), numbers of two digits or
# more (or with a point), e-mail addresses; single capitalised words that start most
# sentences are not values.
VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d+\.\d+|\d{2,}|"
                   r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*")
NOT_VALUES = frozenset({"The", "A", "An", "It", "Its", "This", "That", "These", "There", "I",
                        "In", "On", "Yes", "No", "Final", "Answer", "Error", "Output"})

# Any name with an extension, as the head start reads a path's last part (a request's
# own path is a file whatever its extension).
FILE_NAME = re.compile(r"[\w.-]+\.[a-z][a-z0-9]{0,4}\b", re.I)
URL = re.compile(r"[(\[<\"']?[a-z][a-z0-9+.-]*://", re.I)
HEAD_START_QUERY = 160  # characters of the request the head start searches with
# Where a request's steps part: sentence ends, commas, and "and" / "then" between clauses.
CLAUSE_BREAK = re.compile(r"[.;!?](?:\s+|$)|,\s+(?:and\s+|then\s+)?|\s+\b(?:and|then)\s+",
                          re.I)


def asks_for_information(request: str) -> bool:
    return bool(ASKS.search(request))


def asks_for_change(request: str) -> bool:
    return bool(CHANGES.search(request))


def only_asks(request: str) -> bool:
    """A question, and no change ("Read … and store …" asks for one)."""
    return asks_for_information(request) and not asks_for_change(request)


def asks_about_contents(request: str) -> bool:
    """A request about what files hold ("which file contains a TODO", "what does the
    config say"): a listing of names cannot answer it."""
    return bool(CONTENTS.search(request))


def change_verbs(request: str) -> set[str]:
    """The verbs of the request's changes ("…, and commit it there": commit), lower case."""
    return {m.group(1).lower() for m in CHANGES.finditer(request)}


def tool_words(server: str, tool: str) -> list[str]:
    """The tool's name as words without its server's prefix (git_commit: commit)."""
    words = name_words(tool)
    prefix = name_words(py_identifier(server))
    return words[len(prefix):] if words[:len(prefix)] == prefix else words


def tool_verb(server: str, tool: str) -> str:
    """What the tool does, as its name's first word after the server's (commit, create)."""
    words = tool_words(server, tool)
    return words[0] if words else ""


def ruled_out(request: str, verb: str) -> str:
    """The words of the request that rule out ``verb`` ("do not commit it" for commit,
    "without committing" for commit), or ""."""
    if not verb:
        return ""
    forms = {verb, verb + "ing", verb[:-1] + "ing", verb + verb[-1] + "ing"}
    for found in RULED_OUT.finditer(request):
        if (found.group(1) or found.group(2)).lower() in forms:
            return " ".join(found.group(0).split())
    return ""


def name_words(name: str) -> list[str]:
    """A tool's name as words, singular (``git_create_branch``: git, create, branch;
    ``createEntities``: create, entity)."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)
    return [singular(word.lower()) for word in words]


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def names_user_data(request: str) -> bool:
    return bool(USER_DATA.search(request))


def file_names(text: str) -> list[str]:
    """The file names ``text`` gives, in order, each once."""
    return list(dict.fromkeys(m.group(0) for m in FILE_NAMED.finditer(text)))


def request_paths(request: str) -> list[str]:
    """The absolute paths ``request`` names, in order, each once, without the sentence's
    punctuation after them."""
    found = (m.group(0).rstrip(".,;:!?") for m in PATH.finditer(request))
    return list(dict.fromkeys(p for p in found if p.strip("/")))


def request_files(request: str) -> RequestFiles | None:
    """Where a cell's relative paths to the request's files lead (the sandbox's
    worker/paths.py): the folder that holds every path the request names (a file's
    folder, or a folder named), and each file name it gives, with the path it has there
    (a name two paths share is left out; a name given bare is in the folder, where the
    request names only one); None when the request names no path."""
    paths = [path.rstrip("/") for path in request_paths(request)]
    files = [path for path in paths if _file_name(path.rpartition("/")[2])]
    folders = [path.rpartition("/")[0] or "/" if path in files else path
               for path in paths if path]
    if not folders:
        return None
    top = min(folders, key=len)
    folder = top if all(f == top or f.startswith(top.rstrip("/") + "/")
                        for f in folders) else None
    named: dict[str, str | None] = {}
    for path in files:
        names = [path.rpartition("/")[2]]
        if folder is not None and path.startswith(folder.rstrip("/") + "/"):
            names.append(os.path.relpath(path, folder))
        for name in names:
            named[name] = path if named.get(name, path) == path else None
    if len(set(folders)) == 1:  # names given bare ("write the count into LINES.txt")
        for name in file_names(WEB_ADDRESS.sub(" ", PATH.sub(" ", request))):
            named.setdefault(name, f"{top.rstrip('/')}/{name}")
    return RequestFiles(folder, tuple((name, path) for name, path in named.items()
                                      if path is not None))


def _file_name(name: str) -> bool:
    return bool(FILE_NAMED.fullmatch(name) or WELL_KNOWN.fullmatch(name))


def web_addresses(text: str) -> list[str]:
    """The http(s) addresses ``text`` gives, in order, each once, without the sentence's
    punctuation after them."""
    return list(dict.fromkeys(m.group(0).rstrip(".,;:!?") for m in WEB_ADDRESS.finditer(text)))


def listed_files(output: str) -> list[str]:
    """The files a tool's output names, in order, each once: a diff's and a listing's
    paths (``+++ b/go.mod``, ``[FILE] Makefile``: any name), and names with a known
    extension or a well-known name elsewhere in it."""
    found = [m.group(1) for m in LISTED.finditer(output)]
    found += [m.group(0) for m in FILE_NAMED.finditer(output)]
    found += [m.group(0) for m in WELL_KNOWN.finditer(output)]
    return list(dict.fromkeys(name for name in found if name != "/dev/null"))


def copies_an_error(answer: str) -> bool:
    return bool(TRACEBACK.search(answer))


def grounded_in(answer: str, data: str, request: str) -> bool:
    """Whether ``answer`` gives a value (a name, a number, an address) that ``data``
    holds and the request does not: the answer was read from that data, not guessed."""
    return any(value in data and value.lower() not in request.lower()
               for value in (m.group(0) for m in VALUE.finditer(answer))
               if value not in NOT_VALUES)


def head_start_query(request: str) -> str:
    """The request as a tool search reads it best: a URL is the words "web page URL" (its
    host and port match nothing; what it needs is a tool that fetches), a path is its last
    part (folders are noise; a file name is not), and a path to a name with an extension
    is "the file NAME" ("According to /…/sales.csv, which region …" matched the tools
    that list folders, not the one that reads a file)."""
    words: list[str] = []
    for word in request.split():
        if URL.match(word):  # (what ends a clause after it stays: "…/a.txt, save it")
            words.append("web page URL" + (word[-1] if word[-1] in ",;" else ""))
            continue
        name = re.sub(r"^\S*/", "", word)
        said = words[-1].lower() if words else ""
        if name != word and FILE_NAME.match(name) and said not in ("file", "files"):
            name = "the file " + name
        words.append(name)
    return " ".join(" ".join(words).split())[:HEAD_START_QUERY]


def clauses(query: str) -> list[str]:
    """The steps of a request: its sentences and the parts set off by commas or joined by
    "and"/"then", those of three words or more; none when the request is one step."""
    parts = [" ".join(p.split()) for p in CLAUSE_BREAK.split(query)]
    parts = [p for p in parts if len(p.split()) >= 3]
    return parts if len(parts) > 1 else []
