"""`deskmate run` end to end: the real tiny model through llama.cpp, a real MCP server,
the real sandbox, and the session recorded in SQLite. SmolLM2-135M solves little: these
tests assert the mechanics, not the answer."""

from __future__ import annotations

import json
import re
import sys

import pytest
from conftest import TEST_SERVERS, deskmate

pytestmark = pytest.mark.slow


@pytest.fixture
def servers_file(tmp_path):
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "toy": {"type": "stdio", "command": sys.executable, "args": [str(TEST_SERVERS / "toy.py")]},
    }}))
    return path


@pytest.mark.parametrize("mode", ["code", "eager"])
def test_run_json_with_the_tiny_model(home, tiny_model_path, servers_file, mode):
    result = deskmate("run", "-m", str(tiny_model_path), "--mcp-config", str(servers_file),
                      "--mode", mode, "--max-steps", "3", "--max-tokens", "96", "--json",
                      "--yes",
                      "Add 2 and 3 with the toy server.", home=home)
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()  # standard output holds the one object, nothing else
    out = json.loads(line)
    assert set(out) >= {"final_answer", "status", "steps", "model_calls", "tool_calls",
                        "prompt_tokens", "completion_tokens", "wall_s", "session"}
    assert out["status"] in {"answered", "max_steps", "repetition"}
    assert 1 <= out["model_calls"] <= 3 and out["prompt_tokens"] > 50
    shown = deskmate("sessions", "show", out["session"], "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    assert mode in shown.stdout and "Add 2 and 3" in shown.stdout


def test_piped_the_tiny_model_s_answer_is_printed_once(home, tiny_model_path):
    result = deskmate("run", "-m", str(tiny_model_path), "--mode", "eager", "--max-steps", "1",
                      "--max-tokens", "48", "Say hello to me in one short sentence.",
                      home=home)
    assert result.returncode == 0, result.stderr
    found = re.search(r"\[session (\w+) ", result.stderr)
    assert found, result.stderr
    shown = deskmate("sessions", "show", found[1], "--json", home=home)
    answer = json.loads(shown.stdout)["turns"][0]["final_answer"]
    assert answer, shown.stdout
    assert result.stdout == answer + "\n"  # once, and nothing of the trace
    assert answer not in result.stderr  # standard error is not a terminal: no trace


ANSWER = "The answer is 42, as it always was."


@pytest.fixture
def scripted(home, monkeypatch):
    """`deskmate run` on a model that answers ANSWER at once."""
    from deskmate.app.agent.scripted import ScriptedModel

    monkeypatch.setattr("deskmate.app.cli.run.load_model",
                        lambda env, model: ScriptedModel([ANSWER]))


def run_cli(*args: str):
    from click.testing import CliRunner

    from deskmate.app.cli import main

    result = CliRunner().invoke(main, ["run", "--mode", "eager", *args])
    assert result.exit_code == 0, result.output
    return result


def test_piped_stdout_holds_the_answer_once_and_nothing_else(scripted):
    result = run_cli("what is it?")
    assert result.stdout == ANSWER + "\n"
    assert ANSWER not in result.stderr  # standard error is not a terminal: no trace
    assert "[session " in result.stderr


def test_on_a_terminal_the_trace_goes_to_stderr(scripted, monkeypatch):
    monkeypatch.setattr("deskmate.app.cli.run.is_terminal", lambda stream: True)
    result = run_cli("what is it?")  # as in `deskmate run … | cat` at a terminal
    assert result.stdout == ANSWER + "\n"
    assert ANSWER in result.stderr  # the model's text, streamed as it came


def test_json_prints_one_object_and_progress_lines_on_a_terminal(scripted, monkeypatch):
    monkeypatch.setattr("deskmate.app.cli.run.is_terminal", lambda stream: True)
    result = run_cli("--json", "what is it?")
    [line] = result.stdout.splitlines()
    assert json.loads(line)["final_answer"] == ANSWER
    assert "step 1 · " in result.stderr and ANSWER not in result.stderr


def test_run_without_servers_or_model(home):
    result = deskmate("run", "hello", home=home)
    assert result.returncode == 1 and "no model is configured" in result.stderr


def test_run_with_a_broken_server_file(home, tmp_path, tiny_model_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = deskmate("run", "-m", str(tiny_model_path), "--mcp-config", str(bad), "x",
                      home=home)
    assert result.returncode == 1 and "not valid JSON" in result.stderr


def test_ctrl_c_cancels_the_running_cell_and_records_the_turn(home, monkeypatch):
    import os
    import signal
    import threading

    from click.testing import CliRunner

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.cli import main
    from deskmate.app.store import get_session, open_db

    def sleeper(messages):
        # The cell starts right after this reply: Ctrl-C while it sleeps.
        threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        return "Waiting.\n```python\nimport time\ntime.sleep(60)\n```"

    monkeypatch.setattr("deskmate.app.cli.run.load_model",
                        lambda env, model: ScriptedModel([sleeper, "Final answer: never"]))
    result = CliRunner().invoke(main, ["run", "--json", "wait a minute"])
    assert result.exit_code == 130, result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["status"] == "cancelled" and out["wall_s"] < 20
    assert get_session(open_db(), out["session"]).turns[0].status == "cancelled"


def test_a_sandbox_that_cannot_start_is_one_clear_error(home, monkeypatch):
    from click.testing import CliRunner

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.cli import main
    from deskmate.tools.sandbox import Sandbox, SandboxError

    def broken(self):
        raise SandboxError("the worker exited at start (rc 1)")

    monkeypatch.setattr(Sandbox, "start", broken)
    monkeypatch.setattr("deskmate.app.cli.run.load_model",
                        lambda env, model: ScriptedModel(["Final answer: x"]))
    result = CliRunner().invoke(main, ["run", "--mode", "code", "hi"])
    assert result.exit_code == 1 and not isinstance(result.exception, SandboxError)
    assert "sandbox could not start: the worker exited at start" in result.output


def test_a_sandbox_failing_mid_turn_ends_it_with_an_error():
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.actions_code import CodeActions
    from deskmate.app.agent.bridge import ToolBridge
    from deskmate.app.agent.loop import Agent
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.tools.catalog import Catalog
    from deskmate.tools.policy import Policy
    from deskmate.tools.sandbox import Limits, SandboxError

    class Broken:
        limits = Limits()

        def execute(self, code, **options):
            raise SandboxError("cannot restart the worker")

        def close(self):
            pass

    def no_tools(*args, **kwargs):
        raise AssertionError("no tool is called")

    bridge = ToolBridge(Catalog.from_specs([]), no_tools, Policy())
    agent = Agent(ScriptedModel(["```python\nprint(1)\n```"]), CodeActions(Broken()), bridge,
                  system_prompt="s")
    events = list(agent.run("go"))
    error = next(e for e in events if isinstance(e, ev.AgentError))
    assert error.kind == "sandbox" and "cannot restart the worker" in error.message
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].status == "error"
