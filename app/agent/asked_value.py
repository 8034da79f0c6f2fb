"""The kind of value a question asks for, and an answer that gives none of it.

Asked "When does the library close on Saturdays, according to <page>?", the 1.5B
fetched the page, whose table says 16:30, and answered "The library closes on Saturdays,
as indicated in the provided HTML content." A question that asks when (a time or a
date) or how many / how much (a number), answered with no digit and no word of that
kind, is sent back once (answer_checks.py) with the question to answer.
"""

from __future__ import annotations

import re

from deskmate.app.agent.parse import LACKS_VALUE
from deskmate.app.agent.request import PATH

# Sentences end at ". ", "? ", "! " or a line's end (not at a path's or an address's dot);
# a question's ends with '?', or asks with "tell me" / "find out".
SENTENCE_END = re.compile(r"(?<=[.?!])\s+|\n")
TELLS = re.compile(r"\b(?:tell me|find out|let me know)\b", re.I)
ASKS_TIME = re.compile(r"\b(?:when|what time|what date|which (?:day|date|year|month))\b", re.I)
ASKS_NUMBER = re.compile(r"\bhow (?:many|much|long|old|far|big|large)\b", re.I)
_NUMBER_WORDS = """no none zero one two three four five six seven eight nine ten eleven
twelve twenty thirty forty fifty hundred thousand million half dozen once twice nothing"""
NUMBER_WORDS = frozenset(_NUMBER_WORDS.split())
_TIME_WORDS = """monday tuesday wednesday thursday friday saturday sunday january february
march april may june july august september october november december noon midnight today
tomorrow yesterday never morning evening night afternoon"""
TIME_WORDS = frozenset(_TIME_WORDS.split())


def asked_kind(request: str) -> tuple[str, str] | None:
    """("time or date" or "number", the question's sentence) for a request whose
    question asks for one; None otherwise (a "when" that only sets a condition, "when you
    are done, write …", is not a question)."""
    for part in SENTENCE_END.split(request):
        sentence = " ".join(part.split())
        said = PATH.sub(" ", sentence)  # (a path's words do not ask: /w/when-due/a.txt)
        if not (sentence.endswith("?") or TELLS.search(said)):
            continue
        if ASKS_TIME.search(said):
            return "time or date", sentence
        if ASKS_NUMBER.search(said):
            return "number", sentence
    return None


def gives_none(kind: str, answer: str) -> bool:
    """Whether ``answer`` holds no value of ``kind`` (no digit, no word of that kind)."""
    if re.search(r"\d", answer):
        return False
    words = set(re.findall(r"[a-z]+", answer.lower()))
    return not (words & (TIME_WORDS if kind == "time or date" else NUMBER_WORDS))


def lacks_check(kind: str, question: str) -> str:
    """The check's text: the answer sent back with the question."""
    return (f"{LACKS_VALUE}{kind}, and the request asks: "
            f"\"{question}\". Find it in what the tools returned above (or print it with "
            "code) and answer with it.")
