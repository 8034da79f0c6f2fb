"""Durability and concurrency with real processes: kill -9 mid-recording, a reader meanwhile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from deskmate.app.store import Recorder, close_interrupted, get_session, open_db, resume
from deskmate.app.store.db import db_path
from deskmate.app.store.recorder import CUT_SHORT

# Records forever, cycling through event kinds; after each record() returns, prints
# what it wrote. Every printed line is an event the recorder acknowledged.
WRITER = textwrap.dedent("""
    import sys
    from deskmate.app.agent import events as ev
    from deskmate.app.llm.base import Usage
    from deskmate.app.store import Recorder, open_db

    recorder = Recorder.new(open_db(), title="crash test")
    print("session", recorder.session_id, flush=True)
    i = 0
    while True:
        recorder.record(ev.MessageAppended(position=i, role="user", content=f"message {i} "
                                           + "lorem ipsum " * 50))
        print("message", i, flush=True)
        recorder.record(ev.ToolCallStarted(call_id=f"c{i}", step=i, server="s", tool="t",
                                           arguments={"i": i}))
        print("call", i, flush=True)
        recorder.record(ev.ToolCallFinished(call_id=f"c{i}", server="s", tool="t",
                                            result="r" * 2000, is_error=False, duration_s=0.01))
        print("result", i, flush=True)
        recorder.record(ev.ModelMessage(step=i, text="x" * 500, finish_reason="stop",
                                        usage=Usage(prompt_tokens=i)))
        print("usage", i, flush=True)
        i += 1
""")


def spawn(code: str, home, *args: str) -> subprocess.Popen:
    env = {**os.environ, "DESKMATE_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_kill_9_mid_recording_loses_nothing_acknowledged(home):
    writer = spawn(WRITER, home)
    _, session_id = writer.stdout.readline().split()
    lines = []
    while len(lines) < 400:  # let it get well into recording, then kill it mid-flight
        lines.append(writer.stdout.readline())
        assert lines[-1], writer.stderr.read()
    writer.send_signal(signal.SIGKILL)
    rest, _ = writer.communicate(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    # The kill can land inside a print (its first word written, not the rest): a line with
    # no newline acknowledges nothing.
    complete = rest.split("\n")[:-1]
    acknowledged = [line.split() for line in [*lines, *complete] if line.strip()]

    db = open_db()
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    d = get_session(db, session_id)
    last = {kind: int(i) for kind, i in acknowledged}  # the last of each kind printed
    assert last["message"] >= 99
    messages = {m.position for m in d.messages}
    assert set(range(last["message"] + 1)) <= messages
    calls = {c.call_id: c for c in d.tool_calls}
    for i in range(last["call"] + 1):
        assert f"c{i}" in calls
    for i in range(last["result"] + 1):
        assert calls[f"c{i}"].result == "r" * 2000
    assert len(d.usage) >= last["usage"] + 1
    # the index matches the table: nothing half-written
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")  # raises
    assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'lorem'"
                      ).fetchone()[0] == len(messages)
    # The next start closes the session its killed process left active, and says so
    assert d.summary.status == "active"
    assert close_interrupted(db) == [session_id]
    d = get_session(db, session_id)
    assert d.summary.status == "interrupted"
    assert (d.messages[-1].role, d.messages[-1].content) == ("assistant",
                                                             CUT_SHORT["interrupted"])
    # and the session can be recorded into again
    Recorder(db, session_id).record(ev_message(len(d.messages)))
    assert len(get_session(db, session_id).messages) == len(d.messages) + 1


def ev_message(position: int):
    from deskmate.app.agent.events import MessageAppended

    return MessageAppended(position=position, role="user", content="after the crash")


# A turn whose model is still generating when the process is killed: the session
# stays active, owned by this process, until the next start sees it is gone.
GENERATING = textwrap.dedent("""
    import threading, time
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.config import load_config
    from deskmate.app.services.conversation import Conversation

    def generating(messages):
        time.sleep(600)
        return "never"

    conversation = Conversation(load_config(), None, mode="eager", keep_kv_state=False)
    conversation.build(ScriptedModel([generating]), None)
    for event in conversation.run("count to ten", threading.Event()):
        if isinstance(event, ev.MessageAppended) and event.role == "user":
            print("session", conversation.session_id, flush=True)
""")


def test_a_session_killed_mid_generation_is_closed_at_the_next_start(home):
    from click.testing import CliRunner

    from deskmate.app.cli import main

    writer = spawn(GENERATING, home)
    line = writer.stdout.readline()
    assert line, writer.stderr.read()
    session_id = line.split()[1]
    db = open_db()
    # Another process running a turn (the TUI beside a `deskmate run`) is left alone.
    assert close_interrupted(db) == []
    assert get_session(db, session_id).summary.status == "active"
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=30)
    listed = CliRunner().invoke(main, ["sessions", "list"])  # a start: it closes the session
    assert listed.exit_code == 0, listed.output
    assert [line.split()[3] for line in listed.stdout.splitlines()
            if line.startswith(session_id)] == ["interrupted"]
    detail = get_session(db, session_id)
    assert detail.summary.status == "interrupted" and detail.turns[0].status == "interrupted"
    # Resumed, the model sees its question and the mark of the turn that never ended.
    assert [(m.role, m.content) for m in resume(db, session_id).transcript][1:] == [
        ("user", "count to ten"), ("assistant", CUT_SHORT["interrupted"])]


READER = textwrap.dedent("""
    import json, sys, time
    from deskmate.app.store import open_db

    db = open_db(sys.argv[1], readonly=True)
    print("ready", flush=True)
    counts, deadline = [], time.monotonic() + 60
    while time.monotonic() < deadline:
        db.execute("BEGIN")  # one snapshot for both counts
        n = db.execute("SELECT count(*) FROM messages").fetchone()[0]
        hits = db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'"
                          ).fetchone()[0]
        db.execute("COMMIT")
        assert hits == n, (hits, n)  # a reader never sees half of a transaction
        counts.append(n)
        if n >= int(sys.argv[2]):
            break
        time.sleep(0.002)
    print(json.dumps(counts), flush=True)
""")


def test_another_process_reads_while_the_app_writes(home):
    from deskmate.app.agent.events import MessageAppended

    db = open_db()
    recorder = Recorder.new(db)
    total = 300
    reader = spawn(READER, home, str(db_path()), str(total))
    assert reader.stdout.readline().strip() == "ready", reader.stderr.read()
    start = time.monotonic()
    for i in range(total):
        recorder.record(MessageAppended(position=i, role="assistant", content=f"zebra {i}"))
        time.sleep(0.003)  # an agent's pace, so the reader sees the count grow
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    counts = json.loads(out)
    assert counts[-1] == total
    assert counts == sorted(counts)
    assert len(set(counts)) > 5, counts  # it really read during the writes
    assert time.monotonic() - start < 30  # the reader never blocked the writer for long
