"""Branching a session: a new session that starts as a copy of another's first turns.

``/retry`` regenerates the last answer without rewriting history: the transcript is
append-only (``messages`` has one row per position), so the answer being retried stays
where it was recorded, and the retry goes on in a branch that holds everything before
that turn. Both are listed in Sessions; the branch's title says what it retries.
"""

from __future__ import annotations

import time

from deskmate.app.store.db import Database, transaction
from deskmate.app.store.owner import this_process
from deskmate.app.store.recorder import new_session_id
from deskmate.app.store.sessions import resolve_id

RETRY_TITLE = "retry: "

# The per-turn tables copied with the turns kept (columns other than id and session_id).
_PER_TURN = {
    "turns": "turn, user_message, started_at, final_answer, answer_step, status, steps, "
             "model_calls, tool_calls, prompt_tokens, completion_tokens, wall_s, finished_at",
    "steps": "turn, step, thought, code, output, status, duration_s, started_at, finished_at",
    "tool_calls": "call_id, turn, step, server, tool, arguments, annotations, approval, "
                  "decided_by, decided_at, result, structured, is_error, duration_s, "
                  "started_at, finished_at",
    "usage": "turn, step, text, finish_reason, prompt_tokens, reused_tokens, "
             "evaluated_tokens, completion_tokens, ttft_s, decode_tps, total_s, at",
    "feedback": "turn, rating, comment, created_at",
}


def branch_session(db: Database, session_id: str, *, messages: int, turns: int,
                   title_prefix: str = RETRY_TITLE) -> str:
    """A new session holding the first ``messages`` messages and the first ``turns``
    turns of ``session_id`` (their steps, tool calls, usage and ratings); returns its
    id. The source session is left as it was."""
    source = resolve_id(db, session_id)
    new_id = new_session_id()
    owner = this_process()
    now = time.time()
    with transaction(db) as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, model, adapter, mode, status, created_at, "
            "updated_at, owner_host, owner_pid, owner_started) "
            "SELECT ?, ? || title, model, adapter, mode, status, ?, ?, ?, ?, ? "
            "FROM sessions WHERE id = ?",
            (new_id, title_prefix, now, now, owner.host, owner.pid, owner.started, source))
        conn.execute(
            "INSERT INTO messages (session_id, position, role, content, tool_call_id, "
            "tool_calls, turn, created_at) SELECT ?, position, role, content, "
            "tool_call_id, tool_calls, turn, created_at FROM messages "
            "WHERE session_id = ? AND position < ?", (new_id, source, messages))
        for table, columns in _PER_TURN.items():
            conn.execute(f"INSERT INTO {table} (session_id, {columns}) SELECT ?, {columns} "
                         f"FROM {table} WHERE session_id = ? AND turn >= 1 AND turn <= ?",
                         (new_id, source, turns))
    return new_id
