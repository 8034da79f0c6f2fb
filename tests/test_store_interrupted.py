"""Turns that end early: a cancelled reply is kept, marked, in the transcript; a session
whose process died mid-turn is closed as interrupted at the next start, and only then."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import threading

from deskmate.app.agent import events as ev
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.config import load_config
from deskmate.app.services.conversation import Conversation
from deskmate.app.store import Recorder, close_interrupted, get_session, open_db, resume
from deskmate.app.store.export import export_jsonl, session_markdown
from deskmate.app.store.migrate import split_statements
from deskmate.app.store.owner import Owner, is_gone, this_process
from deskmate.app.store.recorder import CUT_SHORT
from deskmate.app.store.schema import MIGRATIONS

REPLY = "Let me think about this for a long while before I answer you."


def cancelled_turn(conversation: Conversation, text: str) -> list[ev.AgentEvent]:
    """Run a turn and cancel it once the model has streamed two pieces of its reply."""
    cancel, events = threading.Event(), []
    for event in conversation.run(text, cancel):
        events.append(event)
        if sum(isinstance(e, ev.ModelDelta) for e in events) == 2:
            cancel.set()
    return events


def test_a_cancelled_reply_is_kept_and_marked(db):
    model = ScriptedModel([REPLY, "Final answer: 4"])
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db,
                                keep_kv_state=False)
    conversation.build(model, None)
    events = cancelled_turn(conversation, "2 + 2?")
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].status == "cancelled"
    closing = events[-2]
    partial = REPLY[:12]  # two pieces of six characters
    assert isinstance(closing, ev.MessageAppended) and closing.role == "assistant"
    assert closing.content == f"{partial}\n\n{CUT_SHORT['cancelled']}"
    sid = conversation.session_id
    assert sid is not None
    # The live transcript, the recorded one and a resumed one are the same.
    assert conversation.transcript[-1].content == closing.content
    assert resume(db, sid).transcript == conversation.transcript
    out = io.StringIO()
    export_jsonl(db, out, [sid])
    assert json.loads(out.getvalue())["messages"][-1]["content"] == closing.content
    assert partial in session_markdown(get_session(db, sid))
    # The next turn's model sees its cut reply, marked, between the two questions.
    list(conversation.run("and 3 + 3?", threading.Event()))
    seen = [(m.role, m.content) for m in model.calls[-1]]
    assert seen[-3:] == [("user", "2 + 2?"), ("assistant", closing.content),
                         ("user", "and 3 + 3?")]
    conversation.close()


def test_a_turn_cancelled_before_any_text_still_alternates(db):
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db,
                                keep_kv_state=False)
    conversation.build(ScriptedModel([REPLY]), None)
    cancel = threading.Event()
    cancel.set()
    finished = list(conversation.run("hello", cancel))[-1]
    assert isinstance(finished, ev.TurnFinished) and finished.status == "cancelled"
    assert [(m.role, m.content) for m in conversation.transcript][-2:] == [
        ("user", "hello"), ("assistant", CUT_SHORT["cancelled"])]
    conversation.close()


def test_an_answered_turn_gets_no_note(db):
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db,
                                keep_kv_state=False)
    conversation.build(ScriptedModel(["Final answer: 4"]), None)
    events = list(conversation.run("2 + 2?", threading.Event()))
    assert not any(isinstance(e, ev.MessageAppended) and e.content in CUT_SHORT.values()
                   for e in events)
    conversation.close()


def dead_process() -> Owner:
    """An owner whose process has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return Owner(this_process().host, child.pid, "")


def test_who_is_gone():
    me = this_process()
    assert me.pid == os.getpid() and not is_gone(me)
    assert is_gone(dead_process())
    # Not ours to judge: another host's process, whatever its pid.
    assert not is_gone(Owner("another-host", dead_process().pid, ""))
    if me.started:  # Linux: the same pid with another start time is another process
        assert is_gone(Owner(me.host, me.pid, str(int(me.started) + 1)))


def mid_turn(db, owner: Owner | None = None) -> str:
    """A session left in the middle of a turn, owned by ``owner`` (default: us)."""
    recorder = Recorder.new(db, model="m")
    recorder.record(ev.TurnStarted(turn=1, user_message="count to ten"))
    recorder.record(ev.MessageAppended(position=0, role="user", content="count to ten"))
    if owner is not None:
        db.execute("UPDATE sessions SET owner_host = ?, owner_pid = ?, owner_started = ? "
                   "WHERE id = ?", (owner.host, owner.pid, owner.started, recorder.session_id))
    return recorder.session_id


def test_only_sessions_of_dead_processes_are_closed(db):
    ours, dead = mid_turn(db), mid_turn(db, dead_process())
    elsewhere = mid_turn(db, Owner("another-host", dead_process().pid, ""))
    assert close_interrupted(db) == [dead]
    assert close_interrupted(db) == []  # closed once
    statuses = {s: get_session(db, s).summary.status for s in (ours, dead, elsewhere)}
    assert statuses == {ours: "active", dead: "interrupted", elsewhere: "active"}
    detail = get_session(db, dead)
    assert detail.turns[0].status == "interrupted"
    assert [(m.role, m.content) for m in detail.messages] == [
        ("user", "count to ten"), ("assistant", CUT_SHORT["interrupted"])]
    # Resumed, it goes on from the marked transcript, owned by its new process.
    recorder = Recorder(db, dead)
    recorder.record(ev.TurnStarted(turn=2, user_message="again"))
    assert get_session(db, dead).summary.status == "active"
    assert close_interrupted(db) == []


def test_the_cli_lists_an_interrupted_session(db):
    from click.testing import CliRunner

    from deskmate.app.cli import main

    sid = mid_turn(db, dead_process())
    result = CliRunner().invoke(main, ["sessions", "list"])
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.stdout.splitlines() if line.startswith(sid)]
    assert " interrupted " in line


def test_the_sessions_screen_says_interrupted(db):
    from deskmate.app.store import get_summary
    from deskmate.app.ui.sessions import _title

    sid = mid_turn(db, dead_process())
    close_interrupted(db)
    assert _title(get_summary(db, sid)) == "(interrupted) count to ten"


def test_the_upgrade_closes_sessions_an_older_deskmate_left_active(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for migration in MIGRATIONS[:4]:
        for statement in split_statements(migration.sql):
            conn.execute(statement)
    conn.executescript("""
        INSERT INTO sessions (id, title, status, created_at, updated_at)
        VALUES ('left', 'left mid-turn', 'active', 1, 2), ('done', 'done', 'answered', 1, 2);
        INSERT INTO turns (session_id, turn, user_message, started_at)
        VALUES ('left', 1, 'q', 1);
        INSERT INTO messages (session_id, position, role, content, turn, created_at)
        VALUES ('left', 0, 'system', 's', NULL, 1), ('left', 1, 'user', 'q', 1, 1),
               ('done', 0, 'user', 'q', 1, 1), ('done', 1, 'assistant', 'a', 1, 1);
        PRAGMA user_version = 4;
    """)
    conn.close()
    with open_db(path) as db:
        left, done = get_session(db, "left"), get_session(db, "done")
    assert left.summary.status == "interrupted" and left.turns[0].status == "interrupted"
    assert (left.messages[-1].position, left.messages[-1].role, left.messages[-1].content,
            left.messages[-1].turn) == (2, "assistant", CUT_SHORT["interrupted"], 1)
    assert done.summary.status == "answered" and len(done.messages) == 2
