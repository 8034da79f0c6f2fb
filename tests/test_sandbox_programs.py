"""A program a cell runs that the sandbox does not have (``os.system("git commit …")``,
``subprocess.run(["ls", …])``, ``os.popen``) raises an error that names the connected
tools for the job (tools/sandbox/worker/programs.py), instead of os.system's bare 32512;
a program the sandbox has still runs. Through the code-mode loop with the real git and
filesystem MCP servers, and the real sandbox."""

from __future__ import annotations

import subprocess

import pytest
from conftest import git_server_hub, run_scripted

from deskmate.app.agent import events as ev
from deskmate.tools.sandbox.worker.programs import message, tool_calls
from deskmate.tools.sandbox.worker.state import Toolspace

SPACE = Toolspace.of(
    {"git": ["git_status", "git_add", "git_commit", "git_log"],
     "filesystem": ["read_text_file", "list_directory", "move_file"]},
    {"git.git_commit": "git_commit(repo_path: str, message: str)",
     "git.git_add": "git_add(repo_path: str, files: list[str])",
     "filesystem.list_directory": "list_directory(path: str)"})


def test_a_command_is_matched_to_the_tools_that_do_its_job():
    # A server named like the program, a tool named by the subcommand; the program's own
    # name (every git tool has it) does not count.
    assert tool_calls('git commit -m "Sort requirements"', "git", SPACE) == [
        "git.git_commit(repo_path: str, message: str)"]
    assert tool_calls("cd /r && git add . && git commit -m x", "git", SPACE) == [
        "git.git_add(repo_path: str, files: list[str])",
        "git.git_commit(repo_path: str, message: str)"]
    # What a common program does, in the words of tool names.
    assert tool_calls("ls -la /data", "ls", SPACE) == ["filesystem.list_directory(path: str)"]
    assert tool_calls("mv a b", "mv", SPACE) == ["filesystem.move_file(...)"]
    assert tool_calls("convert a.png a.jpg", "convert", SPACE) == []


def test_the_message_says_what_did_not_run_and_how_to_find_a_tool():
    text = message("date +%Y", "date", SPACE)
    assert text.startswith("'date +%Y' was not run: there is no date in this sandbox")
    assert text.endswith("Find the tool that does it: search_tools('time date')")
    long = message("echo " + "x" * 300, "echo", SPACE)
    assert "..." in long and len(long) < 400


@pytest.fixture(scope="module")
def git_hub(tmp_path_factory, mcp_bin):
    """(hub, repository): the real git and filesystem servers over a fresh repository."""
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "requirements.txt").write_text("requests\nFlask\n")
    with git_server_hub(mcp_bin, repo) as hub:
        yield hub, repo


def observations(events) -> list[str]:
    return [e.content for e in events if isinstance(e, ev.Observation)]


def test_os_system_of_git_names_the_git_servers_commit_tool(git_hub):
    hub, repo = git_hub
    cell = f"import os\nprint(os.system('cd {repo} && git commit -m \"Sort requirements\"'))"
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: -"],
                          f"Commit the change in {repo}.")
    output = observations(events)[0]
    assert "32512" not in output
    assert (f"ProgramError: 'cd {repo} && git commit -m \"Sort requirements\"' was not run: "
            "there is no git in this sandbox") in output
    assert "Do it with the tools: git.git_commit(repo_path: str, message: str)" in output


def test_subprocess_and_popen_get_the_error_and_the_interpreter_still_runs(git_hub):
    hub, repo = git_hub
    cells = [f"import subprocess\nsubprocess.run(['ls', '{repo}'])",
             "import os\nprint(os.popen('git status').read())",
             "import subprocess, sys\n"
             "print(subprocess.run([sys.executable, '-c', 'print(6 * 7)'], "
             "capture_output=True, text=True).stdout)"]
    replies = [f"```python\n{cell}\n```" for cell in cells] + ["Final answer: -"]
    events = run_scripted(hub, replies, f"What is in {repo}?")
    listed, status, child = observations(events)[:3]
    assert "there is no ls in this sandbox" in listed
    assert "Do it with the tools: filesystem.list_directory(path: str)" in listed
    assert "'git status' was not run" in status and "git.git_status(repo_path: str)" in status
    assert "42" in child and "Error" not in child
