"""`deskmate run` and a server's questions: asked on the terminal, declined without one.

The real everything server; the terminal's input is a real pipe (select() and
readline() as on a tty)."""

from __future__ import annotations

import json
import os
import threading

import pytest
from test_hub_callbacks import everything, raw

from deskmate.app.cli.questions import TerminalAsker
from deskmate.app.store import open_db
from deskmate.tools.hub import Hub
from deskmate.tools.hub.calls import CallHooks

pytestmark = pytest.mark.slow

FORM_CALL = '<tool_call>\n{"name": "everything__trigger-elicitation-request", ' \
            '"arguments": {}}\n</tool_call>'


@pytest.fixture(scope="module")
def hub(mcp_bin, tmp_path_factory):
    with Hub([everything(mcp_bin)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready"
        yield hub


def terminal(typed: str, cancel: threading.Event | None = None) -> TerminalAsker:
    read, write = os.pipe()
    os.write(write, typed.encode())
    os.close(write)
    return TerminalAsker(cancel or threading.Event(), os.fdopen(read))


def test_a_form_answered_on_the_terminal(hub, capsys):
    typed = "\n".join([
        "y", "Ada", "yes", "", "", "", "",  # answer; name, check, firstLine … birthdate
        "500", "7",  # integer: out of range, then again
        "", "2", "1,3", "", "", "Dogs"]) + "\n"  # number … legacyTitledEnum
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=terminal(typed)))
    assert raw(result) == {"action": "accept", "content": {
        "name": "Ada", "check": True, "firstLine": "It was a dark and stormy night.",
        "integer": 7, "number": 3.14, "untitledSingleSelectEnum": "Rachel",
        "untitledMultipleSelectEnum": ["Guitar", "Violin"], "titledSingleSelectEnum": "hero-1",
        "titledMultipleSelectEnum": ["fish-1"], "legacyTitledEnum": "pet-2"}}
    err = capsys.readouterr().err
    assert "everything asks (during trigger-elicitation-request)" in err
    assert "at most 100" in err and "1) Monica" in err


@pytest.mark.parametrize("typed,action", [("d\n", "decline"), ("c\n", "cancel"),
                                          ("", "cancel")])  # "": input ended
def test_decline_cancel_and_end_of_input(hub, typed, action):
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=terminal(typed)))
    assert raw(result) == {"action": action}


def test_url_mode_names_the_host(hub, capsys):
    result = hub.call("everything", "trigger-url-elicitation",
                      {"url": "https://pay.example.org/checkout"},
                      hooks=CallHooks(asker=terminal("y\n")))
    assert raw(result)["action"] == "accept"
    assert "pay.example.org" in capsys.readouterr().err


def test_the_turns_cancel_ends_a_question_left_unanswered(hub):
    read, write = os.pipe()  # nothing is ever typed
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    try:
        result = hub.call("everything", "trigger-elicitation-request", {},
                          hooks=CallHooks(asker=TerminalAsker(cancel, os.fdopen(read))))
    finally:
        os.close(write)
    assert raw(result) == {"action": "cancel"}


def test_run_without_a_terminal_declines(home, mcp_bin, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.cli import main

    servers = tmp_path / ".mcp.json"
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    servers.write_text(json.dumps({"mcpServers": {"everything": {
        "command": str(npm / "mcp-server-everything"), "args": ["stdio"]}}}))
    monkeypatch.setattr("deskmate.app.cli.run.load_model",
                        lambda env, model: ScriptedModel([FORM_CALL, "It was declined."]))
    result = CliRunner().invoke(main, ["run", "--mode", "eager", "--yes", "--mcp-config",
                                       str(servers), "--json", "fill in the form"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["tool_calls"] == 1
    assert "answered decline: no one can be asked here" in result.stderr
    with open_db() as db:
        rows = db.execute("SELECT action, decided_by FROM elicitations WHERE session_id = ?",
                          [out["session"]]).fetchall()
    assert [tuple(r) for r in rows] == [("decline", "policy")]
