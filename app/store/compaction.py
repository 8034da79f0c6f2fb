"""Compaction in the store: a session that neared its model's context window goes on in
a compacted copy of itself.

The transcript is append-only (one ``messages`` row per position), so compaction never
rewrites the session it shortens: like ``/retry`` (``branch.py``), it starts a new
session, titled ``compacted: …``, holding the same system prompt, the summary of the
older turns as one user message (which starts with ``SUMMARY_HEAD``, so it reads as
what it is) and the model's acknowledgement, then the newest turns' messages as they
were; its turns, steps, tool calls, usage and ratings are all copied. The new session
is append-only from there; the old one keeps everything the summary replaced.
"""

from __future__ import annotations

from deskmate.app.store.branch import branch_session
from deskmate.app.store.db import Database, transaction
from deskmate.app.store.sessions import resolve_id

COMPACT_TITLE = "compacted: "
SUMMARY_HEAD = "[Summary of the earlier conversation, which no longer fits the context:]"


def compacted_session(db: Database, session_id: str, *, summary: str, ack: str,
                      keep_from: int, turns: int) -> str:
    """A new session: ``session_id``'s system message, the summary message (starting
    with ``SUMMARY_HEAD``) and ``ack``, then its messages from position ``keep_from`` on;
    returns the new id."""
    source = resolve_id(db, session_id)
    with transaction(db) as conn:
        title = conn.execute("SELECT title FROM sessions WHERE id = ?", (source,)).fetchone()[0]
    # Compacted again: the title says so once.
    prefix = "" if title.startswith(COMPACT_TITLE) else COMPACT_TITLE
    new_id = branch_session(db, source, messages=1, turns=turns, title_prefix=prefix)
    with transaction(db) as conn:
        now = conn.execute("SELECT created_at FROM sessions WHERE id = ?",
                           (new_id,)).fetchone()[0]
        conn.executemany(
            "INSERT INTO messages (session_id, position, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(new_id, 1, "user", summary, now),
             (new_id, 2, "assistant", ack, now)])
        conn.execute(
            "INSERT INTO messages (session_id, position, role, content, tool_call_id, "
            "tool_calls, turn, created_at) SELECT ?, position - ? + 3, role, content, "
            "tool_call_id, tool_calls, turn, created_at FROM messages "
            "WHERE session_id = ? AND position >= ?", (new_id, keep_from, source, keep_from))
    return new_id
