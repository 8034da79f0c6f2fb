"""`deskmate run` and a server's sampling request: approved on the terminal (the real
tiny model answers), declined without one. The real samples.py server; the terminal's
input is a real pipe (select() and readline() as on a tty)."""

from __future__ import annotations

import json
import os
import threading

import pytest
from conftest import toy_server

from deskmate.app.cli.questions import TerminalAsker
from deskmate.app.llm.sampling import ModelGenerate
from deskmate.tools.hub import Hub
from deskmate.tools.hub.sampling import Sampler, SampleRequest

pytestmark = pytest.mark.slow

HAIKU_CALL = '<tool_call>\n{"name": "samples__haiku", "arguments": {}}\n</tool_call>'


def terminal(typed: str) -> TerminalAsker:
    read, write = os.pipe()
    os.write(write, typed.encode())
    os.close(write)
    return TerminalAsker(threading.Event(), os.fdopen(read))


@pytest.mark.parametrize("typed,choice,by", [
    ("y\n", "once", "user"), ("s\n", "server", "user"), ("x\nd\n", "decline", "user"),
    ("", "decline", "policy")])  # "": input ended
def test_the_terminal_decides(typed, choice, by, capsys):
    request = SampleRequest("samples", (), 64, system_prompt="You are a poet.", tool="haiku")
    decision = terminal(typed).approve_sampling(request)
    assert (decision.choice, decision.decided_by) == (choice, by)
    err = capsys.readouterr().err
    assert "samples asks during haiku to use the local model (up to 64 tokens)." in err
    assert "system: You are a poet." in err


def test_approved_on_the_terminal_the_model_answers(tmp_path, tiny_model):
    sampler = Sampler(terminal("y\n").approve_sampling, ModelGenerate(lambda: tiny_model))
    with Hub([toy_server("samples", "samples.py")], tmp_path, sampler=sampler) as hub:
        assert hub.start()[0].status == "ready"
        text = hub.call("samples", "haiku", {"max_tokens": 4}).text
    assert text.startswith(f"model={tiny_model.info.name}|"), text


def test_run_without_a_terminal_declines(home, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.cli import main

    servers = tmp_path / ".mcp.json"
    cfg = toy_server("samples", "samples.py")
    servers.write_text(json.dumps({"mcpServers": {"samples": {
        "command": cfg.command, "args": list(cfg.args)}}}))
    # The final answer repeats the tool's result, so the test can read it.
    model = ScriptedModel([HAIKU_CALL, lambda messages: messages[-1].content])
    monkeypatch.setattr("deskmate.app.cli.run.load_model", lambda env, model_spec: model)
    result = CliRunner().invoke(main, ["run", "--mode", "eager", "--yes-all", "--mcp-config",
                                       str(servers), "--json", "write a haiku"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["tool_calls"] == 1, (out, result.stderr)
    assert "error: declined: no one can be asked here" in out["final_answer"], out
    assert len(model.calls) == 2  # the model never sampled
