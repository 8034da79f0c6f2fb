"""git's "paths are ignored by one of your .gitignore files" (app/agent/git_hints.py):
the line that ignores the file and the edit that makes git track it, read as git reads
a .gitignore; through the code-mode loop with the real git and filesystem MCP servers,
the edit the hint gives makes the file addable."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import git_server_hub, run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.git_hints import Ignoring, ignored_paths, ignoring_line

ERROR = ("git.git_add failed: Error executing tool git_add: Cmd('git') failed due to: exit "
         "code(1)\n  cmdline: git add -- data/reference.csv\n  stderr: 'The following paths "
         "are ignored by one of your .gitignore files:\ndata/reference.csv\nhint: Use -f if "
         "you really want to add them.\nhint: Turn this message off by running'")


def test_the_paths_git_refused_are_read_from_its_error():
    assert ignored_paths(ERROR) == ["data/reference.csv"]
    assert ignored_paths("fatal: pathspec 'x' did not match any files") == []


def test_the_line_that_ignores_a_path_as_git_reads_it():
    text = "# build\ndist/\n__pycache__/\n*.csv\n"
    assert ignoring_line(text, "data/reference.csv") == Ignoring("*.csv")
    assert ignoring_line(text, "notes.txt") is None
    # A folder's line ignores everything in it (and only folders).
    assert ignoring_line("data/\n", "data/reference.csv") == Ignoring("data/", "data")
    assert ignoring_line("data/\n", "data") is None
    # Anchored lines match from the root; the last matching line wins.
    assert ignoring_line("/build\n", "src/build/x.o") is None
    assert ignoring_line("/build\n", "build/x.o") == Ignoring("/build", "build")
    assert ignoring_line("*.csv\n!data/*.csv\n", "data/reference.csv") is None
    assert ignoring_line("!keep.csv\n*.csv\n", "keep.csv") == Ignoring("*.csv")
    assert Ignoring("*.csv").fix("data/r.csv") == ("*.csv", "*.csv\n!data/r.csv")
    assert Ignoring("data/", "data").fix("data/r.csv") == ("data/", "data/*\n!data/r.csv")


@pytest.fixture()
def git_hub(tmp_path, mcp_bin):
    """(hub, repository): the real git and filesystem servers over a repository whose
    .gitignore ignores every CSV file."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".gitignore").write_text("# exports are regenerated\n*.csv\n")
    (repo / "data" / "reference.csv").write_text("code,name\n1,a\n")
    (repo / "data" / "export.csv").write_text("x\n")
    with git_server_hub(mcp_bin, repo) as hub:
        yield hub, repo


def test_the_hint_names_the_line_and_its_edit_makes_the_file_addable(git_hub):
    hub, repo = git_hub
    add = f"git.git_add(repo_path='{repo}', files=['data/reference.csv'])"
    events = run_scripted(hub, [f"```python\n{add}\n```", "Final answer: -"],
                          f"Make git track data/reference.csv in {repo}.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert (f"Hint: git.git_add cannot stage data/reference.csv: the line `*.csv` of "
            f"{repo}/.gitignore ignores it") in output
    edit = re.search(r"filesystem\.edit_file\(.*?\]\)", output)
    assert edit is not None, output
    # The edit the hint gives, copied, then the add again: git now stages the file.
    cell = f"print({edit.group(0)})\nprint({add})"
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: -"],
                          f"Make git track data/reference.csv in {repo}.")
    assert "Error" not in next(e.content for e in events if isinstance(e, ev.Observation))
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout.split()
    assert staged == ["data/reference.csv"]
    assert (repo / ".gitignore").read_text() == (
        "# exports are regenerated\n*.csv\n!data/reference.csv\n")

