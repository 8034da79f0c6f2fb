"""A text replaced by itself: ``content.replace('receive', 'receive')``.

Asked to fix a file's misspelling of "receive", the 1.5B wrote
``content.replace('receive', 'receive')`` — the word as the request spells it, for both
texts — three times over: each write gave the file its own text, and the commit found
nothing to stage. The notes after it said nothing changed and to check the text
replaced is in the file as written; it never looked. The note for such a cell names the
replace that cannot change anything and the words of the texts the turn's tools returned
that are close to that word (the misspellings), as the replace to write.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Sequence

from deskmate.app.agent.tool_errors import same_case

CLOSE = 0.8  # difflib's ratio of a misspelling to the word ("recieve": 0.857)
MAX_WORDS = 4
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def same_replace_note(code: str, texts: Sequence[str]) -> str:
    """The note on each ``x.replace(a, a)`` in ``code``, with the close words of
    ``texts`` (what the turn's tools returned); "" when there is none."""
    notes = []
    for target, old in same_replaces(code):
        note = (f"Note: {target}.replace({old!r}, {old!r}) replaces {old!r} with itself: "
                "it gives the text back as it was.")
        if close := close_words(old, texts):
            fix = "".join(f".replace({word!r}, {same_case(word, old)!r})" for word in close)
            found = ", ".join(map(repr, close))
            note += f" The text has {found}, close to {old!r}: write {target}{fix}"
        notes.append(note)
    return "\n".join(notes)


def same_replaces(code: str) -> list[tuple[str, str]]:
    """(what is replaced in, the text) of each ``.replace(a, a)`` with ``a`` a constant."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "replace" and len(node.args) >= 2):
            continue
        texts = [a.value for a in node.args[:2]
                 if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if len(texts) == 2 and texts[0] == texts[1] and texts[0]:
            found.append((ast.unparse(node.func.value), texts[0]))
    return list(dict.fromkeys(found))


def close_words(word: str, texts: Iterable[str]) -> list[str]:
    """The words of ``texts`` spelled close to ``word`` but not as it is (in any case,
    or another form of it), in the order they first come; none for a text of several
    words."""
    if not WORD.fullmatch(word):
        return []
    wanted, close = word.lower(), []
    for text in texts:
        for found in WORD.findall(text):
            lower = found.lower()
            # Not the word itself, nor another form of it ("received", "receives").
            if (lower.startswith(wanted) or wanted.startswith(lower) or found in close
                    or abs(len(lower) - len(wanted)) > 1):
                continue
            if difflib.SequenceMatcher(None, lower, wanted).ratio() >= CLOSE:
                close.append(found)
    return close[:MAX_WORDS]
