"""The sessions store on real SQLite files: every event round-trips, reads, search, resume."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deskmate.app import paths
from deskmate.app.agent import events as ev
from deskmate.app.llm.base import ChatMessage, Usage
from deskmate.app.store import (
    Recorder,
    SessionNotFound,
    StoreError,
    delete_session,
    get_session,
    list_sessions,
    open_db,
    rate,
    rename_session,
    resume,
    search,
)
from deskmate.app.store.fts import fts_query

TOOL_CALL = {"id": "call_1", "type": "function",
             "function": {"name": "git_status", "arguments": '{"repo_path": "."}'}}


def one_turn(turn: int = 1, base: int = 0) -> list[ev.AgentEvent]:
    """One turn using every event type, in the order the agent emits them."""
    q = f"what changed in repo {turn}?"
    return [
        ev.TurnStarted(turn=turn, user_message=q, at=100.0 + turn),
        *([ev.MessageAppended(position=0, role="system", content="You are deskmate.")]
          if base == 0 else []),
        ev.MessageAppended(position=base + 1, role="user", content=q),
        ev.ModelDelta(step=1, text="Let me "),
        ev.ModelMessage(step=1, text="Let me look.\n```python\ngit.git_status()\n```",
                        finish_reason="stop",
                        usage=Usage(prompt_tokens=120, reused_tokens=100, evaluated_tokens=20,
                                    completion_tokens=15, ttft_s=0.05, decode_tps=40.0,
                                    total_s=0.4)),
        ev.MessageAppended(position=base + 2, role="assistant", content="Let me look.",
                           tool_calls=(TOOL_CALL,)),
        ev.CodeAction(step=1, thought="Let me look.", code="git.git_status()"),
        ev.ToolCallStarted(call_id=f"c{turn}", step=1, server="git", tool="git_status",
                           arguments={"repo_path": "."}),
        ev.ToolApprovalNeeded(call_id=f"c{turn}", server="git", tool="git_status",
                              arguments={"repo_path": "."},
                              annotations={"readOnlyHint": False}),
        ev.ToolApprovalDecided(call_id=f"c{turn}", decision="allow_tool", decided_by="user"),
        ev.ToolCallFinished(call_id=f"c{turn}", server="git", tool="git_status",
                            result="modified: zebra.py", is_error=False, duration_s=0.25,
                            structured={"modified": ["zebra.py"]}),
        ev.Observation(step=1, content="modified: zebra.py", status="ok", duration_s=0.3),
        ev.MessageAppended(position=base + 3, role="tool", content="modified: zebra.py",
                           tool_call_id="call_1"),
        ev.AgentError(message="format drift, corrected", kind="format"),
        ev.FinalAnswer(step=2, text="zebra.py changed"),
        ev.MessageAppended(position=base + 4, role="assistant", content="zebra.py changed"),
        ev.TurnFinished(turn=turn, status="answered", steps=2, model_calls=2, tool_calls=1,
                        prompt_tokens=250, completion_tokens=30, wall_s=1.5, at=200.0 + turn),
    ]


def test_every_event_type_round_trips(db):
    recorder = Recorder.new(db, model="qwen3-4b", adapter="a1", mode="code")
    for event in one_turn():
        recorder.record(event)
    d = get_session(db, recorder.session_id)

    assert d.summary.title == "what changed in repo 1?"
    assert (d.summary.model, d.summary.adapter, d.summary.mode) == ("qwen3-4b", "a1", "code")
    assert d.summary.status == "answered" and d.summary.updated_at == 201.0
    assert [(m.position, m.role) for m in d.messages] == [
        (0, "system"), (1, "user"), (2, "assistant"), (3, "tool"), (4, "assistant")]
    assert d.messages[2].tool_calls == (TOOL_CALL,)
    assert d.messages[3].tool_call_id == "call_1"
    assert {m.turn for m in d.messages} == {1}

    (turn,) = d.turns
    assert turn.final_answer == "zebra.py changed" and turn.status == "answered"
    assert (turn.steps, turn.model_calls, turn.tool_calls) == (2, 2, 1)
    assert (turn.prompt_tokens, turn.completion_tokens, turn.wall_s) == (250, 30, 1.5)

    (step,) = d.steps
    assert (step.code, step.output, step.status, step.duration_s) == (
        "git.git_status()", "modified: zebra.py", "ok", 0.3)

    (call,) = d.tool_calls
    assert (call.server, call.tool, call.arguments) == ("git", "git_status", {"repo_path": "."})
    assert call.annotations == {"readOnlyHint": False}
    assert (call.approval, call.decided_by) == ("allow_tool", "user")
    assert (call.result, call.is_error, call.duration_s) == ("modified: zebra.py", False, 0.25)
    assert call.structured == {"modified": ["zebra.py"]} and (call.turn, call.step) == (1, 1)

    (usage,) = d.usage
    assert usage.text.startswith("Let me look.") and usage.finish_reason == "stop"
    assert (usage.prompt_tokens, usage.reused_tokens, usage.evaluated_tokens,
            usage.completion_tokens) == (120, 100, 20, 15)
    assert (usage.ttft_s, usage.decode_tps, usage.total_s) == (0.05, 40.0, 0.4)

    (error,) = d.errors
    assert (error.kind, error.message, error.turn) == ("format", "format drift, corrected", 1)


def test_a_new_turn_makes_the_session_active_again(db):
    """Until its turn finishes, a session shows as active (a crash mid-turn leaves that)."""
    recorder = Recorder.new(db)
    for event in one_turn():
        recorder.record(event)
    recorder.record(ev.TurnStarted(turn=2, user_message="and now?"))
    summary = get_session(db, recorder.session_id).summary
    assert (summary.status, summary.title) == ("active", "what changed in repo 1?")


def test_model_deltas_are_not_stored(db):
    recorder = Recorder.new(db)
    recorder.record(ev.ModelDelta(step=1, text="tok"))
    assert db.execute("SELECT count(*) FROM usage").fetchone()[0] == 0


def test_events_out_of_order_still_land(db):
    """A decision or a result whose start was never seen is kept, not dropped."""
    recorder = Recorder.new(db)
    recorder.record(ev.ToolApprovalDecided(call_id="x", decision="deny", decided_by="policy"))
    recorder.record(ev.ToolCallFinished(call_id="x", server="fs", tool="rm", result="denied",
                                        is_error=True, duration_s=0.0))
    recorder.record(ev.Observation(step=3, content="out", status="timeout", duration_s=5.0))
    d = get_session(db, recorder.session_id)
    assert (d.tool_calls[0].approval, d.tool_calls[0].is_error) == ("deny", True)
    assert (d.tool_calls[0].server, d.tool_calls[0].tool) == ("fs", "rm")
    assert d.steps[0].status == "timeout"


def test_a_message_position_is_written_once(db):
    recorder = Recorder.new(db)
    recorder.record(ev.MessageAppended(position=0, role="user", content="a"))
    with pytest.raises(sqlite3.IntegrityError):
        recorder.record(ev.MessageAppended(position=0, role="user", content="b"))
    assert [m.content for m in get_session(db, recorder.session_id).messages] == ["a"]


def test_recording_from_another_thread(db):
    recorder = Recorder.new(db)
    worker = threading.Thread(target=lambda: [recorder.record(e) for e in one_turn()])
    worker.start()
    worker.join()
    assert len(get_session(db, recorder.session_id).messages) == 5


def test_resume_returns_the_transcript_and_continues_the_session(db):
    recorder = Recorder.new(db, model="m")
    for event in one_turn():
        recorder.record(event)
    resumed = resume(db, recorder.session_id[:6])
    assert resumed.transcript[0] == ChatMessage("system", "You are deskmate.")
    assert resumed.transcript[2] == ChatMessage("assistant", "Let me look.",
                                                tool_calls=(TOOL_CALL,))
    assert resumed.transcript[3].tool_call_id == "call_1" and len(resumed.transcript) == 5
    assert resumed.next_turn == 2
    assert resumed.kv_state_path == paths.kv_state_dir() / f"{recorder.session_id}.kv"
    assert not resumed.has_kv_state

    again = Recorder(db, resumed.summary.id)
    for event in one_turn(turn=resumed.next_turn, base=len(resumed.transcript) - 1):
        again.record(event)
    d = get_session(db, recorder.session_id)
    assert [m.position for m in d.messages] == list(range(9))
    assert [t.turn for t in d.turns] == [1, 2]
    assert len(resume(db, recorder.session_id).transcript) == 9


def test_list_rate_delete(db):
    first = Recorder.new(db, title="first")
    Recorder.new(db, title="second")
    first.record(ev.MessageAppended(position=0, role="user", content="x"))
    assert [s.title for s in list_sessions(db)] == ["first", "second"]
    assert list_sessions(db, limit=1)[0].messages == 1

    rate(db, first.session_id, "down")
    rate(db, first.session_id, "up", comment="good")  # the latest rating wins
    assert list_sessions(db)[0].rating == 1 and list_sessions(db)[1].rating is None
    with pytest.raises(SessionNotFound, match="no turn 7"):
        rate(db, first.session_id, "up", turn=7)

    kv = paths.kv_state_dir() / f"{first.session_id}.kv"
    kv.parent.mkdir(parents=True)
    kv.write_bytes(b"state")
    delete_session(db, first.session_id)
    assert not kv.exists()
    assert [s.title for s in list_sessions(db)] == ["second"]
    for table in ("messages", "feedback", "turns"):
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    with pytest.raises(SessionNotFound, match="sessions list"):
        get_session(db, first.session_id)


def test_rename(db):
    recorder = Recorder.new(db, title="old")
    other = Recorder.new(db, title="other")
    before = get_session(db, recorder.session_id).summary
    assert rename_session(db, recorder.session_id[:6], "  new\n title ") == recorder.session_id
    after = get_session(db, recorder.session_id).summary
    assert after.title == "new title" and after.updated_at == before.updated_at
    assert get_session(db, other.session_id).summary.title == "other"
    recorder.record(ev.TurnStarted(turn=1, user_message="a question"))  # keeps the new title
    assert get_session(db, recorder.session_id).summary.title == "new title"
    with pytest.raises(ValueError, match="visible"):
        rename_session(db, recorder.session_id, " \n")
    with pytest.raises(SessionNotFound):
        rename_session(db, "nope", "x")


def test_ambiguous_prefix_is_refused(db):
    Recorder.new(db, session_id="abc111")
    Recorder.new(db, session_id="abc222")
    with pytest.raises(SessionNotFound, match="several"):
        get_session(db, "abc")
    assert get_session(db, "abc2").summary.id == "abc222"
    with pytest.raises(SessionNotFound):
        get_session(db, "%")


def test_search_finds_messages_and_tool_calls(db):
    recorder = Recorder.new(db)
    for event in one_turn():
        recorder.record(event)
    hits = search(db, "zebra")
    assert {h.kind for h in hits} == {"message", "tool_call"}
    assert all(h.session_id == recorder.session_id for h in hits)
    assert any("[zebra]" in h.snippet for h in hits)
    assert [h.label for h in search(db, "git_status") if h.kind == "tool_call"] == [
        "git.git_status"]
    assert search(db, "zeb*") and not search(db, "zeb")
    assert search(db, "changes") and search(db, "changing")  # porter stemming
    delete_session(db, recorder.session_id)
    assert search(db, "zebra") == []


def test_too_many_matches_to_rank_returns_the_newest(db, monkeypatch):
    from deskmate.app.store import fts as search_module

    recorder = Recorder.new(db)
    for i in range(12):
        recorder.record(ev.MessageAppended(position=i, role="user", content=f"otter {i}",
                                           at=1000.0 + i))
    recorder.record(ev.ToolCallStarted(call_id="c", step=1, server="zoo", tool="otter",
                                       arguments={}, at=1005.5))
    ranked = search(db, "otter", limit=3)
    assert all(h.score < 0 for h in ranked)
    monkeypatch.setattr(search_module, "RANK_AT_MOST", 10)
    newest = search(db, "otter", limit=4)
    assert [h.at for h in newest] == [1011.0, 1010.0, 1009.0, 1008.0]
    assert {h.score for h in newest} == {0.0}
    assert [h.kind for h in search(db, "otter", limit=8)][6] == "tool_call"  # by time


def test_short_prefixes_are_whole_words(db):
    recorder = Recorder.new(db)
    recorder.record(ev.MessageAppended(position=0, role="user", content="ab abacus"))
    assert fts_query("ab*") == '"ab"' and fts_query("aba*") == '"aba"*'
    assert len(search(db, "ab*")) == 1 and len(search(db, "aba*")) == 1


ODD_QUERIES = ['"', '""', "'", "(", ")", "((a", "a)", "*", "**", "a*b", "NEAR", "NEAR(a b)",
               "AND", "OR", "NOT", "a OR", "-a", "a:b", "col:zebra", "^zebra", "+", "{a b}",
               "zebra\x00", "\\", "%_", "🦓", "a AND (b OR", "NEAR(\"x\" y, 2)", "", "   "]


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_odd_queries_never_raise(db, query):
    recorder = Recorder.new(db)
    recorder.record(ev.MessageAppended(position=0, role="user", content="a zebra near b"))
    search(db, query)


def test_odd_queries_keep_their_words(db):
    recorder = Recorder.new(db)
    recorder.record(ev.MessageAppended(position=0, role="user", content="a zebra NEAR here"))
    assert search(db, '"zebra') and search(db, "(zebra)") and search(db, "NEAR")
    assert search(db, "zebra AND") == []  # every word must match; AND is a word here
    assert fts_query("a*b") == '"a b"' and fts_query("*") is None


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40))
def test_any_query_text_never_raises(db, text):
    search(db, text)


def test_a_newer_file_is_refused_with_its_name(home):
    db = open_db()
    db.execute("PRAGMA user_version = 99")
    db.close()
    path = paths.data_dir() / "deskmate.db"
    with pytest.raises(StoreError, match="newer deskmate") as info:
        open_db()
    assert str(path) in str(info.value)


def test_foreign_files_are_refused(tmp_path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)").connection.commit()
    with pytest.raises(StoreError, match="not a deskmate database"):
        open_db(other)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match=str(garbage)):
        open_db(garbage)


def test_readonly_open(home, tmp_path):
    with pytest.raises(StoreError, match="no sessions database"):
        open_db(tmp_path / "missing.db", readonly=True)
    writer = open_db()
    Recorder.new(writer, title="t")
    reader = open_db(readonly=True)
    assert [s.title for s in list_sessions(reader)] == ["t"]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.execute("DELETE FROM sessions")


def test_the_database_is_wal_with_foreign_keys(db):
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"tasks", "rubrics", "runs", "adapters", "eval_results"} <= tables


def test_calls_of_rebuilt_bridges_in_one_session_keep_their_own_rows(db):
    # The TUI rebuilds its bridge (resume, model switch, server change) and keeps
    # recording into the same session: a new bridge's first call must not take the id
    # of an earlier one (the upsert would overwrite the earlier row).
    from deskmate.app.agent.bridge import CallContext, ToolBridge
    from deskmate.tools.catalog import Catalog
    from deskmate.tools.hub.results import ToolResult
    from deskmate.tools.policy import Policy
    from deskmate.tools.spec import ToolSpec

    catalog = Catalog.from_specs([ToolSpec("toy", "echo", annotations={"readOnlyHint": True},
                                           input_schema={"type": "object"})])
    recorder = Recorder.new(db)

    def call(server, tool, arguments, cancel=None, hooks=None):
        return ToolResult(server, tool, structured=arguments)

    for turn, text in ((1, "first"), (2, "second")):
        bridge = ToolBridge(catalog, call, Policy(yes=True))
        recorder.record(ev.TurnStarted(turn=turn, user_message=text))
        bridge.new_turn(CallContext(emit=recorder.record, step=1))
        bridge.call_json("toy", "echo", {"text": text})
    calls = get_session(db, recorder.session_id).tool_calls
    assert sorted(c.arguments["text"] for c in calls) == ["first", "second"]
    assert len({c.call_id for c in calls}) == 2


def test_saved_kv_states_beyond_the_budget_go_oldest_first(home):
    import os

    from deskmate.app.store.sessions import prune_kv_states

    folder = paths.kv_state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for age, sid in enumerate(["newest", "middle", "oldest", "current"]):
        kv = folder / f"{sid}.kv"
        kv.write_bytes(b"x" * 100)
        (folder / f"{sid}.kv.json").write_text("{}")
        stamp = 1_000_000 - age * 100  # "current" is the oldest file, but in use
        os.utime(kv, (stamp, stamp))
    assert prune_kv_states(keep="current", budget=250) == ["oldest", "middle"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "current.kv", "current.kv.json", "newest.kv", "newest.kv.json"]
    assert prune_kv_states(keep="current", budget=250) == []  # within the budget now
