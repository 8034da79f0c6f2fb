"""What a search that found nothing adds to its result: try fewer words, or read it all.

A small model searches with a sentence ("Marta lives in a city"), gets an empty result
from a server that matches single words or names, and answers "Marta does not live in
any city". The note after an empty result of a call that searched with several words
says so and names the server's tool that reads everything, when it has one. It reads
as a condition (before answering that nothing exists), so an empty result that is the
answer still is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from deskmate.app.agent.tool_errors import Tools
from deskmate.tools.search import STOPWORDS
from deskmate.tools.signatures import Signature, py_identifier

# A tool or parameter name that says the call searches (search_nodes, query, pattern).
SEARCHING = re.compile(r"search|find|query|lookup|match|pattern|keyword|filter|term|^q$", re.I)
# A tool that takes nothing and reads a whole store (read_graph, list_entities, get_all).
READ_ALL = re.compile(r"^(read|list|get_all|dump|export)", re.I)
# Its description says it gives everything ("Read the entire knowledge graph"; not
# "list the directories this server is allowed to access").
WHOLE = re.compile(r"\b(?:entire|whole|all|every|everything)\b", re.I)
FOUND_NOTHING = " found nothing. "  # the note's words (loop.py reads them)
EMPTY_TEXTS = {"", "[]", "{}", "null", "none", "no results", "no matches", "not found"}


def empty(value: Any) -> bool:
    """None, an empty text, list or dict, or a dict whose every value is an empty list
    or dict (``{'entities': [], 'relations': []}``)."""
    if value is None:
        return True
    if isinstance(value, str):
        text = value.strip().rstrip(".").lower()
        if text in EMPTY_TEXTS:
            return True
        try:
            decoded = json.loads(value)
        except ValueError:
            return False
        return not isinstance(decoded, str) and empty(decoded)
    if isinstance(value, list | tuple):
        return not value
    if isinstance(value, dict):
        return all(isinstance(v, list | tuple | dict) and not v for v in value.values())
    return False


def empty_note(tools: Tools, server: str, sig: Signature, arguments: Mapping[str, Any],
               value: Any) -> str:
    """The note for ``value``, the result of a search with several words; "" for any
    other call or result."""
    if not empty(value):
        return ""
    searching = SEARCHING.search(sig.name)
    query = next(((p, arguments[p.original]) for p in sig.params
                  if isinstance(arguments.get(p.original), str)
                  and len(arguments[p.original].split()) >= 2
                  and not arguments[p.original].startswith("/")
                  and (searching or SEARCHING.search(p.name))), None)
    if query is None:
        return ""
    param, text = query
    reader = next((f"{py_identifier(server)}.{other.name}()"
                   for (s, _), (spec, other) in tools.items()
                   if s == server and other.name != sig.name
                   and READ_ALL.search(other.name) and WHOLE.search(spec.description or "")
                   and not any(p.required for p in other.params)), None)
    word = key_word(text)
    example = (f", such as {py_identifier(server)}.{sig.name}({param.name}={word!r})"
               if word else "")
    return (f"Note: {py_identifier(server)}.{sig.name}({param.name}={text!r}){FOUND_NOTHING}"
            "Searches often match single words or names, not sentences: before answering "
            f"that nothing exists, search again with one name or word from the request{example}"
            + (f", or read everything with {reader}." if reader else "."))


def key_word(text: str) -> str | None:
    """The word of a searched sentence to search with alone: its first name (a word
    written with a capital that is not a sentence's common word), else its longest
    word; None when it has no word worth a search. A call to copy, where "one word"
    left the choice to a model that searched the sentence again."""
    words = re.findall(r"[A-Za-z][\w'-]*", text)
    meaningful = [w for w in words if w.lower() not in STOPWORDS and len(w) >= 3]
    named = [w for w in meaningful if w[0].isupper()]
    if named:
        return named[0]
    return max(meaningful, key=len) if meaningful else None
