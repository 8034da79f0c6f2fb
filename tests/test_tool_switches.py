"""Per-tool switches: a tool turned off in a server's config is invisible to the agent
(index, tool_help, search_tools, eager schemas) and refused if called, through the real
Hub, the real sandbox and a real MCP server; the servers screen lists it marked off, with
its annotations as badges, and `o` turns it back on; the CLI lists and switches tools."""

from __future__ import annotations

import json
import sys
import tomllib

import pytest
from conftest import TEST_SERVERS, deskmate, toy_server
from test_ui_support import ready, record_notifications, scripted, wait_for
from textual.widgets import DataTable, Markdown

from deskmate.app import paths
from deskmate.app.agent import events as ev
from deskmate.app.agent.actions_eager import tool_schemas
from deskmate.app.agent.factory import build_agent, follow_tools
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.config import load_config
from deskmate.app.services import servers as server_ops
from deskmate.app.ui.app import DeskmateApp
from deskmate.tools.hub import Hub, ServerConfigError, ToolDisabled, server_from_table
from deskmate.tools.policy import Policy


def annotated(**options):
    return toy_server("notes", "annotated.py", **options)


def test_disabled_tools_in_the_config_table():
    cfg = server_from_table("notes", {"command": "x", "disabled_tools": ["a", "b", "a"]})
    assert cfg.disabled_tools == ("a", "b")
    assert cfg.to_table() == {"command": "x", "disabled_tools": ["a", "b"]}
    assert "disabled_tools" not in server_from_table("n", {"command": "x"}).to_table()
    with pytest.raises(ServerConfigError, match="list of strings") as caught:
        server_from_table("notes", {"command": "x", "disabled_tools": "a"})
    assert caught.value.key == "disabled_tools"


def test_switching_a_tool_writes_the_config(home):
    config_path = home / "config.toml"
    server_ops.add_server("notes", {"command": "x"}, config_path)
    edit = server_ops.set_tool_enabled("notes", "delete_note", False, config_path)
    assert edit.note == "notes.delete_note turned off"
    assert edit.config.mcp.servers["notes"].disabled_tools == ("delete_note",)
    with pytest.raises(server_ops.InvalidServer, match="touch is not turned off"):
        server_ops.set_tool_enabled("notes", "touch", True, config_path)
    with pytest.raises(server_ops.UnknownServer):
        server_ops.set_tool_enabled("other", "touch", False, config_path)
    server_ops.set_tool_enabled("notes", "delete_note", True, config_path)
    saved = tomllib.loads(config_path.read_text())["mcp"]["servers"]["notes"]
    assert saved == {"command": "x"}  # the empty list is not kept


@pytest.mark.slow
def test_a_disabled_tool_is_neither_listed_nor_callable(tmp_path):
    py = "Let me try.\n```python\n{}\n```".format
    with Hub([annotated(disabled_tools=("delete_note",))], tmp_path) as hub:
        state = hub.start()[0]
        assert state.status == "ready"
        assert {t.name for t in state.tools} >= {"delete_note", "read_note"}  # F3 sees it
        assert "delete_note" not in {t.name for t in hub.tools()}
        with pytest.raises(ToolDisabled, match="enable-tool notes delete_note"):
            hub.call("notes", "delete_note", {"key": "a"})
        # The agent, code mode: not in its catalog, help or search; refused by name.
        model = ScriptedModel([
            py("print(tool_help('notes'))"),
            py("print(search_tools('delete a note', k=5))"),
            py("notes.delete_note(key='a')"),
            py("print(notes.read_note(key='a'))"),
            "Final answer: done",
        ])
        runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True))
        try:
            assert "delete_note" not in {t.name for t in runtime.catalog}
            events = list(runtime.agent.run("delete note a"))
            seen = [o.content for o in events if isinstance(o, ev.Observation)]
            assert "read_note" in seen[0] and "delete_note" not in seen[0]
            assert "delete_note" not in seen[1]
            assert "notes.delete_note is turned off by the user" in seen[2]
            assert "first note" in seen[3]  # the note was not deleted
            assert [c.tool for c in events if isinstance(c, ev.ToolCallFinished)] == [
                "read_note"]
            # Turned on again while the session goes on: the agent takes it on, and is told.
            hub.set_disabled_tools("notes", ())
            note = follow_tools(runtime)
            assert "new: delete_note" in note
            assert "delete_note" in {t.name for t in runtime.catalog}
            assert runtime.agent.bridge.disabled == frozenset()
        finally:
            runtime.close()
        # Eager mode: the schemas the chat template renders leave it out.
        hub.set_disabled_tools("notes", ("delete_note",))
        eager = build_agent(ScriptedModel([]), hub=hub, mode="eager")
        names = [s["function"]["name"] for s in tool_schemas(eager.catalog)]
        assert names and not any("delete_note" in n for n in names)


