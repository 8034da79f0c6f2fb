"""The agent loop in eager mode: scripted model, real MCP server, real bridge and policy."""

from __future__ import annotations

import json

import pytest
from conftest import toy_server

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions_eager import EagerActions
from deskmate.app.agent.bridge import ToolBridge
from deskmate.app.agent.loop import Agent, AgentLimits
from deskmate.app.agent.prompt import EAGER_PROMPT
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.tools.catalog import Catalog
from deskmate.tools.hub import Hub
from deskmate.tools.policy import Policy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    with Hub([toy_server(call_timeout=5)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready"
        yield hub


def make_agent(hub, replies, policy=None, **limits):
    catalog = Catalog.from_specs(hub.tools())
    bridge = ToolBridge(catalog, hub.call, policy or Policy(yes_all=True))
    model = ScriptedModel(replies)
    agent = Agent(model, EagerActions(bridge), bridge, system_prompt=EAGER_PROMPT,
                  limits=AgentLimits(**limits))
    return agent, model


def call(name, **arguments):
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


def test_tool_call_then_answer(hub):
    agent, model = make_agent(hub, [call("toy__add", a=20, b=22), "The sum is 42."])
    events = list(agent.run("What is 20 + 22?"))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "TurnStarted" and kinds[-1] == "TurnFinished"
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.result == "42" and not finished.is_error
    assert next(e for e in events if isinstance(e, ev.FinalAnswer)).text == "The sum is 42."
    done = events[-1]
    assert done.status == "answered" and done.model_calls == 2 and done.tool_calls == 1
    # The tools went through the chat template, and the tool result came back as a tool
    # message in the transcript the model saw next.
    assert {t["function"]["name"] for t in model.params[0].tools} >= {"toy__add", "toy__echo"}
    assert [m.role for m in model.calls[1]] == ["system", "user", "assistant", "tool"]
    assert model.calls[1][-1].content == "42"
    # MessageAppended events rebuild the transcript exactly.
    appended = [e for e in events if isinstance(e, ev.MessageAppended)]
    assert [(m.role, m.content) for m in agent.transcript] == [
        (e.role, e.content) for e in appended]


def test_bad_calls_become_error_observations(hub):
    agent, _ = make_agent(hub, [
        call("toy__nope"), call("toy__add", a="x", b=1), "<tool_call>{not json</tool_call>",
        "giving up"])
    events = list(agent.run("add"))
    observations = [e.content for e in events if isinstance(e, ev.Observation)]
    assert "no tool named 'toy__nope'" in observations[0]
    assert "bad arguments for add" in observations[1] and "Signature: def add(" in observations[1]
    assert "not valid JSON" in observations[2]
    assert events[-1].status == "answered"


def test_denied_call_reaches_the_model_as_an_error(hub):
    agent, _ = make_agent(hub, [call("toy__echo", text="hi"), "ok"], policy=Policy())
    events = list(agent.run("echo"))
    decided = next(e for e in events if isinstance(e, ev.ToolApprovalDecided))
    assert decided.decision == "deny" and decided.decided_by == "policy"
    observation = next(e for e in events if isinstance(e, ev.Observation))
    assert "needs approval" in observation.content and "--yes" in observation.content


def test_step_limit(hub):
    agent, _ = make_agent(hub, [call("toy__echo", text=str(i)) for i in range(5)], max_steps=3)
    events = list(agent.run("loop"))
    assert events[-1].status == "max_steps" and events[-1].model_calls == 3


def test_follow_up_turn_continues_the_transcript(hub):
    agent, model = make_agent(hub, ["first answer", "second answer"])
    list(agent.run("one"))
    events = list(agent.run("two"))
    assert events[0].turn == 2
    assert [m.content for m in model.calls[1]][-3:] == ["one", "first answer", "two"]


def test_bare_json_calls_without_tags_are_calls_to_known_tools_only(hub):
    # Qwen2.5 0.5B often writes the call's JSON without the <tool_call> tags.
    from deskmate.app.agent.actions_eager import parse_tool_calls

    catalog = Catalog.from_specs(hub.tools())
    bare = json.dumps({"name": "toy__add", "arguments": {"a": 1, "b": 2}})
    assert parse_tool_calls(bare, catalog)[0].tool == "add"
    assert parse_tool_calls(f"```json\n{bare}\n```", catalog)[0].arguments == {"a": 1, "b": 2}
    assert len(parse_tool_calls(f"{bare}\n{bare}", catalog)) == 2
    for answer in ('{"name": "Ada"}', f"I would call {bare}", '{"total": 3}', "3"):
        assert parse_tool_calls(answer, catalog) == []
    # The call written again with what it returned reports the result: not a call.
    report = json.dumps({"name": "toy__add", "arguments": {"a": 1, "b": 2}, "result": "3"})
    assert parse_tool_calls(report, catalog) == []


def test_a_reply_that_reports_a_calls_result_is_the_answer_and_an_empty_one_is_asked_again(hub):
    # Qwen2.5-Coder-1.5B after the tool answered wrote the call again with its result;
    # taken as a call, it ran three times and the turn ended on an empty reply.
    report = json.dumps({"name": "toy__add", "arguments": {"a": 1, "b": 2},
                         "result": "The sum is 3."})
    agent, _ = make_agent(hub, [call("toy__add", a=1, b=2), "", report])
    events = list(agent.run("Add 1 and 2."))
    observations = [e.content for e in events if isinstance(e, ev.Observation)]
    assert observations[1].startswith("Your reply was empty")
    assert next(e for e in events if isinstance(e, ev.FinalAnswer)).text == "The sum is 3."
    assert events[-1].status == "answered" and events[-1].tool_calls == 1
    # The word to the empty reply is feedback, not a turn of the user's: a session resumed
    # from this transcript (and /retry, compaction) still sees one request.
    assert agent.turns == 1
    resumed = Agent(agent.model, agent.actions, agent.bridge, system_prompt=EAGER_PROMPT,
                    transcript=agent.transcript)
    assert resumed.turns == 1
    # Once a turn: a second empty reply is the (empty) answer.
    agent, _ = make_agent(hub, ["", ""])
    events = list(agent.run("Add 1 and 2."))
    assert events[-1].status == "answered" and events[-1].steps == 2


def test_eager_session_exports_as_valid_openai_chat(hub, db):
    import io

    from test_store_export import validate_openai_chat

    from deskmate.app.store import Recorder, get_session
    from deskmate.app.store.export import export_jsonl

    agent, model = make_agent(hub, [
        "Adding.\n" + call("toy__add", a=2, b=3) + "\n" + call("toy__nope", x=1), "It is 5."])
    recorder = Recorder.new(db, mode="eager")
    for event in agent.run("What is 2 + 3?"):
        recorder.record(event)
    out = io.StringIO()
    assert export_jsonl(db, out, [recorder.session_id]) == 1
    record = json.loads(out.getvalue())
    validate_openai_chat(record)
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    asked = record["messages"][2]
    assert asked["content"] == "Adding."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in asked["tool_calls"]] == [("toy__add", {"a": 2, "b": 3}),
                                              ("toy__nope", {"x": 1})]
    ids = [c["id"] for c in asked["tool_calls"]]
    assert [m["tool_call_id"] for m in record["messages"][3:5]] == ids
    # The bridge recorded the call that ran under the transcript's id.
    recorded = get_session(db, recorder.session_id).tool_calls
    assert [(c.call_id, c.result) for c in recorded] == [(ids[0], "5")]
    # What the model saw next: its calls as the chat template renders them.
    assert model.calls[1][2].tool_calls == tuple(asked["tool_calls"])


def test_tool_calls_reach_chat_templates_as_they_expect():
    import jinja2

    from deskmate.app.llm.base import ChatMessage
    from deskmate.app.llm.llamacpp import CHATML_TEMPLATE

    message = ChatMessage("assistant", "Adding.", tool_calls=({
        "id": "call_x", "type": "function",
        "function": {"name": "toy__add", "arguments": '{"a": 2}'}},))
    # Tool-aware templates (Qwen, Llama 3) write the arguments object with tojson.
    aware = ("{% for m in messages %}{{ m.content }}{% for c in m.tool_calls %}"
             "<tool_call>{{ c.function.arguments | tojson }}</tool_call>{% endfor %}"
             "{% endfor %}")
    env = jinja2.Environment()
    env.filters["tojson"] = lambda v: json.dumps(v)
    rendered = env.from_string(aware).render(messages=[message.for_template(aware)])
    assert rendered == 'Adding.<tool_call>{"a": 2}</tool_call>'
    # A template without tool calls still shows the model its calls, in Hermes format.
    plain = env.from_string(CHATML_TEMPLATE).render(
        messages=[message.for_template(CHATML_TEMPLATE)])
    assert ('Adding.\n<tool_call>\n{"name": "toy__add", "arguments": {"a": 2}}\n'
            "</tool_call>") in plain
