"""A server's questions and progress through the agent: events, recording, defaults.

Scripted model, the real everything server, the factory's agent, a real SQLite file."""

from __future__ import annotations

import json

import pytest
from test_hub_callbacks import Recording, everything

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.store import Recorder, get_session
from deskmate.app.store.export import session_markdown
from deskmate.tools.hub import Hub
from deskmate.tools.hub.elicitation import ElicitAnswer
from deskmate.tools.policy import Policy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub(mcp_bin, tmp_path_factory):
    with Hub([everything(mcp_bin, call_timeout=5)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready"
        yield hub


def call(name, **arguments):
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def run(hub, replies, asker=None):
    runtime = build_agent(ScriptedModel(replies), hub=hub, mode="eager",
                          policy=Policy(yes_all=True), asker=asker)
    try:
        return list(runtime.agent.run("go"))
    finally:
        runtime.close()


def test_an_answered_question_is_two_events_and_recorded(hub, db):
    asker = Recording(ElicitAnswer("accept", {"name": "Ada"}))
    events = run(hub, [call("everything__trigger-elicitation-request"), "done"], asker)
    started = next(e for e in events if isinstance(e, ev.ToolCallStarted))
    asked = next(e for e in events if isinstance(e, ev.ElicitationAsked))
    answered = next(e for e in events if isinstance(e, ev.ElicitationAnswered))
    assert asked.call_id == answered.call_id == started.call_id
    assert asked.mode == "form" and asked.server == "everything"
    assert asked.schema["required"] == ["name"]
    assert (answered.action, answered.content, answered.decided_by) == (
        "accept", {"name": "Ada"}, "user")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert "Name: Ada" in finished.result
    order = [type(e) for e in events]
    assert order.index(ev.ElicitationAsked) < order.index(ev.ElicitationAnswered) < order.index(
        ev.ToolCallFinished)

    recorder = Recorder.new(db)
    for event in events:
        recorder.record(event)
    row = db.execute("SELECT call_id, server, tool, mode, action, content, decided_by "
                     "FROM elicitations").fetchone()
    assert tuple(row) == (started.call_id, "everything", "trigger-elicitation-request", "form",
                          "accept", '{"name": "Ada"}', "user")
    # The session shows it, as it shows approvals: `sessions show` and the export.
    [question] = get_session(db, recorder.session_id).questions
    assert (question.action, question.content, question.decided_by) == (
        "accept", {"name": "Ada"}, "user")
    assert question.requested["required"] == ["name"]
    text = session_markdown(get_session(db, recorder.session_id))
    assert "## Questions from servers" in text
    assert '| everything.trigger-elicitation-request | Please provide inputs' in text
    assert 'accept: {"name": "Ada"} | user |' in text


def test_without_an_asker_questions_are_declined(hub):
    # What eval, finetune rollouts and a headless `deskmate run` get.
    events = run(hub, [call("everything__trigger-url-elicitation",
                            url="https://example.com/pay"), "done"])
    answered = next(e for e in events if isinstance(e, ev.ElicitationAnswered))
    assert (answered.action, answered.decided_by) == ("decline", "policy")
    assert "no one can be asked" in answered.reason
    asked = next(e for e in events if isinstance(e, ev.ElicitationAsked))
    assert asked.mode == "url" and asked.url == "https://example.com/pay"


def test_progress_becomes_events_that_are_not_recorded(hub, db):
    events = run(hub, [call("everything__trigger-long-running-operation", duration=1,
                            steps=4), "done"])
    progress = [e for e in events if isinstance(e, ev.ToolProgress)]
    assert [(p.progress, p.total) for p in progress] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    recorder = Recorder.new(db)
    for event in events:
        recorder.record(event)  # ToolProgress is passed over, not refused
    assert db.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 1
