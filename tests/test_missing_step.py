"""missing_step: a change the request asks for that no tool of the turn made."""

from __future__ import annotations

from deskmate.app.agent.bridge import ToolBridge
from deskmate.app.agent.missing_step import MissingStep, missing_step
from deskmate.tools.catalog import Catalog
from deskmate.tools.policy import Policy
from deskmate.tools.spec import ToolSpec


def tools():
    schema = {"type": "object", "properties": {"repo_path": {"type": "string"}},
              "required": ["repo_path"]}
    specs = [ToolSpec("git", name, "", schema) for name in
             ("git_add", "git_commit", "git_create_branch", "git_checkout", "git_log")]
    specs += [ToolSpec("filesystem", name, "", schema) for name in
              ("write_file", "create_directory", "move_file")]
    specs += [ToolSpec("memory", "create_entities", "", schema)]
    return ToolBridge(Catalog.from_specs(specs), lambda *a, **k: None, Policy(yes_all=True)).tools()


def test_the_commit_a_request_asked_for_and_no_tool_made():
    request = ("In the repository at /r: create a branch called docs, switch to it, add a "
               "file docs/intro.md, and commit it there.")
    called = [("filesystem", "write_file"), ("git", "git_add"), ("git", "git_create_branch"),
              ("git", "git_checkout")]
    assert missing_step(request, tools(), called) == MissingStep(
        "commit", ("git.git_commit(repo_path: str)",))
    assert missing_step(request, tools(), [*called, ("git", "git_commit")]) is None


def test_tools_whose_name_the_request_does_not_say_or_whose_server_was_not_used():
    # "create CHANGELOG.md" is not create_directory; the hash "of the last commit" is not
    # a change; a server not used counts when the tool's object is said too.
    request = "Create CHANGELOG.md in /r, then tell me the hash of the last commit."
    assert missing_step(request, tools(), [("filesystem", "write_file")]) is None
    assert missing_step("Create the entities for Ann.", tools(),
                        [("filesystem", "write_file")]) == MissingStep(
        "create", ("memory.create_entities(repo_path: str)",))
    assert missing_step("Move a.txt to b.txt.", tools(), []) is None
    # Another server's tool with its object said: the file the time was to be written to.
    assert missing_step("Convert 16:00 to Los Angeles time. Write it into the file /w/m.txt.",
                        tools(), [("time", "convert_time")]) == MissingStep(
        "write", ("filesystem.write_file(repo_path: str)",))
    assert missing_step("Convert 16:00, then add a line to /w/m.txt.", tools(),
                        [("time", "convert_time")]) is None