@pytest.mark.slow
def test_cli_lists_and_switches_tools(home):
    server = [sys.executable, str(TEST_SERVERS / "annotated.py")]
    assert deskmate("mcp", "add", "notes", "--", *server, home=home).returncode == 0
    off = deskmate("mcp", "disable-tool", "notes", "delete_note", home=home)
    assert off.returncode == 0 and "notes.delete_note turned off" in off.stdout
    listed = deskmate("mcp", "tools", "notes", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"]}
    assert tools["delete_note"]["enabled"] is False
    assert tools["delete_note"]["badges"] == ["destructive"]
    assert tools["read_note"] == {"name": "read_note", "enabled": True, "badges": ["read-only"],
                                  "description": "Read a note."}
    assert tools["fetch_page"]["badges"] == ["open-world"]
    assert tools["touch"]["badges"] == ["destructive"]  # MCP's default for no annotations
    text = deskmate("mcp", "tools", "notes", home=home).stdout
    assert any(line.startswith("off") and "delete_note" in line for line in text.splitlines())
    again = deskmate("mcp", "enable-tool", "notes", "touch", home=home)
    assert again.returncode == 1 and "notes.touch is not turned off" in again.stderr
    assert deskmate("mcp", "enable-tool", "notes", "delete_note", home=home).returncode == 0
    assert "disabled_tools" not in tomllib.loads(
        (home / "config.toml").read_text())["mcp"]["servers"]["notes"]


@pytest.mark.slow
async def test_servers_screen_badges_and_the_tool_key(home):
    # The switch is written to the config file: the server must be in it.
    server_ops.add_server("notes", annotated().to_table(), paths.config_file())
    model = scripted()
    app = record_notifications(DeskmateApp(load_config(), model_factory=lambda c, s: model,
                                           mode="eager"))
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        await pilot.press("f3")
        tools = app.screen.query_one("#server-tool-list", DataTable)

        def listed() -> dict[str, list[str]]:
            return {str(r[1]): [str(c) for c in r] for r in
                    (tools.get_row_at(i) for i in range(tools.row_count))}

        await wait_for(pilot, lambda: "delete_note" in listed(), 60, "the tools list")
        assert listed()["read_note"] == ["on", "read_note", "read-only"]
        assert listed()["delete_note"] == ["on", "delete_note", "destructive"]
        assert listed()["fetch_page"][2] == "open-world"
        await pilot.press("o")  # from the servers list: into the tools list, nothing switched
        assert app.focused is tools and listed()["read_note"][0] == "on"
        tools.move_cursor(row=tools.get_row_index("delete_note"))
        await pilot.press("o")
        await wait_for(pilot, lambda: listed()["delete_note"][0] == "off", 60, "marked off")
        servers = app.screen.query_one("#servers-table", DataTable)
        assert str(servers.get_row_at(0)[2]) == "4 (1 off)"
        assert load_config().mcp.servers["notes"].disabled_tools == ("delete_note",)
        assert "def delete_note" not in app.screen.query_one("#server-tools", Markdown).source
        # The running hub follows without a restart; the agent at its next turn.
        assert app.hub is not None and app.conversation.runtime is not None
        assert "delete_note" not in {t.name for t in app.hub.tools()}
        runtime = app.conversation.runtime
        assert follow_tools(runtime) == ""  # a fresh transcript: no note
        assert "delete_note" not in {t.name for t in runtime.catalog}
        await pilot.press("o")
        await wait_for(pilot, lambda: listed()["delete_note"][0] == "on", 60, "back on")
        assert load_config().mcp.servers["notes"].disabled_tools == ()
