"""Experience reuse: the code that solved an earlier request like this one, as an example.

A small model copies well: shown the cells that solved a similar request (which tool,
which arguments, how its result was read), it calls the right tool where a signature
alone leaves it guessing. The memory is the user's own solved turns
(app/store/solved.py: rated up, or eval tasks that passed); a request recalls the most
similar one (stemmed words, cosine over their sets) if it is similar enough and used a
server that is connected now. The example shows the earlier request and its cells,
with the earlier request's folder replaced by this one's, never its answer (which
small models copy as their own).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deskmate.app.agent.parse import EXAMPLE_PREFIX
from deskmate.app.store.solved import SolvedTurn
from deskmate.tools.search import Tokenizer
from deskmate.tools.signatures import py_identifier

SIMILARITY = 0.3  # least cosine between two requests' word sets; set before measuring
EXAMPLE_CHARS = 1200  # of code shown, about 350 tokens
_PATH = re.compile(r"(?<![\w:/])/[\w.~@%+-]+(?:/[\w.~@%+-]+)+")


@dataclass(frozen=True)
class Recalled:
    note: str  # the message shown to the model
    turn: SolvedTurn
    similarity: float


class Experience:
    """Recall over solved turns; build once per session (or eval run)."""

    def __init__(self, solved: Sequence[SolvedTurn], *, similarity: float = SIMILARITY,
                 skip_same: bool = False) -> None:
        """``skip_same``: never recall the same request (but for its folders), as an eval
        must not: the task's own earlier solution would be its answer."""
        self._tokenize = Tokenizer()
        self.similarity, self.skip_same = similarity, skip_same
        self._memory = [(turn, set(self._tokenize(_words(turn.request)))) for turn in solved]

    def __len__(self) -> int:
        return len(self._memory)

    def recall(self, request: str, servers: Iterable[str]) -> Recalled | None:
        words = set(self._tokenize(_words(request)))
        connected = {py_identifier(name) for name in servers}
        best: tuple[float, SolvedTurn] | None = None
        for turn, theirs in self._memory:
            if not words or not theirs or (
                    self.skip_same and _words(turn.request).split() == _words(request).split()):
                continue
            score = len(words & theirs) / math.sqrt(len(words) * len(theirs))
            if score < self.similarity or (best is not None and score <= best[0]):
                continue
            if not any(re.search(rf"\b{re.escape(name)}\.\w", "\n".join(turn.cells))
                       for name in connected):
                continue  # its servers are not connected: its code would not run
            best = (score, turn)
        if best is None:
            return None
        score, turn = best
        return Recalled(_note(turn, request), turn, round(score, 3))


def _words(text: str) -> str:
    """The request's words, a path reduced to its last part (a file name says what the
    request is about; the folders are noise)."""
    return _PATH.sub(lambda m: " " + os.path.basename(m.group(0)), text)


def _note(turn: SolvedTurn, request: str) -> str:
    old, new = _folder(turn.request), _folder(request)
    cells: list[str] = []
    for cell in turn.cells:
        if sum(map(len, cells)) + len(cell) > EXAMPLE_CHARS and cells:
            break
        cells.append(cell[:EXAMPLE_CHARS])
    code, earlier = "\n\n".join(cells), turn.request.strip()
    if old and new and old != new:
        code, earlier = code.replace(old, new), earlier.replace(old, new)
    return f"{EXAMPLE_PREFIX}Request: {earlier}\n```python\n{code}\n```"


def _folder(text: str) -> str:
    """The folder a request's paths share, "" when it names none."""
    paths = _PATH.findall(text)
    if not paths:
        return ""
    common = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    return common if common not in ("", "/") else ""
