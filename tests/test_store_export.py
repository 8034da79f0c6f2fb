"""Export, validated by loading it back: JSONL in the OpenAI chat format, and Markdown."""

from __future__ import annotations

import io
import json

from deskmate.app.agent import events as ev
from deskmate.app.store import Recorder, get_session, resume
from deskmate.app.store.export import export_jsonl, export_markdown

ROLES = {"system", "user", "assistant", "tool"}


def record_session(db, *, tool_calls=True, title=""):
    recorder = Recorder.new(db, title=title)
    calls = ({"id": "call_a", "type": "function",
              "function": {"name": "read_file", "arguments": {"path": "notes ```md```"}}},
             {"name": "git_log", "arguments": '{"n": 3}'},  # flat, id-less: normalised
             ) if tool_calls else ()
    for event in (
        ev.MessageAppended(position=0, role="system", content="You are deskmate."),
        ev.TurnStarted(turn=1, user_message="Summarise my notes — ünïcode ✓"),
        ev.MessageAppended(position=1, role="user", content="Summarise my notes — ünïcode ✓"),
        ev.MessageAppended(position=2, role="assistant", content="", tool_calls=calls),
        ev.MessageAppended(position=3, role="tool" if calls else "user",
                           content="```\ncode\n```", tool_call_id="call_a" if calls else None),
        ev.MessageAppended(position=4, role="assistant", content="They say hi."),
        ev.ToolCallStarted(call_id="call_a", step=1, server="fs", tool="read_file",
                           arguments={"path": "notes"}),
        ev.ToolApprovalDecided(call_id="call_a", decision="auto", decided_by="policy"),
    ):
        recorder.record(event)
    return recorder.session_id


def validate_openai_chat(record: dict) -> None:
    """The rules the OpenAI chat format (and TRL's conversational datasets) rely on."""
    assert set(record) == {"messages"}
    seen_ids: set[str] = set()
    for m in record["messages"]:
        assert m["role"] in ROLES and isinstance(m["content"], str)
        assert set(m) <= {"role", "content", "tool_calls", "tool_call_id"}
        for call in m.get("tool_calls", []):
            assert m["role"] == "assistant"
            assert set(call) == {"id", "type", "function"} and call["type"] == "function"
            assert isinstance(call["id"], str) and call["id"]
            assert isinstance(call["function"]["name"], str)
            json.loads(call["function"]["arguments"])  # a JSON text, as OpenAI sends it
            seen_ids.add(call["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in seen_ids


def test_jsonl_loads_back_to_the_transcript(db):
    first = record_session(db)
    second = record_session(db, tool_calls=False)
    Recorder.new(db)  # an empty session: nothing to train on, skipped
    out = io.StringIO()
    assert export_jsonl(db, out) == 2

    lines = out.getvalue().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        validate_openai_chat(record)
    for sid, record in zip((first, second), records, strict=True):
        transcript = resume(db, sid).transcript
        assert [(m["role"], m["content"]) for m in record["messages"]] == [
            (m.role, m.content) for m in transcript]
    calls = records[0]["messages"][2]["tool_calls"]
    assert calls[0] == {"id": "call_a", "type": "function", "function": {
        "name": "read_file", "arguments": '{"path": "notes ```md```"}'}}
    assert calls[1]["function"] == {"name": "git_log", "arguments": '{"n": 3}'}
    assert calls[1]["id"] == "call_2_1"
    assert "tool_calls" not in records[1]["messages"][2]
    assert "ünïcode ✓" in lines[0]  # readable UTF-8, not \\u escapes


def test_jsonl_of_chosen_sessions_in_the_order_asked(db):
    a, b = record_session(db, title="a"), record_session(db, title="b")
    out = io.StringIO()
    export_jsonl(db, out, [b[:6], a, b])
    assert len(out.getvalue().splitlines()) == 2


def test_jsonl_batches_many_sessions_in_order(db):
    for i in range(1203):  # more than two batches
        recorder = Recorder.new(db, session_id=f"{1203 - i:06d}")  # ids sort backwards
        for position in range(i % 3 + 1):
            recorder.record(ev.MessageAppended(position=position, role="user",
                                               content=f"session {i} message {position}"))
    out = io.StringIO()
    assert export_jsonl(db, out) == 1203
    for i, line in enumerate(out.getvalue().splitlines()):  # oldest first, none mixed up
        assert [m["content"] for m in json.loads(line)["messages"]] == [
            f"session {i} message {p}" for p in range(i % 3 + 1)]


def test_markdown_shows_everything_readably(db):
    sid = record_session(db, title="Notes")
    out = io.StringIO()
    assert export_markdown(db, out, [sid]) == 1
    text = out.getvalue()
    assert text.startswith("# Notes\n")
    d = get_session(db, sid)
    for m in d.messages:
        assert m.content in text
    assert "````\n```\ncode\n```\n````" in text  # fences never close early
    assert "Tool call `read_file`" in text and "| fs.read_file | auto | policy |" in text
