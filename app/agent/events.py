"""What ``Agent.run`` yields: typed, frozen events.

The TUI, the CLI, the SQLite recorder and the RL rollouts all consume this one
stream. ``MessageAppended`` carries every message added to the transcript, in order:
the transcript is append-only and exactly what the model saw, so replaying these
events rebuilds it (and it is valid training data as it is).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from deskmate.app.llm.base import Role, Usage
from deskmate.tools.hub.elicitation import Action
from deskmate.tools.policy import DecidedBy, Decision
from deskmate.tools.sandbox.results import CellStatus

TurnStatus = Literal["answered", "max_steps", "max_tool_calls", "repetition", "timeout",
                     "cancelled", "error"]


def _now() -> float:
    return time.time()


@dataclass(frozen=True, kw_only=True)
class Event:
    at: float = field(default_factory=_now)  # wall-clock time, seconds since the epoch


@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    turn: int  # 1-based within the session
    user_message: str


@dataclass(frozen=True, kw_only=True)
class MessageAppended(Event):
    position: int  # 0-based index in the transcript
    role: Role
    content: str
    tool_call_id: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ModelDelta(Event):
    step: int
    text: str


@dataclass(frozen=True, kw_only=True)
class ModelMessage(Event):
    """One model call finished; its text is the assistant message of this step."""

    step: int
    text: str
    finish_reason: str
    usage: Usage


@dataclass(frozen=True, kw_only=True)
class CodeAction(Event):
    step: int
    thought: str
    code: str


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted(Event):
    call_id: str
    step: int
    server: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolApprovalNeeded(Event):
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolApprovalDecided(Event):
    call_id: str
    decision: Decision
    decided_by: DecidedBy


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished(Event):
    call_id: str
    server: str
    tool: str
    result: str  # text form of the result, as the sandbox received it
    is_error: bool
    duration_s: float
    structured: Any = None


@dataclass(frozen=True, kw_only=True)
class ToolProgress(Event):
    """A running call's progress notification; not recorded (its result is)."""

    call_id: str
    progress: float
    total: float | None = None  # None: the server does not know how much there is
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class ElicitationAsked(Event):
    """The server of a running call asks the user something (MCP elicitation)."""

    call_id: str
    server: str
    tool: str
    mode: Literal["form", "url"]
    message: str
    schema: dict[str, Any] = field(default_factory=dict)  # form mode: the requested schema
    url: str = ""  # url mode: what the user is asked to open


@dataclass(frozen=True, kw_only=True)
class ElicitationAnswered(Event):
    call_id: str
    action: Action  # accept, decline or cancel
    content: dict[str, Any] = field(default_factory=dict)  # an accepted form's values
    decided_by: DecidedBy = "user"
    reason: str = ""  # why, when no person answered (no one to ask, timed out)


@dataclass(frozen=True, kw_only=True)
class Observation(Event):
    """What a code cell printed (truncated to budget), as it reaches the model."""

    step: int
    content: str
    status: CellStatus
    duration_s: float


@dataclass(frozen=True, kw_only=True)
class FinalAnswer(Event):
    step: int
    text: str


@dataclass(frozen=True, kw_only=True)
class TurnFinished(Event):
    turn: int
    status: TurnStatus
    steps: int
    model_calls: int
    tool_calls: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float


@dataclass(frozen=True, kw_only=True)
class AgentError(Event):
    message: str
    kind: str = "error"  # e.g. model, sandbox, tool, format


AgentEvent = (TurnStarted | MessageAppended | ModelDelta | ModelMessage | CodeAction
              | ToolCallStarted | ToolApprovalNeeded | ToolApprovalDecided | ToolCallFinished
              | ToolProgress | ElicitationAsked | ElicitationAnswered
              | Observation | FinalAnswer | TurnFinished | AgentError)
