"""Reading, rating, deleting and resuming recorded sessions; closing those a killed
process left active; the tool calls they ran."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from deskmate.app import paths
from deskmate.app.store.db import Database, transaction
from deskmate.app.store.errors import SessionNotFound
from deskmate.app.store.owner import Owner, is_gone
from deskmate.app.store.recorder import cut_short_note
from deskmate.app.store.records import (
    ErrorRecord,
    FeedbackRecord,
    MessageRecord,
    QuestionRecord,
    RecordedCall,
    ResumedSession,
    SessionDetail,
    SessionSummary,
    StepRecord,
    ToolCallRecord,
    TurnRecord,
    UsageRecord,
)

_SUMMARY_SQL = """
SELECT s.id, s.title, s.model, s.adapter, s.mode, s.status, s.created_at, s.updated_at,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns,
       (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS messages,
       (SELECT f.rating FROM feedback f WHERE f.session_id = s.id AND f.turn = 0) AS rating
FROM sessions s
"""


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def resolve_id(db: Database, id_or_prefix: str) -> str:
    """The full id of the one session whose id is or starts with ``id_or_prefix``."""
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", [id_or_prefix]).fetchone():
        return id_or_prefix
    escaped = id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = db.execute("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 3",
                      [escaped + "%"]).fetchall()
    if not rows or not id_or_prefix:
        raise SessionNotFound(f"no session matches {id_or_prefix!r}; "
                              "`deskmate sessions list` shows the recorded ones")
    if len(rows) > 1:
        raise SessionNotFound(f"{id_or_prefix!r} matches several sessions "
                              f"({', '.join(r[0] for r in rows)}, …); give more of the id")
    return rows[0][0]


def list_sessions(db: Database, limit: int | None = None,
                  offset: int = 0) -> list[SessionSummary]:
    """Most recently updated first."""
    sql = _SUMMARY_SQL + " ORDER BY s.updated_at DESC, s.id LIMIT ? OFFSET ?"
    rows = db.execute(sql, [-1 if limit is None else limit, offset]).fetchall()
    return [SessionSummary(*row) for row in rows]


def get_summary(db: Database, session_id: str) -> SessionSummary:
    session_id = resolve_id(db, session_id)
    return SessionSummary(*db.execute(_SUMMARY_SQL + " WHERE s.id = ?", [session_id]).fetchone())


MESSAGE_COLUMNS = "position, role, content, tool_call_id, tool_calls, turn, created_at"


def message_record(position: int, role: str, content: str, tool_call_id: str | None,
                   tool_calls: str | None, turn: int | None, at: float) -> MessageRecord:
    """A row of ``MESSAGE_COLUMNS`` as a record."""
    return MessageRecord(position, role, content, tool_call_id, tuple(_loads(tool_calls) or ()),
                         turn, at)


def load_messages(db: Database, session_id: str) -> list[MessageRecord]:
    rows = db.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? "
                      "ORDER BY position", [session_id])
    return [message_record(*row) for row in rows]


def get_session(db: Database, session_id: str) -> SessionDetail:
    """Everything recorded about one session (id or unique prefix)."""
    summary = get_summary(db, session_id)
    sid = [summary.id]
    turns = [TurnRecord(*r) for r in db.execute(
        "SELECT turn, user_message, started_at, final_answer, status, steps, model_calls, "
        "tool_calls, prompt_tokens, completion_tokens, wall_s FROM turns "
        "WHERE session_id = ? ORDER BY turn", sid)]
    steps = [StepRecord(*r) for r in db.execute(
        "SELECT turn, step, thought, code, output, status, duration_s FROM steps "
        "WHERE session_id = ? ORDER BY turn, step", sid)]
    calls = [ToolCallRecord(call_id, turn, step, server, tool, _loads(args) or {},
                            _loads(annotations), approval, decided_by, result,
                            _loads(structured), None if is_error is None else bool(is_error),
                            duration)
             for (call_id, turn, step, server, tool, args, annotations, approval, decided_by,
                  result, structured, is_error, duration) in db.execute(
        "SELECT call_id, turn, step, server, tool, arguments, annotations, approval, "
        "decided_by, result, structured, is_error, duration_s FROM tool_calls "
        "WHERE session_id = ? ORDER BY started_at, id", sid)]
    usage = [UsageRecord(*r) for r in db.execute(
        "SELECT turn, step, text, finish_reason, prompt_tokens, reused_tokens, "
        "evaluated_tokens, completion_tokens, ttft_s, decode_tps, total_s FROM usage "
        "WHERE session_id = ? ORDER BY id", sid)]
    errors = [ErrorRecord(*r) for r in db.execute(
        "SELECT turn, kind, message, at FROM errors WHERE session_id = ? ORDER BY id", sid)]
    feedback = [FeedbackRecord(*r) for r in db.execute(
        "SELECT turn, rating, comment, created_at FROM feedback WHERE session_id = ? "
        "ORDER BY turn", sid)]
    questions = [QuestionRecord(call_id, turn, server, tool, mode, message,
                                requested if mode == "url" else _loads(requested), action,
                                _loads(content), decided_by, reason)
                 for (call_id, turn, server, tool, mode, message, requested, action, content,
                      decided_by, reason) in db.execute(
        "SELECT call_id, turn, server, tool, mode, message, requested, action, content, "
        "decided_by, reason FROM elicitations WHERE session_id = ? ORDER BY id", sid)]
    return SessionDetail(summary, tuple(load_messages(db, summary.id)), tuple(turns),
                         tuple(steps), tuple(calls), tuple(usage), tuple(errors),
                         tuple(feedback), tuple(questions))


def kv_state_path(session_id: str) -> Path:
    return paths.kv_state_dir() / f"{session_id}.kv"


# A 4B model's KV state is ~150 KB a token: a few long sessions fill gigabytes. Past
# this, the least recently saved states go; resuming such a session re-evaluates its
# transcript instead (slower, nothing lost).
KV_STATE_BUDGET_BYTES = 4 << 30


def prune_kv_states(keep: str | None = None, budget: int = KV_STATE_BUDGET_BYTES) -> list[str]:
    """Delete the oldest saved KV states until they fit ``budget``; never ``keep``'s.

    Returns the session ids whose state was deleted."""
    states = []
    for path in paths.kv_state_dir().glob("*.kv"):
        try:
            stat = path.stat()
        except OSError:
            continue  # deleted meanwhile
        states.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in states)
    dropped = []
    for _, size, path in sorted(states):
        if total <= budget:
            break
        if path.stem == keep:
            continue
        path.unlink(missing_ok=True)
        Path(f"{path}.json").unlink(missing_ok=True)
        total -= size
        dropped.append(path.stem)
    return dropped


def resume(db: Database, session_id: str) -> ResumedSession:
    """The transcript to continue from, and where the session's KV state is kept.

    Pass ``kv_state_path`` to ``LlamaCppModel.load_state`` (it returns 0 and the prompt
    is simply evaluated when the file is missing or from another model), and record the
    continuation with ``Recorder(db, summary.id)``.
    """
    summary = get_summary(db, session_id)
    transcript = [m.to_chat_message() for m in load_messages(db, summary.id)]
    next_turn = db.execute("SELECT coalesce(max(turn), 0) + 1 FROM turns WHERE session_id = ?",
                           [summary.id]).fetchone()[0]
    return ResumedSession(summary, transcript, kv_state_path(summary.id), next_turn)


def delete_session(db: Database, session_id: str) -> str:
    """Delete a session, everything recorded with it, and its KV state; returns its id."""
    session_id = resolve_id(db, session_id)
    with transaction(db) as conn:
        conn.execute("DELETE FROM sessions WHERE id = ?", [session_id])
    for path in (kv_state_path(session_id), Path(f"{kv_state_path(session_id)}.json")):
        path.unlink(missing_ok=True)
    return session_id


def close_interrupted(db: Database) -> list[str]:
    """Close as ``interrupted`` the sessions whose turn's process is gone (killed
    mid-turn, so nothing recorded the turn's end); returns their ids.

    Each start of a face calls this. A session whose process still runs (another
    deskmate's turn) is left alone, and so is one named by another host.
    """
    rows = db.execute("SELECT id, owner_host, owner_pid, owner_started FROM sessions "
                      "WHERE status = 'active' AND owner_pid IS NOT NULL").fetchall()
    closed = []
    for sid, host, pid, started in rows:
        if not is_gone(Owner(host or "", pid, started or "")):
            continue
        with transaction(db) as conn:
            # Only if no process resumed it meanwhile: the owner must be the one judged.
            if not conn.execute("UPDATE sessions SET status = 'interrupted' WHERE id = ? "
                                "AND status = 'active' AND owner_pid = ? "
                                "AND owner_host IS ? AND owner_started IS ?",
                                (sid, pid, host, started)).rowcount:
                continue
            conn.execute("UPDATE turns SET status = 'interrupted' "
                         "WHERE session_id = ? AND status IS NULL", [sid])
            last = conn.execute("SELECT position, role, turn FROM messages WHERE "
                                "session_id = ? ORDER BY position DESC LIMIT 1",
                                [sid]).fetchone()
            note = cut_short_note("interrupted", last[1] if last else None)
            if last is not None and note is not None:
                conn.execute("INSERT INTO messages (session_id, position, role, content, "
                             "turn, created_at) VALUES (?, ?, 'assistant', ?, ?, ?)",
                             (sid, last[0] + 1, note, last[2], time.time()))
        closed.append(sid)
    return closed


def rename_session(db: Database, session_id: str, title: str) -> str:
    """Give a session (id or unique prefix) a new title; returns its full id.

    Whitespace is folded to single spaces, as the recorder does for the first message.
    """
    title = " ".join(title.split())
    if not title:
        raise ValueError("a session title needs at least one visible character")
    session_id = resolve_id(db, session_id)
    with transaction(db) as conn:
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
    return session_id


def rate(db: Database, session_id: str, rating: Literal["up", "down"] | int,
         *, turn: int = 0, comment: str = "") -> str:
    """Thumbs up or down for the session (turn 0) or one answer; the latest rating wins."""
    value = {"up": 1, "down": -1}.get(rating, rating) if isinstance(rating, str) else rating
    if value not in (1, -1):
        raise ValueError(f"a rating is 'up' or 'down', not {rating!r}")
    session_id = resolve_id(db, session_id)
    if turn and not db.execute("SELECT 1 FROM turns WHERE session_id = ? AND turn = ?",
                               [session_id, turn]).fetchone():
        raise SessionNotFound(f"session {session_id} has no turn {turn}")
    now = time.time()
    with transaction(db) as conn:
        conn.execute("INSERT INTO feedback (session_id, turn, rating, comment, created_at) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, turn) DO UPDATE SET "
                     "rating = excluded.rating, comment = excluded.comment, "
                     "created_at = excluded.created_at",
                     (session_id, turn, value, comment, now))
    return session_id


def recorded_calls(db: Database) -> list[RecordedCall]:
    """Every tool call that really ran in the sessions (finished, with a result, not
    denied), oldest first; a call whose JSON does not parse is left out."""
    rows = db.execute(
        "SELECT server, tool, arguments, result, structured, is_error FROM tool_calls "
        "WHERE result IS NOT NULL AND coalesce(approval, '') != 'deny' "
        "AND finished_at IS NOT NULL ORDER BY started_at").fetchall()
    out = []
    for server, tool, arguments, result, structured, is_error in rows:
        try:
            args = json.loads(arguments or "{}")
            value = json.loads(structured) if structured else None
        except ValueError:
            continue
        out.append(RecordedCall(server, tool, args, result, value, bool(is_error)))
    return out
