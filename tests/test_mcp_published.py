"""What servers publish besides plain tools, through the real Hub: tool lists that change
(list_changed), output schemas in signatures, resources and templates, prompts, live
instructions; the agent taking changed tools on between turns. Real servers: our own
tests/servers/changing.py and the reference ``everything`` server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import toy_server

from deskmate.app.agent.factory import build_agent, follow_tools
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.services.mcp_input import (
    InputError,
    PromptCall,
    expand,
    mentions,
    prompt_call,
    suggest,
)
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.hub.listing import list_all
from deskmate.tools.hub.published import PromptArgument, PromptSpec
from deskmate.tools.policy import Policy
from deskmate.tools.signatures import return_type, signature
from deskmate.tools.spec import ToolSpec
from deskmate.tools.uri_template import expand as expand_template
from deskmate.tools.uri_template import matches, variables


def changing() -> ServerConfig:
    return toy_server("changing", "changing.py", call_timeout=30)


def everything(mcp_bin: Path) -> ServerConfig:
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    return ServerConfig("everything", command=str(npm / "mcp-server-everything"),
                        args=("stdio",), startup_timeout=120)


def wait_until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    with Hub([changing()], tmp_path_factory.mktemp("logs")) as hub:
        state = hub.start()[0]
        assert state.status == "ready", state.error
        yield hub


# ---------------------------------------------------------------- output schemas


FACTS = {"type": "object", "title": "FileFacts", "required": ["path", "size"],
         "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}}


def test_an_output_schema_is_the_return_type():
    spec = ToolSpec("s", "stat", input_schema={
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        output_schema=FACTS)
    assert signature(spec).def_line() == 'def stat(path: str) -> {"path": str, "size": int}'
    assert signature(spec).call_text() == "stat(path: str)"


def test_the_fastmcp_result_wrapper_reads_as_its_value_type():
    wrapped = {"type": "object", "properties": {"result": {"type": "integer"}},
               "required": ["result"]}
    assert return_type(wrapped) == "int"
    assert return_type({}) == "Any" and return_type(None) == "Any"
    # Too long to read: a plainer type, never a wall of text in the index.
    wide = {"type": "object", "properties": {f"field_number_{i}": {"type": "string"}
                                             for i in range(12)}}
    assert return_type(wide) == "dict"


def test_a_snapshot_keeps_the_output_schema():
    spec = ToolSpec.from_mcp_json("s", {"name": "t", "outputSchema": FACTS})
    assert spec.output_schema == FACTS
    assert ToolSpec.from_mcp_json("s", {"name": "t", "outputSchema": "junk"}).output_schema == {}


@pytest.mark.slow
def test_live_signatures_carry_output_schemas_and_results_match_them(hub):
    tools = {t.name: t for t in hub.tools()}
    assert signature(tools["stat"]).returns == '{"path": str, "size": int}'
    assert signature(tools["count"]).returns == "int"
    assert hub.call("changing", "stat", {"path": "abc"}).value() == {"path": "abc", "size": 3}
    assert hub.call("changing", "count", {"text": "a b c"}).value() == 3


@pytest.mark.slow
def test_a_result_that_breaks_its_output_schema_is_a_tool_error(hub):
    result = hub.call("changing", "liar", {"path": "x"})
    assert result.is_error
    assert "does not match the tool's output schema" in result.text
    assert "'big' is not of type 'integer'" in result.text
    assert "Failed validating" not in result.text  # jsonschema's long report is cut
    assert hub.state("changing").status == "ready"  # the server is fine


# ---------------------------------------------------------------- changing tool lists


@pytest.mark.slow
def test_list_changed_relists_the_tools(tmp_path):
    seen = []
    with Hub([changing()], tmp_path, on_change=seen.append) as hub:
        assert hub.start()[0].status == "ready"
        assert hub.state("changing").instructions.startswith("Notes and file facts")
        hub.call("changing", "grow", {"name": "sprout"})
        wait_until(lambda: any(t.name == "sprout" for t in hub.tools()))
        assert any("sprout" in [t.name for t in s.tools] for s in seen)  # on_change heard it
        assert hub.call("changing", "sprout").value() == "I am sprout"
        hub.call("changing", "shrink", {"name": "sprout"})
        wait_until(lambda: all(t.name != "sprout" for t in hub.tools()))
        hub.call("changing", "jot", {"name": "later", "text": "Water the plants."})
        wait_until(lambda: "notes://later" in hub.state("changing").resources)
        assert hub.read_resource("notes://later").text == "Water the plants."


@pytest.mark.slow
def test_the_agent_takes_changed_tools_on_between_turns(tmp_path):
    with Hub([changing()], tmp_path) as hub:
        assert hub.start()[0].status == "ready"
        model = ScriptedModel(["Final answer: ok"])
        runtime = build_agent(model, hub=hub, mode="eager", policy=Policy(yes_all=True))
        try:
            # The live instructions are the server's summary in the catalog.
            assert runtime.catalog.server("changing").summary == (
                "Notes and file facts for the deskmate tests.")
            assert follow_tools(runtime) == ""  # nothing changed yet
            hub.call("changing", "grow", {"name": "sprout"})
            wait_until(lambda: any(t.name == "sprout" for t in hub.tools()))
            list(runtime.agent.run("hello"))  # a transcript under way
            note = follow_tools(runtime)
            assert "changing: new: sprout" in note
            assert ("changing", "sprout") in runtime.catalog
            bridge = runtime.agent.bridge
            assert "def sprout() -> str" in bridge.tool_help("changing", [])
            assert any(line.startswith("changing.sprout(") for line in
                       bridge.search_tools("the tool sprout added by grow", k=3))
            assert any(t["function"]["name"] == "changing__sprout"
                       for t in runtime.agent.actions.tools)
            assert bridge.call_json("changing", "sprout", {}) == "I am sprout"
            assert follow_tools(runtime) == ""  # taken on once
        finally:
            runtime.close()


@pytest.mark.slow
def test_code_mode_index_follows_the_changed_tools(tmp_path):
    with Hub([changing()], tmp_path) as hub:
        assert hub.start()[0].status == "ready"
        runtime = build_agent(ScriptedModel([]), hub=hub, mode="code",
                              policy=Policy(yes_all=True))
        try:
            assert "sprout" not in runtime.agent.system_prompt
            assert "read_resource" in runtime.agent.bridge.namespace()["helpers"]
            hub.call("changing", "grow", {"name": "sprout"})
            wait_until(lambda: any(t.name == "sprout" for t in hub.tools()))
            assert follow_tools(runtime) == ""  # a fresh transcript: the prompt says it
            assert "sprout" in runtime.agent.system_prompt
            # The sandbox reads resources through the bridge, like a tool call.
            out = runtime.sandbox.execute(  # type: ignore[union-attr]
                'print(read_resource("notes://day/friday"))\nprint(changing.sprout())')
            assert "Notes of friday: nothing planned." in out.stdout, out
            assert "I am sprout" in out.stdout, out
        finally:
            runtime.close()


# ---------------------------------------------------------------- resources and prompts


@pytest.mark.slow
def test_resources_templates_and_prompts_are_listed_and_used(hub):
    state = hub.state("changing")
    assert [r.uri for r in state.resource_specs] == ["notes://today", "notes://logo.png"]
    assert [t.uri_template for t in state.templates] == ["notes://day/{day}"]
    review = next(p for p in state.prompt_specs if p.name == "review")
    assert [(a.name, a.required) for a in review.arguments] == [("path", True),
                                                                ("style", False)]
    assert hub.read_resource("notes://today").text == "Buy milk. Call Ada."
    assert hub.read_resource("notes://logo.png").text == (
        "[resource notes://logo.png image/png, 33 bytes]")
    uri = expand_template("notes://day/{day}", {"day": "mon day"})
    assert hub.read_resource(uri).text == "Notes of mon day: nothing planned."  # encoded, decoded
    assert hub.get_prompt("changing", "review", {"path": "a.py"}).text == (
        "Review the file a.py. Keep the review short.")
    with pytest.raises(Exception, match="no connected server lists the resource"):
        hub.read_resource("nowhere://x")


@pytest.mark.slow
def test_typed_prompt_commands_and_mentions_reach_the_model_expanded(hub):
    servers = ["changing"]
    text = expand("/changing:review a.py style=long", hub, servers)
    assert text == "Review the file a.py. Keep the review long."
    text = expand("Summarize @changing:notes://today, please", hub, servers)
    assert text.startswith("Summarize @changing:notes://today, please\n\nResource @changing:")
    assert "Buy milk. Call Ada." in text
    bad = expand("see @changing:notes://nothing", hub, servers)
    assert "could not be read" in bad
    with pytest.raises(InputError, match="needs path=…"):
        expand("/changing:review", hub, servers)
    assert expand("/usr:bin is a folder?", hub, servers) == "/usr:bin is a folder?"


@pytest.mark.slow
def test_the_everything_server_publishes_resources_prompts_and_schemas(mcp_bin, tmp_path):
    with Hub([everything(mcp_bin)], tmp_path) as hub:
        state = hub.start()[0]
        assert state.status == "ready", state.error
        assert state.instructions  # live, from initialize
        assert state.resource_specs and state.templates
        text_template = next(t for t in state.templates if "/text/" in t.uri_template)
        uri = expand_template(text_template.uri_template, {"resourceId": 7})
        assert "7" in hub.read_resource(uri).text
        args = next(p for p in state.prompt_specs if p.name == "args-prompt")
        assert hub.get_prompt("everything", "args-prompt", {"city": "Paris"}).text
        assert [a.name for a in args.missing({})] == ["city"]
        structured = next(t for t in state.tools if t.name == "get-structured-content")
        assert signature(structured).returns.startswith('{"temperature": float')


# ---------------------------------------------------------------- pieces


def test_every_page_is_listed():
    pages = {None: (["a", "b"], "p2"), "p2": (["c"], "p3"), "p3": (["d"], None)}
    asked = []

    async def fetch(params):
        cursor = params.cursor if params else None
        asked.append(cursor)
        items, nxt = pages[cursor]
        return SimpleNamespace(tools=items, next_cursor=nxt)

    assert asyncio.run(list_all(fetch, "tools")) == ["a", "b", "c", "d"]
    assert asked == [None, "p2", "p3"]


@pytest.mark.parametrize(("template", "values", "expected"), [
    ("file:///{path}", {"path": "a b/c"}, "file:///a%20b%2Fc"),
    ("file:///{+path}", {"path": "a b/c"}, "file:///a%20b/c"),
    ("repo://{owner}/{name}{?state,page}", {"owner": "me", "name": "x", "page": 2},
     "repo://me/x?page=2"),
    ("{/list*}", {"list": ["red", "green"]}, "/red/green"),
    ("{;x,y}", {"x": 1024, "y": ""}, ";x=1024;y"),
    ("{#var:3}", {"var": "value"}, "#val"),
    ("{?keys*}", {"keys": {"a": "1", "b": "2"}}, "?a=1&b=2"),
    ("{.dom*}", {"dom": ["example", "com"]}, ".example.com"),
])
def test_uri_templates_expand_as_rfc_6570_says(template, values, expected):
    assert expand_template(template, values) == expected


def test_uri_template_variables_and_matching():
    assert variables("repo://{owner}/{name}{?state,page}") == ["owner", "name", "state",
                                                              "page"]
    assert matches("notes://day/{day}", "notes://day/monday")
    assert not matches("notes://day/{day}", "notes://day/a/b")
    assert matches("file:///{+path}", "file:///a/b/c")


REVIEW = PromptSpec("changing", "review", "Ask for a review", (
    PromptArgument("path", required=True), PromptArgument("style")))


def test_a_prompt_command_is_read_with_named_and_bare_arguments():
    call = prompt_call('/changing:review style="very short" a.py', [REVIEW], ["changing"])
    assert call == PromptCall(REVIEW, {"style": "very short", "path": "a.py"})
    assert call.text() == "/changing:review style='very short' path=a.py"
    assert prompt_call("/changing:review", [REVIEW], ["changing"]).missing == ["path"]
    assert prompt_call("/other:review", [REVIEW], ["changing"]) is None  # a message
    with pytest.raises(InputError, match="has no argument 'colour'; it takes path, style"):
        prompt_call("/changing:review colour=red", [REVIEW], ["changing"])
    with pytest.raises(InputError, match="did you mean 'review'"):
        prompt_call("/changing:reveiw", [REVIEW], ["changing"])


def test_mentions_and_completion():
    assert mentions("read @changing:notes://today. and me@host:22", ["changing"]) == [
        ("changing", "notes://today")]
    known = ["@changing:notes://today", "@changing:notes://tomorrow", "/changing:review"]
    assert suggest("see @changing:notes://tod", known) == "ay"
    assert suggest("see @changing:no", known) == "tes://to"  # what both share
    assert suggest("/changing:r", known) == "eview"
    assert suggest("say /changing:r", known) == ""  # a prompt command is the whole message
    assert suggest("plain words", known) == ""


# ---------------------------------------------------------------- deskmate run


@pytest.fixture
def run_with_changing(home, tmp_path, monkeypatch):
    """`deskmate run` (in process) over the changing server, on a scripted model whose
    messages the test reads."""
    import json
    import sys

    from click.testing import CliRunner
    from conftest import TEST_SERVERS

    from deskmate.app.cli import main

    servers = tmp_path / ".mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"changing": {
        "type": "stdio", "command": sys.executable,
        "args": [str(TEST_SERVERS / "changing.py")]}}}))
    model = ScriptedModel(["Done."])
    monkeypatch.setattr("deskmate.app.cli.run.load_model", lambda env, spec: model)

    def run(task: str):
        result = CliRunner().invoke(main, ["run", "--mode", "eager", "--mcp-config",
                                           str(servers), task])
        return result, model

    return run


@pytest.mark.slow
def test_deskmate_run_takes_a_prompt_command(run_with_changing):
    result, model = run_with_changing("/changing:review path=cli.py")
    assert result.exit_code == 0, result.output
    assert model.calls[0][-1].content == "Review the file cli.py. Keep the review short."
    result, model = run_with_changing("/changing:review")
    assert result.exit_code != 0
    assert "/changing:review needs path=…" in result.output
