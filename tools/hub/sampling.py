"""A server's request to use deskmate's model (MCP sampling), and who allows it.

A tool may ask the client's model to write something mid-call (``sampling/
createMessage``). deskmate answers only with the person's approval, and only with the
local model: the hub turns the SDK's request into a ``SampleRequest`` (text messages
only: images and audio are refused) and hands it to a ``Sampler``, which asks its
``Approver`` (once, for this server for the session, or decline) and on approval lets
its ``Generate`` (the loaded model) answer, at most ``MAX_TOKENS`` tokens.

Approvers: the app's modal, ``deskmate run``'s terminal prompt, and ``decline`` (no one
to ask). A hub without a sampler does not declare the capability at all (eval and
training rollouts: the server's request fails as unsupported). The hub calls the sampler
on a worker thread, never on its event loop, so it may block while a person thinks and
while the model writes; the calls' clocks stand still meanwhile.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from deskmate.tools.policy import DecidedBy

MAX_TOKENS = 512  # the most a server may have the local model write per request
Choice = Literal["once", "server", "decline"]


class UnsupportedContent(ValueError):
    """The request holds something deskmate cannot sample for (images, audio, tools)."""


@dataclass(frozen=True)
class SampleMessage:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class SampleRequest:
    """What a server asks the model to answer, with where it comes from."""

    server: str
    messages: tuple[SampleMessage, ...]
    max_tokens: int  # as requested; the sampler caps it
    system_prompt: str = ""
    temperature: float | None = None  # None: the model's default
    stop: tuple[str, ...] = ()
    tool: str = ""  # the tool call it arrived during ("" if none was running)


@dataclass(frozen=True)
class SampleDecision:
    choice: Choice
    decided_by: DecidedBy = "user"
    reason: str = ""  # why, when no person decided (no one to ask, timed out)


@dataclass(frozen=True)
class Sample:
    """The model's answer."""

    text: str
    model: str  # the model's name, as the result reports it
    stop_reason: str = "endTurn"  # endTurn, maxTokens, stopSequence (MCP's words)


class Approver(Protocol):
    """Decides whether a server may sample; may block (it runs on a worker thread)."""

    def __call__(self, request: SampleRequest) -> SampleDecision: ...


class Generate(Protocol):
    """Answers an approved request with at most ``max_tokens`` tokens."""

    def __call__(self, request: SampleRequest, max_tokens: int) -> Sample: ...


def decline(request: SampleRequest) -> SampleDecision:
    """The approver where no person can decide: headless runs."""
    return SampleDecision("decline", decided_by="policy", reason="no one can be asked here")


class SampleRefused(Exception):
    """The request was declined, or the model could not answer; the message says why."""


class Sampler:
    """Approval, then the local model; remembers the servers allowed for the session."""

    def __init__(self, approve: Approver, generate: Generate,
                 max_tokens: int = MAX_TOKENS) -> None:
        self.approve = approve
        self.generate = generate
        self.max_tokens = max_tokens
        self.allowed: set[str] = set()  # servers approved "for this session"
        self._lock = threading.Lock()

    def __call__(self, request: SampleRequest) -> Sample:
        """The model's answer, or ``SampleRefused``."""
        with self._lock:
            allowed = request.server in self.allowed
        if allowed:
            decision = SampleDecision("server", decided_by="policy",
                                      reason="allowed for this server this session")
        else:
            decision = self.approve(request)
        with self._lock:
            if decision.choice == "server":
                self.allowed.add(request.server)
        if decision.choice == "decline":
            raise SampleRefused(f"declined: {decision.reason or 'the user declined'}")
        return self.generate(request, min(request.max_tokens, self.max_tokens))


# ---------------------------------------------------------------- the SDK's request

def from_params(server: str, params: Any, tool: str = "") -> SampleRequest:
    """A ``SampleRequest`` from the SDK's ``CreateMessageRequestParams``;
    ``UnsupportedContent`` for anything but text."""
    if getattr(params, "tools", None):
        raise UnsupportedContent("deskmate does not offer tools to sampling requests")
    messages = tuple(SampleMessage(m.role, _text(m.content)) for m in params.messages)
    return SampleRequest(server, messages, int(params.max_tokens),
                         system_prompt=params.system_prompt or "",
                         temperature=params.temperature,
                         stop=tuple(params.stop_sequences or ()), tool=tool)


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    texts = []
    for block in blocks:
        kind = getattr(block, "type", "?")
        if kind != "text":
            raise UnsupportedContent(f"deskmate samples text only; this request holds {kind} "
                                     "content (images and audio are not supported)")
        texts.append(block.text)
    return "\n".join(texts)


def stop_reason(finish_reason: str) -> str:
    """MCP's stopReason for a model's finish reason."""
    return {"length": "maxTokens", "stop": "endTurn"}.get(finish_reason, finish_reason)


def describe(request: SampleRequest, cap: int = MAX_TOKENS) -> list[str]:
    """The lines a person reads before approving (the modal's and the terminal's)."""
    r = request
    where = f" during {r.tool}" if r.tool else ""
    tokens = min(r.max_tokens, cap)
    asked = f", {r.max_tokens} asked" if tokens != r.max_tokens else ""
    lines = [f"{r.server} asks{where} to use the local model (up to {tokens} tokens{asked})."]
    if r.system_prompt:
        lines.append(f"system: {r.system_prompt}")
    return lines + [f"{m.role}: {m.text}" for m in r.messages]
