"""The tool policy of training rollouts: training never changes the user's world.

Rollouts call tools through the same bridge as the app, but the hub's ``call`` is
wrapped by a ``ToolGate``. On the user's own servers (session and generated tasks):
- a read-only tool (MCP ``readOnlyHint``) runs live;
- any other call is answered from a recorded result of the *same* call (server, tool,
  arguments) in the user's sessions, if there is one;
- otherwise it is refused with an error that tells the model what happened, so it can
  learn to prefer read-only tools or to answer from what it has.
A destructive tool is never called live there, whatever the user trusts in the app.
A gate with ``live_all`` runs every call live: for servers on a throwaway workspace made
for one rollout (a suite task's, ``finetune.environment``), where nothing is the user's.
``TrainingPolicy`` lets every call reach the gate (it decides instead of a person).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deskmate.tools.hub.results import ContentItem, ToolCallError, ToolResult
from deskmate.tools.policy import ApprovalRequest, Policy, Verdict
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:
    from deskmate.app.store.db import Database
    from deskmate.tools.hub import Hub, ServerState
    from deskmate.tools.hub.calls import CallHooks


class TrainingRefusal(ToolCallError):
    """A call the training gate would not run; the model sees the message."""


def call_key(server: str, tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps([server, tool, arguments], sort_keys=True, ensure_ascii=False,
                      default=str)


@dataclass(frozen=True)
class Recorded:
    text: str
    structured: Any
    is_error: bool


def recorded_results(db: Database) -> dict[str, Recorded]:
    """Every tool call that really ran in the user's sessions, newest result per call."""
    from deskmate.app.store.sessions import recorded_calls

    return {call_key(c.server, c.tool, c.arguments): Recorded(c.result, c.structured,
                                                              c.is_error)
            for c in recorded_calls(db)}


class ToolGate:
    """``call(server, tool, arguments, cancel=...)`` with the training rules above."""

    def __init__(self, specs: Iterable[ToolSpec], live_call: Callable[..., ToolResult] | None,
                 recorded: dict[str, Recorded] | None = None, *, live_all: bool = False
                 ) -> None:
        self.specs = {(s.server, s.name): s for s in specs}
        self.live_call = live_call
        self.recorded = recorded or {}
        self.live_all = live_all  # every call live: only for a throwaway workspace's servers
        self.counts: Counter[str] = Counter()  # live, replayed, refused
        self._lock = threading.Lock()

    def __call__(self, server: str, tool: str, arguments: dict[str, Any] | None = None, *,
                 cancel: threading.Event | None = None, hooks: CallHooks | None = None
                 ) -> ToolResult:
        arguments = arguments or {}
        spec = self.specs.get((server, tool))
        read_only = spec is not None and spec.read_only and not spec.destructive
        if self.live_call and (self.live_all or read_only):
            self._count("live")
            # The hooks' asker is the agent's: none in training, so servers' questions
            # are declined.
            return self.live_call(server, tool, arguments, cancel=cancel, hooks=hooks)
        hit = self.recorded.get(call_key(server, tool, arguments))
        if hit is not None:
            self._count("replayed")
            return ToolResult(server, tool, (ContentItem("text", text=hit.text),),
                              structured=hit.structured, is_error=hit.is_error)
        self._count("refused")
        kind = "destructive" if spec is None or spec.destructive else "not read-only"
        raise TrainingRefusal(
            f"{server}.{tool} is {kind}, and during training such a call only gets an answer "
            "when the user made this exact call before; it was not run. Use read-only tools, "
            "or answer from the information you already have.")

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1


class TrainingPolicy(Policy):
    """Every call goes on to the ToolGate, which decides; no one is asked."""

    def needs_approval(self, tool: ToolSpec) -> bool:
        return False

    def decide(self, request: ApprovalRequest) -> Verdict:
        return Verdict(True, "auto", "training", "training: the tool gate decides")


class GatedHub:
    """A hub as ``build_agent`` sees it, with ``call`` going through the gate."""

    def __init__(self, hub: Hub | None, gate: ToolGate) -> None:
        self.hub, self.call = hub, gate

    def tools(self) -> list[ToolSpec]:
        return self.hub.tools() if self.hub is not None else []

    def states(self) -> list[ServerState]:
        return self.hub.states() if self.hub is not None else []
