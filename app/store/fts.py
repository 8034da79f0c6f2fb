"""Full-text search over the transcript and the tool calls (SQLite FTS5).

What the user types is never handed to FTS5 as query syntax: quotes, ``AND``/``OR``/
``NOT``/``NEAR``, parentheses, ``-``, ``:`` and ``^`` would either raise or mean something
the user did not intend. Each whitespace-separated word becomes a quoted phrase of its
letters and digits (``git_status(`` → ``"git_status"``), the phrases must all match, and
a trailing ``*`` keeps its meaning as a prefix search (of three letters or more, the
prefix the index keeps; ``ab*`` searches the word ``ab``).

Ranking (bm25) costs a few microseconds per matching row, so a word found in most of a
million messages would take seconds to rank. Counting matches up to a cap is cheap: past
``RANK_AT_MOST`` matches (in messages or in tool calls) the newest matches are returned
instead of the best-ranked, which keeps every search around tens of milliseconds.
"""

from __future__ import annotations

import re

from deskmate.app.store.db import Database
from deskmate.app.store.records import SearchHit

MAX_TERMS = 32
RANK_AT_MOST = 5000
_WORD = re.compile(r"\w+")

_MESSAGES_SQL = """
SELECT m.session_id, s.title, m.position, m.role, hit.snip, hit.score, m.created_at
FROM (SELECT rowid, snippet(messages_fts, 0, '[', ']', '…', 16) AS snip,
             {score} AS score
      FROM messages_fts WHERE messages_fts MATCH :query ORDER BY {order} LIMIT :limit) AS hit
JOIN messages m ON m.id = hit.rowid
JOIN sessions s ON s.id = m.session_id
ORDER BY hit.score, hit.rowid DESC
"""

_TOOL_CALLS_SQL = """
SELECT t.session_id, s.title, t.call_id, t.server || '.' || t.tool, hit.snip, hit.score,
       t.started_at
FROM (SELECT rowid, snippet(tool_calls_fts, -1, '[', ']', '…', 16) AS snip,
             {score} AS score
      FROM tool_calls_fts WHERE tool_calls_fts MATCH :query ORDER BY {order} LIMIT :limit
     ) AS hit
JOIN tool_calls t ON t.id = hit.rowid
JOIN sessions s ON s.id = t.session_id
ORDER BY hit.score, hit.rowid DESC
"""


def _too_many(db: Database, table: str, query: str) -> bool:
    """Whether ``query`` matches more rows of ``table`` than are worth ranking."""
    return db.execute(f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} "
                      f"MATCH ? LIMIT {RANK_AT_MOST + 1})", [query]).fetchone()[0] > RANK_AT_MOST


def fts_query(text: str) -> str | None:
    """A safe FTS5 query for what the user typed; None when nothing searchable is left."""
    phrases = []
    for raw in text.split():
        words = _WORD.findall(raw)
        if words:
            prefix = "*" if raw.endswith("*") and len(words[-1]) >= 3 else ""
            phrases.append(f'"{" ".join(words)}"{prefix}')
    return " ".join(phrases[:MAX_TERMS]) or None


def search(db: Database, text: str, limit: int = 20) -> list[SearchHit]:
    """The best matches among messages and tool calls, best first."""
    query = fts_query(text)
    if query is None or limit <= 0:
        return []
    params = {"query": query, "limit": limit}
    newest = _too_many(db, "messages_fts", query) or _too_many(db, "tool_calls_fts", query)
    # FTS5's rank is bm25 and sorts inside the index; past RANK_AT_MOST, newest first.
    sql = {"score": "0.0", "order": "rowid DESC"} if newest else {"score": "rank", "order": "rank"}
    hits = [SearchHit(sid, title, "message", str(pos), role, snip, score, at)
            for sid, title, pos, role, snip, score, at
            in db.execute(_MESSAGES_SQL.format(**sql), params)]
    hits += [SearchHit(sid, title, "tool_call", call_id, label, snip, score, at)
             for sid, title, call_id, label, snip, score, at
             in db.execute(_TOOL_CALLS_SQL.format(**sql), params)]
    hits.sort(key=(lambda h: -h.at) if newest else (lambda h: h.score))
    return hits[:limit]
