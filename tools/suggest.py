"""One "did you mean" for every unknown name a user or a model types.

The config loader, the tool catalog and the sandbox bridge each reject unknown names
(sections, keys, servers, tools, parameters) and suggest the close ones; they differ only in
how many suggestions they offer and how strict the match is, so those are parameters here and
each caller places the phrase in its own sentence. The sandbox worker keeps its own copy: it
runs in a bare child process with only the standard library and cannot import this package.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str], *, n: int = 1, cutoff: float = 0.6,
                 joiner: str = " or ") -> str:
    """``did you mean 'a' or 'b'?`` for up to ``n`` known names close to ``name``.

    Returns "" when none reaches ``cutoff`` (difflib's similarity ratio, 0..1), so a caller
    can fall back to listing what it knows.
    """
    close = difflib.get_close_matches(name, list(known), n=n, cutoff=cutoff)
    if not close:
        return ""
    return f"did you mean {joiner.join(repr(c) for c in close)}?"
