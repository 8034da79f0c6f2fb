"""Full-text search over the transcript and the tool calls (SQLite FTS5).

What the user types is never handed to FTS5 as query syntax: quotes, ``AND``/``OR``/
``NOT``/``NEAR``, parentheses, ``-``, ``:`` and ``^`` would either raise or mean something
the user did not intend. Each whitespace-separated word becomes a quoted phrase of its
letters and digits (``git_status(`` → ``"git_status"``), the phrases must all match, and
a trailing ``*`` keeps its meaning as a prefix search.
"""

from __future__ import annotations

import re

import sqlite_utils

from app.store.records import SearchHit

MAX_TERMS = 32
_WORD = re.compile(r"\w+")

_MESSAGES_SQL = """
SELECT m.session_id, s.title, m.position, m.role, hit.snip, hit.score
FROM (SELECT rowid, snippet(messages_fts, 0, '[', ']', '…', 16) AS snip,
             bm25(messages_fts) AS score
      FROM messages_fts WHERE messages_fts MATCH :query ORDER BY rank LIMIT :limit) AS hit
JOIN messages m ON m.id = hit.rowid
JOIN sessions s ON s.id = m.session_id
ORDER BY hit.score
"""

_TOOL_CALLS_SQL = """
SELECT t.session_id, s.title, t.call_id, t.server || '.' || t.tool, hit.snip, hit.score
FROM (SELECT rowid, snippet(tool_calls_fts, -1, '[', ']', '…', 16) AS snip,
             bm25(tool_calls_fts) AS score
      FROM tool_calls_fts WHERE tool_calls_fts MATCH :query ORDER BY rank LIMIT :limit) AS hit
JOIN tool_calls t ON t.id = hit.rowid
JOIN sessions s ON s.id = t.session_id
ORDER BY hit.score
"""


def fts_query(text: str) -> str | None:
    """A safe FTS5 query for what the user typed; None when nothing searchable is left."""
    phrases = []
    for raw in text.split():
        words = _WORD.findall(raw)
        if words:
            prefix = "*" if raw.endswith("*") else ""
            phrases.append(f'"{" ".join(words)}"{prefix}')
    return " ".join(phrases[:MAX_TERMS]) or None


def search(db: sqlite_utils.Database, text: str, limit: int = 20) -> list[SearchHit]:
    """The best matches among messages and tool calls, best first."""
    query = fts_query(text)
    if query is None or limit <= 0:
        return []
    params = {"query": query, "limit": limit}
    hits = [SearchHit(sid, title, "message", str(pos), role, snip, score)
            for sid, title, pos, role, snip, score in db.execute(_MESSAGES_SQL, params)]
    hits += [SearchHit(sid, title, "tool_call", call_id, label, snip, score)
             for sid, title, call_id, label, snip, score in db.execute(_TOOL_CALLS_SQL, params)]
    hits.sort(key=lambda h: h.score)
    return hits[:limit]
