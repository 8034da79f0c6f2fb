"""Permission decisions from annotations, trust, flags and the user's answers."""

from __future__ import annotations

from deskmate.tools.policy import ApprovalRequest, Policy
from deskmate.tools.spec import ToolSpec

READ = ToolSpec("fs", "read_file", annotations={"readOnlyHint": True})
WRITE = ToolSpec("fs", "write_file", annotations={"readOnlyHint": False,
                                                  "destructiveHint": False})
DELETE = ToolSpec("fs", "delete", annotations={"destructiveHint": True})
UNANNOTATED = ToolSpec("git", "git_commit")


def req(tool):
    return ApprovalRequest("c1", tool, {})


def test_read_only_runs_without_asking():
    asked = []
    verdict = Policy(approver=asked.append).decide(req(READ))
    assert verdict.allowed and verdict.decision == "auto" and not asked


def test_unannotated_tools_count_as_destructive():
    assert UNANNOTATED.destructive and Policy().needs_approval(UNANNOTATED)


def test_headless_without_flags_denies_with_advice():
    verdict = Policy().decide(req(WRITE))
    assert not verdict.allowed and "--yes" in verdict.reason
    verdict = Policy().decide(req(DELETE))
    assert not verdict.allowed and "--yes-all" in verdict.reason


def test_yes_flags():
    assert Policy(yes=True).decide(req(WRITE)).allowed
    assert not Policy(yes=True).decide(req(DELETE)).allowed
    assert Policy(yes_all=True).decide(req(DELETE)).decided_by == "flag"


def test_user_decisions_are_remembered_for_the_session():
    answers = iter(["allow_tool", "deny"])
    calls = []

    def approver(request):
        calls.append(request.tool.name)
        return next(answers)

    policy = Policy(approver=approver)
    assert policy.decide(req(WRITE)).decision == "allow_tool"
    assert policy.decide(req(WRITE)).decision == "auto"  # not asked again
    denied = policy.decide(req(DELETE))
    assert not denied.allowed and denied.decided_by == "user"
    assert calls == ["write_file", "delete"]


def test_allowing_a_destructive_tool_asks_again_but_trusting_the_server_does_not():
    answers = iter(["allow_tool", "allow_once", "trust_server"])
    policy = Policy(approver=lambda r: next(answers))
    assert policy.decide(req(DELETE)).allowed
    assert policy.decide(req(DELETE)).decision == "allow_once"  # asked again
    policy.decide(req(UNANNOTATED))
    assert policy.decide(req(UNANNOTATED)).decision == "auto"


def test_config_trust():
    assert Policy(trusted_servers={"fs"}).decide(req(DELETE)).decision == "auto"


def test_will_ask_matches_who_decides():
    def asker(request):
        return "allow_once"

    assert not Policy(approver=asker).will_ask(READ)
    assert Policy(approver=asker).will_ask(WRITE)
    assert not Policy(approver=asker, yes=True).will_ask(WRITE)
    assert Policy(approver=asker, yes=True).will_ask(DELETE)
    assert not Policy().will_ask(WRITE)  # nobody to ask: denied, not asked
    for policy in (Policy(approver=asker), Policy(approver=asker, yes=True), Policy()):
        for tool in (READ, WRITE, DELETE):
            asked = policy.will_ask(tool)
            assert asked == (policy.decide(req(tool)).decided_by == "user")
