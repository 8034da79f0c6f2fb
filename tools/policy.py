"""Who may run a tool call: MCP annotations, the user's trust, and their decisions.

Defaults follow the annotations (DESIGN.md, "Permissions"): a ``readOnlyHint`` tool
runs; any other asks; a ``destructiveHint`` tool asks even where the user allowed that
tool for the session — only trusting the whole server waives it. Nothing runs without a
decision: when no one can be asked, the call is denied with a message saying how to
allow it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from deskmate.tools.spec import ToolSpec

Decision = Literal["allow_once", "allow_tool", "trust_server", "deny", "auto"]
DecidedBy = Literal["user", "policy", "flag", "training"]


@dataclass(frozen=True)
class ApprovalRequest:
    call_id: str
    tool: ToolSpec
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    decision: Decision
    decided_by: DecidedBy
    reason: str = ""


# A front end's way to ask the user (TUI modal, CLI prompt); returns the decision.
Approver = Callable[[ApprovalRequest], Decision]


@dataclass
class Policy:
    """Permission state for one session."""

    trusted_servers: set[str] = field(default_factory=set)  # from config or "trust server"
    approver: Approver | None = None
    # Headless flags: approve every non-destructive call / every call.
    yes: bool = False
    yes_all: bool = False
    allowed_tools: set[tuple[str, str]] = field(default_factory=set)

    def needs_approval(self, tool: ToolSpec) -> bool:
        if tool.server in self.trusted_servers:
            return False
        if tool.read_only:
            return False
        return not ((tool.server, tool.name) in self.allowed_tools and not tool.destructive)

    def _flag_allows(self, tool: ToolSpec) -> bool:
        return self.yes_all or (self.yes and not tool.destructive)

    def will_ask(self, tool: ToolSpec) -> bool:
        """Whether ``decide`` will put this call to the user (front ends show a prompt)."""
        return (self.needs_approval(tool) and not self._flag_allows(tool)
                and self.approver is not None)

    def decide(self, request: ApprovalRequest) -> Verdict:
        tool = request.tool
        if not self.needs_approval(tool):
            why = "trusted server" if tool.server in self.trusted_servers else (
                "read-only tool" if tool.read_only else "allowed for this session")
            return Verdict(True, "auto", "policy", why)
        if self._flag_allows(tool):
            return Verdict(True, "allow_once", "flag", "--yes-all" if self.yes_all else "--yes")
        if self.approver is None:
            flag = "--yes-all" if tool.destructive else "--yes"
            kind = "a destructive tool" if tool.destructive else "a tool that changes things"
            return Verdict(False, "deny", "policy",
                           f"{tool.server}.{tool.name} is {kind} and needs approval, but no "
                           f"one can be asked here: rerun with {flag} to allow it")
        decision = self.approver(request)
        if decision == "allow_tool":
            self.allowed_tools.add((tool.server, tool.name))
        elif decision == "trust_server":
            self.trusted_servers.add(tool.server)
        if decision == "deny":
            return Verdict(False, "deny", "user", "the user denied this call")
        return Verdict(True, decision, "user")
