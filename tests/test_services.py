"""The service layer both faces call (app/services): fast, no model, no server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from deskmate.app.config import load_config
from deskmate.app.services import servers
from deskmate.app.services.conversation import Conversation


def test_services_import_neither_face():
    code = ("import sys, deskmate.app.services.models, deskmate.app.services.servers, "
            "deskmate.app.services.conversation; print([m for m in ('textual', 'click', "
            "'deskmate.app.ui', 'deskmate.app.cli') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("line", "table"), [
    ("uvx mcp-server-git --repository .",
     {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}),
    ("https://x.test/mcp", {"url": "https://x.test/mcp"}),
    ("https://x.test/sse sse", {"url": "https://x.test/sse", "transport": "sse"}),
])
def test_a_typed_line_becomes_a_server_table(line, table):
    assert servers.table_from_line(line) == table


def test_add_toggle_remove_with_user_errors(home):
    edit = servers.add_server("git", servers.table_from_line("uvx mcp-server-git"), None)
    assert edit.note == "added git" and edit.config.mcp.servers["git"].command == "uvx"
    with pytest.raises(servers.ServerExists, match="a server named 'git' already exists"):
        servers.add_server("git", {"command": "other"}, None)
    with pytest.raises(servers.InvalidServer, match="server 'bad name!'"):
        servers.add_server("bad name!", {"command": "x"}, None)
    assert servers.set_enabled("git", False, None).note == "git disabled"
    assert load_config().mcp.servers["git"].enabled is False
    assert servers.remove_server("git", None).note == "removed git"
    with pytest.raises(servers.UnknownServer, match="no server named 'git'"):
        servers.set_enabled("git", True, None)


def test_edit_how_a_server_is_reached_and_its_env_or_headers(home):
    servers.add_server("git", {"command": "uvx", "args": ["mcp-server-git"],
                               "env": {"A": "1"}, "cwd": "/"}, None)
    edit = servers.set_target("git", f"{sys.executable} -m mcp_server_git", None)
    git = edit.config.mcp.servers["git"]
    assert (git.command, git.args, dict(git.env), git.cwd) == (
        sys.executable, ("-m", "mcp_server_git"), {"A": "1"}, "/"), "the rest stays"
    assert not edit.warning and "now runs" in edit.note
    assert servers.set_variable("git", "TOKEN=${GIT_TOKEN}", None).note == "git: env TOKEN set"
    assert dict(load_config().mcp.servers["git"].env) == {"A": "1", "TOKEN": "${GIT_TOKEN}"}
    assert servers.set_variable("git", "A=", None).note == "git: env A removed"
    with pytest.raises(servers.InvalidServer, match="no env 'A' to remove"):
        servers.set_variable("git", "A=", None)
    with pytest.raises(servers.InvalidServer, match="write KEY=VALUE"):
        servers.set_variable("git", "just words", None)
    servers.add_server("web", {"url": "https://x.test/mcp"}, None)
    servers.set_variable("web", "Authorization=Bearer ${TOKEN}", None)
    assert dict(load_config().mcp.servers["web"].headers) == {
        "Authorization": "Bearer ${TOKEN}"}
    with pytest.raises(servers.InvalidServer, match="server 'web'"):
        servers.set_target("web", "uvx some-server", None)  # headers do not fit a command
    assert load_config().mcp.servers["web"].url == "https://x.test/mcp", "nothing written"
    with pytest.raises(servers.UnknownServer):
        servers.set_variable("nope", "A=1", None)


def test_import_keeps_existing_names_unless_asked(home, tmp_path):
    servers.add_server("a", {"command": "keep"}, None)
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps({"mcpServers": {"a": {"command": "new"},
                                                 "b": {"command": "b"}}}))
    plan = servers.read_servers_file(source, load_config().mcp.servers)
    assert [(i.server.name, i.action) for i in plan.items] == [("a", "skip"), ("b", "add")]
    edit = servers.import_servers(plan, None)
    assert edit.note == "imported 1 server(s): b; kept the existing a"
    assert load_config().mcp.servers["a"].command == "keep"
    again = servers.read_servers_file(source, load_config().mcp.servers)
    with pytest.raises(servers.NothingToImport, match="imported 0 server"):
        servers.import_servers(again, None)
    forced = servers.read_servers_file(source, load_config().mcp.servers, replace=True)
    assert {i.action for i in forced.items} == {"replace"}
    servers.import_servers(forced, None)
    assert load_config().mcp.servers["a"].command == "new"
    with pytest.raises(servers.ServerEditError, match="cannot read"):
        servers.read_servers_file(tmp_path / "missing.json", set())


def test_a_conversation_runs_a_recorded_turn(home, db):
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.store import get_session

    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db)
    assert conversation.build(ScriptedModel(["Final answer: 4"]), None) == ""
    events = list(conversation.run("2 + 2?", threading.Event()))
    assert isinstance(events[-1], ev.TurnFinished) and conversation.session_id is not None
    assert get_session(db, conversation.session_id).turns[0].status == "answered"
    assert [m.role for m in conversation.transcript][-2:] == ["user", "assistant"]
    conversation.new_session()
    assert conversation.session_id is None and conversation.transcript == []
    conversation.close()
    assert conversation.runtime is None
