"""The recorder: the agent's events, written to SQLite as they happen.

Each event is one short transaction, committed before ``record`` returns, so a crash or
``kill -9`` loses at most the event being written. Two events are not stored:
``ModelDelta`` (``ModelMessage`` carries the whole text of the same call, and the
assistant message lands in the transcript, so the deltas would only repeat it token by
token) and ``ToolProgress`` (passing news of a call whose result is stored).

Usage from a front end::

    recorder = Recorder.new(open_db(), model=info.name, mode="code")
    for event in agent.run(task):
        recorder.record(event)
        ...
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from deskmate.app.agent import events as ev
from deskmate.app.store.db import Database, transaction
from deskmate.app.store.errors import SessionNotFound
from deskmate.app.store.owner import this_process

TITLE_CHARS = 80

# How a turn that ended before its answer is marked in the transcript: an assistant
# message with what the model had written of its reply, then the note. The model reads
# it on the next turn (and a resumed session is the same transcript); resume and
# export keep the text. Nothing is added after an assistant message: user and
# assistant still alternate, which some chat templates require.
CUT_SHORT = {
    "cancelled": "[cancelled by the user]",
    "timeout": "[stopped: the turn ran out of time]",
    "interrupted": "[interrupted: deskmate stopped during this turn]",
}


def cut_short_note(status: str, last_role: str | None, partial: str = "") -> str | None:
    """The closing assistant message of a turn that ended with ``status`` after a
    message of ``last_role`` (None: an empty transcript); None when none is due."""
    note = CUT_SHORT.get(status)
    if note is None or last_role in (None, "assistant"):
        return None
    return f"{partial.rstrip()}\n\n{note}" if partial.strip() else note


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class Recorder:
    """Writes the events of one session. Safe to call from any one thread at a time."""

    def __init__(self, db: Database, session_id: str) -> None:
        row = db.execute("SELECT coalesce(max(turn), 0) FROM turns WHERE session_id = ?",
                         [session_id]).fetchone()
        if not db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone():
            raise SessionNotFound(f"no session {session_id!r} to record into")
        self.db = db
        self.session_id = session_id
        self.turn: int = row[0]  # the turn events belong to; 0 before the first
        self.step: int | None = None  # the last step seen, for approval events
        self._lock = threading.Lock()

    @classmethod
    def new(cls, db: Database, *, model: str = "", adapter: str = "",
            mode: str = "", title: str = "", session_id: str | None = None) -> Recorder:
        """Create a session row and a recorder for it."""
        session_id = session_id or new_session_id()
        now = time.time()
        owner = this_process()
        with transaction(db) as conn:
            conn.execute("INSERT INTO sessions (id, title, model, adapter, mode, created_at, "
                         "updated_at, owner_host, owner_pid, owner_started) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (session_id, title, model, adapter, mode, now, now, owner.host,
                          owner.pid, owner.started))
        return cls(db, session_id)

    def __call__(self, event: ev.AgentEvent) -> None:
        self.record(event)

    def record(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.ModelDelta | ev.ToolProgress):
            return  # passing news: the call's result is what stays
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise TypeError(f"the recorder does not know the event {type(event).__name__}")
        with self._lock, transaction(self.db) as conn:
            handler(self, conn, event)
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                         (event.at, self.session_id))

    # One method per event type; each runs inside the event's transaction.

    def _turn_started(self, conn, e: ev.TurnStarted) -> None:
        self.turn, self.step = e.turn, None
        conn.execute("INSERT INTO turns (session_id, turn, user_message, started_at) "
                     "VALUES (?, ?, ?, ?) ON CONFLICT (session_id, turn) DO UPDATE SET "
                     "user_message = excluded.user_message",
                     (self.session_id, e.turn, e.user_message, e.at))
        title = " ".join(e.user_message.split())[:TITLE_CHARS]
        # Active until the turn finishes, owned by this process: a resumed session
        # changes owner; see close_interrupted for who else reads it.
        owner = this_process()
        conn.execute("UPDATE sessions SET status = 'active', title = CASE title WHEN '' "
                     "THEN ? ELSE title END, owner_host = ?, owner_pid = ?, "
                     "owner_started = ? WHERE id = ?",
                     (title, owner.host, owner.pid, owner.started, self.session_id))

    def _message(self, conn, e: ev.MessageAppended) -> None:
        conn.execute("INSERT INTO messages (session_id, position, role, content, tool_call_id, "
                     "tool_calls, turn, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (self.session_id, e.position, e.role, e.content, e.tool_call_id,
                      to_json(list(e.tool_calls)) if e.tool_calls else None,
                      self.turn or None, e.at))

    def _model_message(self, conn, e: ev.ModelMessage) -> None:
        u = e.usage
        conn.execute("INSERT INTO usage (session_id, turn, step, text, finish_reason, "
                     "prompt_tokens, reused_tokens, evaluated_tokens, completion_tokens, "
                     "ttft_s, decode_tps, total_s, at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (self.session_id, self.turn or None, e.step, e.text, e.finish_reason,
                      u.prompt_tokens, u.reused_tokens, u.evaluated_tokens,
                      u.completion_tokens, u.ttft_s, u.decode_tps, u.total_s, e.at))

    def _code_action(self, conn, e: ev.CodeAction) -> None:
        self.step = e.step
        conn.execute("INSERT INTO steps (session_id, turn, step, thought, code, started_at) "
                     "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, turn, step) DO UPDATE "
                     "SET thought = excluded.thought, code = excluded.code",
                     (self.session_id, self.turn, e.step, e.thought, e.code, e.at))

    def _observation(self, conn, e: ev.Observation) -> None:
        conn.execute("INSERT INTO steps (session_id, turn, step, output, status, duration_s, "
                     "started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT (session_id, turn, step) DO UPDATE SET "
                     "output = excluded.output, status = excluded.status, "
                     "duration_s = excluded.duration_s, finished_at = excluded.finished_at",
                     (self.session_id, self.turn, e.step, e.content, e.status, e.duration_s,
                      e.at - e.duration_s, e.at))

    def _tool_started(self, conn, e: ev.ToolCallStarted) -> None:
        self.step = e.step
        conn.execute("INSERT INTO tool_calls (session_id, call_id, turn, step, server, tool, "
                     "arguments, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT (session_id, call_id) DO UPDATE SET turn = excluded.turn, "
                     "step = excluded.step, server = excluded.server, tool = excluded.tool, "
                     "arguments = excluded.arguments",
                     (self.session_id, e.call_id, self.turn or None, e.step, e.server, e.tool,
                      to_json(e.arguments), e.at))

    def _approval_needed(self, conn, e: ev.ToolApprovalNeeded) -> None:
        conn.execute("INSERT INTO tool_calls (session_id, call_id, turn, step, server, tool, "
                     "arguments, annotations, approval, started_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?) "
                     "ON CONFLICT (session_id, call_id) DO UPDATE SET "
                     "annotations = excluded.annotations, "
                     "approval = coalesce(tool_calls.approval, 'pending')",
                     (self.session_id, e.call_id, self.turn or None, self.step, e.server,
                      e.tool, to_json(e.arguments), to_json(e.annotations), e.at))

    def _approval_decided(self, conn, e: ev.ToolApprovalDecided) -> None:
        conn.execute("INSERT INTO tool_calls (session_id, call_id, turn, step, server, tool, "
                     "approval, decided_by, decided_at, started_at) "
                     "VALUES (?, ?, ?, ?, '', '', ?, ?, ?, ?) "
                     "ON CONFLICT (session_id, call_id) DO UPDATE SET "
                     "approval = excluded.approval, decided_by = excluded.decided_by, "
                     "decided_at = excluded.decided_at",
                     (self.session_id, e.call_id, self.turn or None, self.step, e.decision,
                      e.decided_by, e.at, e.at))

    def _tool_finished(self, conn, e: ev.ToolCallFinished) -> None:
        structured = None if e.structured is None else to_json(e.structured)
        conn.execute("INSERT INTO tool_calls (session_id, call_id, turn, step, server, tool, "
                     "result, structured, is_error, duration_s, started_at, finished_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT (session_id, call_id) DO UPDATE SET "
                     "server = excluded.server, tool = excluded.tool, "
                     "result = excluded.result, structured = excluded.structured, "
                     "is_error = excluded.is_error, duration_s = excluded.duration_s, "
                     "finished_at = excluded.finished_at",
                     (self.session_id, e.call_id, self.turn or None, self.step, e.server,
                      e.tool, e.result, structured, int(e.is_error), e.duration_s,
                      e.at - e.duration_s, e.at))

    def _elicitation_asked(self, conn, e: ev.ElicitationAsked) -> None:
        requested = e.url if e.mode == "url" else to_json(e.schema)
        conn.execute("INSERT INTO elicitations (session_id, call_id, turn, server, tool, mode, "
                     "message, requested, asked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (self.session_id, e.call_id, self.turn or None, e.server, e.tool, e.mode,
                      e.message, requested, e.at))

    def _elicitation_answered(self, conn, e: ev.ElicitationAnswered) -> None:
        # The call's latest open question: a server asks one at a time per call.
        conn.execute("UPDATE elicitations SET action = ?, content = ?, decided_by = ?, "
                     "reason = ?, answered_at = ? WHERE id = (SELECT max(id) FROM "
                     "elicitations WHERE session_id = ? AND call_id = ? AND action IS NULL)",
                     (e.action, to_json(e.content) if e.action == "accept" else None,
                      e.decided_by, e.reason, e.at, self.session_id, e.call_id))

    def _ensure_turn(self, conn, at: float) -> None:
        conn.execute("INSERT OR IGNORE INTO turns (session_id, turn, user_message, started_at) "
                     "VALUES (?, ?, '', ?)", (self.session_id, self.turn, at))

    def _final_answer(self, conn, e: ev.FinalAnswer) -> None:
        self._ensure_turn(conn, e.at)
        conn.execute("UPDATE turns SET final_answer = ?, answer_step = ? "
                     "WHERE session_id = ? AND turn = ?",
                     (e.text, e.step, self.session_id, self.turn))

    def _turn_finished(self, conn, e: ev.TurnFinished) -> None:
        self.turn = e.turn
        self._ensure_turn(conn, e.at - e.wall_s)
        conn.execute("UPDATE turns SET status = ?, steps = ?, model_calls = ?, tool_calls = ?, "
                     "prompt_tokens = ?, completion_tokens = ?, wall_s = ?, finished_at = ? "
                     "WHERE session_id = ? AND turn = ?",
                     (e.status, e.steps, e.model_calls, e.tool_calls, e.prompt_tokens,
                      e.completion_tokens, e.wall_s, e.at, self.session_id, e.turn))
        conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (e.status, self.session_id))

    def _error(self, conn, e: ev.AgentError) -> None:
        conn.execute("INSERT INTO errors (session_id, turn, kind, message, at) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (self.session_id, self.turn or None, e.kind, e.message, e.at))


_HANDLERS = {
    ev.TurnStarted: Recorder._turn_started,
    ev.MessageAppended: Recorder._message,
    ev.ModelMessage: Recorder._model_message,
    ev.CodeAction: Recorder._code_action,
    ev.Observation: Recorder._observation,
    ev.ToolCallStarted: Recorder._tool_started,
    ev.ToolApprovalNeeded: Recorder._approval_needed,
    ev.ToolApprovalDecided: Recorder._approval_decided,
    ev.ToolCallFinished: Recorder._tool_finished,
    ev.ElicitationAsked: Recorder._elicitation_asked,
    ev.ElicitationAnswered: Recorder._elicitation_answered,
    ev.FinalAnswer: Recorder._final_answer,
    ev.TurnFinished: Recorder._turn_finished,
    ev.AgentError: Recorder._error,
}
