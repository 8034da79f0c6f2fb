"""Rollouts: the trainable policy runs a task through the app's own agent loop.

Each rollout builds a fresh agent (``build_agent``, as ``deskmate run`` does) whose
ChatModel is the policy (``PolicyChatModel``) and whose tools go through the training
``ToolGate``. The policy records every model call as (prompt ids, generated ids); those
are the samples GRPO trains on. Tool output and observations reach the model only as
part of a later call's prompt, so they are never in a completion: masked by
construction, not by bookkeeping.

Sampling is seeded per call from (run seed, step, task, rollout, call), so a run — or a
resumed run — draws with the same seeds every time (the same rollouts on the CPU; see
finetune/checkpoint.py for CUDA). Training rollouts sample at top-p 1
(the loss takes log-probs under the full distribution). A call whose prompt no longer
fits the policy's ``max_seq_len`` ends the rollout with status ``context_full``: an
outcome scored like any unfinished attempt, not a failure of the run.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from deskmate.app.agent import events as ev
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.modes import Mode
from deskmate.app.llm.base import ChatMessage, ChatModel, GenerationParams, StreamEvent
from deskmate.finetune.grpo import GRPOConfig, Sample
from deskmate.finetune.toolgate import GatedHub, ToolGate, TrainingPolicy

if TYPE_CHECKING:
    from deskmate.tools.hub import Hub


@dataclass(frozen=True)
class Rollout:
    task_key: str
    answer: str  # the final answer ("" when the turn ended without one)
    status: str  # the turn's status: answered, max_steps, error, …
    transcript: tuple[ChatMessage, ...]  # exactly what the model saw, and its replies
    samples: tuple[Sample, ...]  # one per model call
    tool_calls: int
    wall_s: float
    # The task's own check score of the answer, taken in its workspace (a suite task's
    # file checks and verify.py); None: the rubric's answer checks score it.
    checks: float | None = None
    error: str = ""  # why the rollout could not run (a server did not start): it scores 0

    @property
    def completion_tokens(self) -> int:
        return sum(len(s.completion_ids) for s in self.samples)


class SeededModel:
    """Gives every call of the wrapped model its own seed: seed, seed + 1, …; and the
    rollout's top-p when it has one. Notes a call that found the context full."""

    def __init__(self, model: ChatModel, seed: int, top_p: float | None = None) -> None:
        self.model, self.seed, self.calls, self.top_p = model, seed, 0, top_p
        self.info = model.info
        self.context_full = False

    def stream(self, messages: Sequence[ChatMessage],
               params: GenerationParams = GenerationParams(),
               cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        from deskmate.finetune.policy import ContextFull

        seed = (self.seed + self.calls) % 2**31
        self.calls += 1
        params = replace(params, seed=seed)
        if self.top_p is not None:
            params = replace(params, top_p=self.top_p)
        try:
            yield from self.model.stream(messages, params, cancel)
        except ContextFull:
            self.context_full = True
            raise  # the agent ends the turn on a model error; the rollout names it

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)  # tokenize, take_records, … when it has them

    def close(self) -> None:
        pass


def rollout_seed(seed: int, step: int, task_key: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{step}/{task_key}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "little") % 2**31


@dataclass(frozen=True)
class RolloutSettings:
    mode: Mode = "code"  # the agent's mode: code (sandbox) or eager (native tool calls)
    limits: AgentLimits = AgentLimits(max_steps=6, max_tokens=512, temperature=1.0)
    top_p: float | None = None  # nucleus of every call; None: the agent's own (0.95)

    @classmethod
    def of(cls, mode: Mode, config: GRPOConfig, temperature: float | None = None,
           top_p: float | None = 1.0) -> RolloutSettings:
        """The agent limits of ``config`` (at ``temperature`` instead of its own, if
        given); top-p 1 unless told, as training needs (evaluation passes None)."""
        return cls(mode, AgentLimits(
            max_steps=config.max_model_calls, max_tokens=config.max_new_tokens,
            temperature=config.temperature if temperature is None else temperature),
            top_p=top_p)


def run_rollout(model: ChatModel, task_key: str, prompt: str, gate: ToolGate, *,
                hub: Hub | None = None, settings: RolloutSettings = RolloutSettings(),
                seed: int = 0) -> Rollout:
    """One attempt at ``prompt``.

    A model that records its calls (``PolicyChatModel.take_records``) yields the samples
    to train on; any other (llama.cpp, for the held-out evaluation) yields none.
    """
    from deskmate.app.agent.factory import build_agent

    take = getattr(model, "take_records", None) or list
    take()  # forget calls made outside this rollout
    started = time.perf_counter()
    seeded = SeededModel(model, seed, settings.top_p)
    runtime = build_agent(seeded, hub=GatedHub(hub, gate),
                          mode=settings.mode, policy=TrainingPolicy(), limits=settings.limits)
    answer, status, tool_calls = "", "error", 0
    try:
        for event in runtime.agent.run(prompt):
            if isinstance(event, ev.FinalAnswer):
                answer = event.text
            elif isinstance(event, ev.TurnFinished):
                status, tool_calls = event.status, event.tool_calls
        transcript = tuple(runtime.agent.transcript)
    finally:
        runtime.close()
    if seeded.context_full:
        status = "context_full"
    # An engine other than the trained weights keeps the log-probs it sampled with: the
    # update corrects for the difference (truncated importance sampling).
    off_policy = getattr(model, "off_policy", False)
    samples = tuple(Sample(tuple(r.prompt_ids), tuple(r.completion_ids),
                           tuple(r.logprobs) if off_policy else ()) for r in take())
    return Rollout(task_key, answer, status, transcript, samples, tool_calls,
                   time.perf_counter() - started)
