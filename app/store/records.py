"""What reads from the store return: typed, frozen records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from deskmate.app.llm.base import ChatMessage, Role


@dataclass(frozen=True)
class SessionSummary:
    id: str
    title: str
    model: str
    adapter: str
    mode: str
    status: str
    created_at: float
    updated_at: float
    turns: int
    messages: int
    rating: int | None  # the session's own thumbs: 1 up, -1 down, None unrated


@dataclass(frozen=True)
class MessageRecord:
    position: int
    role: str
    content: str
    tool_call_id: str | None
    tool_calls: tuple[dict[str, Any], ...]
    turn: int | None
    created_at: float

    def to_chat_message(self) -> ChatMessage:
        # The schema's CHECK constraint admits only the four roles, so the column's str is
        # a Role; the store reads it as a plain str.
        return ChatMessage(role=cast(Role, self.role),
                           content=self.content, tool_calls=self.tool_calls,
                           tool_call_id=self.tool_call_id)


@dataclass(frozen=True)
class TurnRecord:
    turn: int
    user_message: str
    started_at: float
    final_answer: str | None
    status: str | None
    steps: int | None
    model_calls: int | None
    tool_calls: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    wall_s: float | None


@dataclass(frozen=True)
class StepRecord:
    turn: int
    step: int
    thought: str
    code: str
    output: str | None
    status: str | None
    duration_s: float | None


@dataclass(frozen=True)
class ToolCallRecord:
    call_id: str
    turn: int | None
    step: int | None
    server: str
    tool: str
    arguments: dict[str, Any]
    annotations: dict[str, Any] | None
    approval: str | None  # allow_once, allow_tool, trust_server, deny, auto; None: not asked
    decided_by: str | None  # user, policy, flag, training
    result: str | None
    structured: Any
    is_error: bool | None
    duration_s: float | None


@dataclass(frozen=True)
class UsageRecord:
    turn: int | None
    step: int
    text: str
    finish_reason: str
    prompt_tokens: int
    reused_tokens: int | None
    evaluated_tokens: int | None
    completion_tokens: int
    ttft_s: float
    decode_tps: float
    total_s: float


@dataclass(frozen=True)
class ErrorRecord:
    turn: int | None
    kind: str
    message: str
    at: float


@dataclass(frozen=True)
class FeedbackRecord:
    turn: int  # 0: the whole session
    rating: int
    comment: str
    created_at: float


@dataclass(frozen=True)
class QuestionRecord:
    """A question a server asked during a tool call (MCP elicitation), and its answer."""

    call_id: str
    turn: int | None
    server: str
    tool: str
    mode: str  # form, url
    message: str
    requested: Any  # form: the JSON Schema asked for; url: the link
    action: str | None  # accept, decline, cancel; None: never answered
    content: dict[str, Any] | None  # an accepted form's values
    decided_by: str | None  # user, policy
    reason: str | None  # why, when no person answered


@dataclass(frozen=True)
class SessionDetail:
    """Everything recorded about one session."""

    summary: SessionSummary
    messages: tuple[MessageRecord, ...]
    turns: tuple[TurnRecord, ...]
    steps: tuple[StepRecord, ...]
    tool_calls: tuple[ToolCallRecord, ...]
    usage: tuple[UsageRecord, ...]
    errors: tuple[ErrorRecord, ...]
    feedback: tuple[FeedbackRecord, ...]
    questions: tuple[QuestionRecord, ...] = ()


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    session_title: str
    kind: str  # "message" or "tool_call"
    ref: str  # the message position, or the tool call id
    label: str  # the message role, or server.tool
    snippet: str  # the matching text, matches in [brackets]
    score: float  # bm25, lower is better; 0.0 past fts.RANK_AT_MOST matches (newest first)
    at: float  # when the message was written or the tool call started


@dataclass(frozen=True)
class ResumedSession:
    """What the runtime needs to continue a session where it stopped."""

    summary: SessionSummary
    transcript: list[ChatMessage]
    kv_state_path: Path  # llama.cpp KV state for this session (may not exist yet)
    next_turn: int

    @property
    def has_kv_state(self) -> bool:
        return self.kv_state_path.exists()


# ---------------------------------------------------------------- learning (finetune, eval)


@dataclass(frozen=True)
class RatedTurn:
    """A turn of the user's own sessions (not an eval's or a finetune's), with its ratings:
    what session tasks for training are chosen from."""

    session_id: str
    turn: int
    prompt: str  # the user's message
    answer: str | None  # the final answer, None when the turn gave none
    turn_rating: int | None  # 1 up, -1 down, None unrated
    session_rating: int | None  # the whole session's rating (feedback turn 0)


@dataclass(frozen=True)
class StoredTask:
    """A ``tasks`` row with its newest rubric."""

    id: int
    prompt: str
    source: str  # session, generated, suite, user
    split: str  # train or heldout
    session_id: str | None
    checks: dict[str, Any]
    metadata: dict[str, Any]
    criteria: str | None  # the newest rubric's criteria as stored (JSON text); None: none


@dataclass(frozen=True)
class FinetuneRunRow:
    """A finetune ``runs`` row with its newest adapter."""

    id: int
    status: str  # running, finished, failed, interrupted
    started_at: float
    log_path: str | None  # the run's progress.jsonl
    config: dict[str, Any]  # the run's spec ({} when the column does not parse)
    adapter_path: str | None  # the newest exported adapter, None before there is one
    adapter_active: bool  # that adapter is the one being served


@dataclass(frozen=True)
class RecordedCall:
    """A tool call that really ran in a session (not denied, finished) and its answer,
    which training may replay for the same ``(server, tool, arguments)``."""

    server: str
    tool: str
    arguments: dict[str, Any]
    result: str
    structured: Any
    is_error: bool
