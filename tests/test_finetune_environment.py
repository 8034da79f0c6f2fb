"""Suite tasks in training: every rollout in a fresh workspace with the task's own real
MCP servers, all calls live there, scored by all the task's checks (a file check here)
before the workspace is deleted; a server that will not start scores that rollout 0."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import TEST_SERVERS

from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.finetune.environment import no_tools, run_in, suite_environment
from deskmate.finetune.eval import load_suite
from deskmate.finetune.judge import Judge, pass_rates
from deskmate.finetune.rollout import RolloutSettings
from deskmate.finetune.rubrics import Checks, Rubric
from deskmate.finetune.tasks import TrainTask, from_suite

SETTINGS = RolloutSettings(mode="eager", limits=AgentLimits(max_steps=4))


@pytest.fixture
def suite_dir(tmp_path) -> Path:
    """One task the filesystem server can do (its check: a file), one whose server dies."""
    suite = tmp_path / "suite"
    (suite / "write-note").mkdir(parents=True)
    (suite / "broken").mkdir()
    (suite / "servers.json").write_text(json.dumps({"mcpServers": {
        "filesystem": {"command": "npx",
                       "args": ["-y", "@modelcontextprotocol/server-filesystem",
                                "${WORKSPACE}"]},
        "broken": {"command": sys.executable,
                   "args": [str(TEST_SERVERS / "exits_at_start.py")]}}}))
    (suite / "write-note" / "task.toml").write_text(
        'prompt = "Write the word hello into ${WORKSPACE}/note.txt."\n'
        'servers = ["filesystem"]\n'
        '[check]\nfile_contains = { "note.txt" = ["hello"] }\n')
    (suite / "broken" / "task.toml").write_text(
        'prompt = "Say hi."\nservers = ["broken"]\n[check]\nanswer_contains = ["hi"]\n')
    return suite


@pytest.fixture
def bins(mcp_bin):
    return (mcp_bin / "py" / "bin", mcp_bin / "npm" / "node_modules" / ".bin")


def tasks_of(suite_dir: Path) -> dict[str, TrainTask]:
    return {t.metadata["task"]: t for t in from_suite(suite_dir)}


def workspace_in(messages) -> str:
    prompt = next(m.content for m in messages if m.role == "user")
    return re.search(r"(/\S+?/workspace)/note\.txt", prompt).group(1)


def write_note(seen: list[str]):
    def reply(messages) -> str:
        seen.append(workspace_in(messages))
        call = {"name": "filesystem__write_file",
                "arguments": {"path": seen[-1] + "/note.txt", "content": "hello\n"}}
        return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    return reply


def answer_only(seen: list[str]):
    def reply(messages) -> str:
        seen.append(workspace_in(messages))
        return "I wrote hello into note.txt."  # it did not
    return reply


def server_children() -> list[str]:
    import os
    import subprocess

    out = subprocess.run(["ps", "-o", "cmd=", "--ppid", str(os.getpid())],
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "mcp-server" in line]


@pytest.mark.slow
def test_suite_rollouts_are_scored_by_their_file_check_in_a_fresh_workspace(suite_dir, bins):
    task = tasks_of(suite_dir)["write-note"]
    assert task.rubric.checks.as_dict() == {}  # the answer checks alone would score nothing
    environment = suite_environment(load_suite(suite_dir), bins=bins)
    seen: list[str] = []
    right = run_in(environment, ScriptedModel([write_note(seen), "Done: note.txt says hello."]),
                   task, settings=SETTINGS)
    wrong = run_in(environment, ScriptedModel([answer_only(seen)]), task, settings=SETTINGS)
    assert right.error == "" and right.status == "answered" and right.tool_calls == 1
    # the write ran live on the task's own server, and the file check saw its result
    assert (right.checks, wrong.checks) == (1.0, 0.0)
    assert wrong.error == "" and wrong.tool_calls == 0
    # each rollout had a workspace of its own, and both are gone
    assert len(set(seen)) == 2 and not any(Path(w).exists() for w in seen)
    assert server_children() == []  # each rollout's hub closed its servers
    scored = Judge(None).score_rollouts(task.prompt, task.rubric, [right, wrong])
    assert [s.reward for s in scored] == [1.0, 0.0]
    assert pass_rates([(task.rubric, s) for s in scored]) == {"checks": 0.5}


@pytest.mark.slow
def test_a_server_that_cannot_start_scores_the_rollout_zero(suite_dir, bins, tmp_path,
                                                           monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # to see what is left behind
    task = tasks_of(suite_dir)["broken"]
    model = ScriptedModel(["hi"])
    rollout = run_in(suite_environment(load_suite(suite_dir), bins=bins), model, task,
                     settings=SETTINGS)
    assert rollout.status == "error" and "MCP server broken failed" in rollout.error
    assert model.calls == []  # the model never ran
    assert list(tmp_path.glob("deskmate-train-*")) == []
    # Scored 0 without the judge, though the answer check alone would have passed "hi".
    scored = Judge(None).score_rollouts(task.prompt, task.rubric, [rollout])
    assert scored[0].reward == 0.0


def test_a_task_without_an_environment_keeps_the_answer_checks():
    task = TrainTask("What is six times seven?", "user", Rubric(checks=Checks(("42",))))
    rollout = run_in(no_tools, ScriptedModel(["It is 42."]), task, settings=SETTINGS)
    assert rollout.checks is None and rollout.error == ""
    assert Judge(None).score_rollouts(task.prompt, task.rubric, [rollout])[0].reward == 1.0
