"""A step of the request that no tool has done: the check before a final answer.

Asked to create a branch, switch to it, add a file "and commit it there", a small model
made the branch, switched and added the file, then answered "Switched to branch 'docs'":
the commit never ran. The request's change verbs (at the start of a clause: "…, and
commit it") are matched against the tools whose every name word the request says
(``git_commit``: commit; ``git_create_branch``: create, branch; not ``create_directory``
for "create CHANGELOG.md"), on the servers the turn used, or on another with an object in
the name (``write_file`` for "write … into the file"): a verb none of whose tools
ran this turn is a step still missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deskmate.app.agent.request import change_verbs, singular, tool_verb, tool_words
from deskmate.app.agent.tool_errors import Tools
from deskmate.tools.signatures import py_identifier


@dataclass(frozen=True)
class MissingStep:
    verb: str  # what the request asks for ("commit")
    calls: tuple[str, ...]  # the tools that do it, as calls ("git.git_commit(…)")


def missing_step(request: str, tools: Tools,
                 called: Sequence[tuple[str, str]]) -> MissingStep | None:
    """The first change the request asks for that no tool called this turn did, with
    the tools (of the servers used) that do it; None when every one ran."""
    verbs = change_verbs(request)
    if not verbs or not called:
        return None
    said = {singular(word.lower()) for word in re.findall(r"[A-Za-z]+", request)}
    used = {server for server, _ in called}
    done = {verb for server, tool in called if (verb := tool_verb(server, tool))}
    missing: dict[str, list[str]] = {}
    for (server, name), (_, sig) in tools.items():
        words = tool_words(server, name)
        # A server the turn has not used needs the tool's object said too (write_file for
        # "write … into the file"; not git_add for "add a line").
        if ((server in used or len(words) >= 2) and words and words[0] in verbs
                and words[0] not in done and set(words) <= said):
            missing.setdefault(words[0], []).append(f"{py_identifier(server)}.{sig.call_text()}")
    verb = next(iter(missing), None)
    return None if verb is None else MissingStep(verb, tuple(missing[verb]))

