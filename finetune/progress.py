"""What a finetuning run reports while it runs: typed, frozen progress events.

The training process emits them; on the wire each is one JSON object per line,
``{"event": KIND, **fields}`` (``to_json``), kept in the run's ``progress.jsonl``.
Readers turn a line back into an event with ``parse_progress`` and show it with
``describe`` — the CLI prints that text, the Finetune screen logs it and draws steps.
A line that is not one of ours (a traceback, a library's warning) becomes ``Text``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, kw_only=True)
class ProgressEvent:
    kind: ClassVar[str]  # the "event" value on the wire

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, **{f.name: getattr(self, f.name)
                                       for f in dataclasses.fields(self)}}


Emit = Callable[[ProgressEvent], None]


@dataclass(frozen=True, kw_only=True)
class Tasks(ProgressEvent):
    """The run's tasks are ready (gathered, or read back when resuming)."""

    kind: ClassVar[str] = "tasks"
    train: int
    heldout: int
    source: str  # the spec's task source, as written (sessions, suite:PATH, generate)


@dataclass(frozen=True, kw_only=True)
class RubricWritten(ProgressEvent):
    """The judge wrote a rubric for a task that had none."""

    kind: ClassVar[str] = "rubric"
    task: str  # the task's key
    criteria: int


@dataclass(frozen=True, kw_only=True)
class PolicyLoaded(ProgressEvent):
    kind: ClassVar[str] = "policy"
    base: str
    device: str
    backend: str


@dataclass(frozen=True, kw_only=True)
class Sampler(ProgressEvent):
    """Who samples the training rollouts (``GRPOConfig.rollout_engine`` resolved)."""

    kind: ClassVar[str] = "sampler"
    engine: str  # llamacpp | policy
    reason: str  # why this one, in words


@dataclass(frozen=True, kw_only=True)
class Resumed(ProgressEvent):
    kind: ClassVar[str] = "resumed"
    step: int  # the last step the checkpoint had finished


@dataclass(frozen=True, kw_only=True)
class RolloutError(ProgressEvent):
    """A rollout whose world could not be set up: it scores 0."""

    kind: ClassVar[str] = "rollout_error"
    step: int
    task: str
    message: str


@dataclass(frozen=True, kw_only=True)
class Step(ProgressEvent):
    """One GRPO step done. Also what a checkpoint's history and the run's metrics keep."""

    kind: ClassVar[str] = "step"
    step: int
    steps: int  # steps in the run
    reward_mean: float
    reward_std: float
    pass_rates: dict[str, float]  # per rubric category, of the rollouts that ran
    rollout_errors: int
    groups_used: int  # groups with reward variance (the others teach nothing)
    loss: float
    kl: float
    tokens_generated: int
    tokens_trained: int
    tokens_per_s: float
    tokens_per_s_generate: float
    tokens_per_s_train: float
    step_s: float
    eta_s: float


@dataclass(frozen=True, kw_only=True)
class Exported(ProgressEvent):
    kind: ClassVar[str] = "exported"
    adapter: str  # the GGUF adapter's path
    adapter_id: int


@dataclass(frozen=True, kw_only=True)
class Heldout(ProgressEvent):
    """The before/after evaluation of one model on the held-out tasks."""

    kind: ClassVar[str] = "heldout"
    which: str  # base | adapter
    eval_run: int
    reward_mean: float | None  # None: no task had a score to average
    tasks: int


@dataclass(frozen=True, kw_only=True)
class Done(ProgressEvent):
    kind: ClassVar[str] = "done"
    run_id: int | None
    steps: int
    adapter: str
    adapter_id: int
    heldout: dict[str, dict[str, Any]] | None = None  # which -> eval_run, reward_mean

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.heldout is None:  # the wire has no key when nothing was held out
            del data["heldout"]
        return data


@dataclass(frozen=True, kw_only=True)
class Interrupted(ProgressEvent):
    """Stopped (Ctrl+C, the screen's x): the newest checkpoint resumes it."""

    kind: ClassVar[str] = "interrupted"
    run_id: int | None


@dataclass(frozen=True, kw_only=True)
class Failed(ProgressEvent):
    """A user error ended the run; the message says what to do."""

    kind: ClassVar[str] = "error"
    message: str


@dataclass(frozen=True, kw_only=True)
class Text(ProgressEvent):
    """A line the process printed that is not a progress event (tracebacks, warnings)."""

    kind: ClassVar[str] = "text"
    message: str


_KINDS: dict[str, type[ProgressEvent]] = {cls.kind: cls for cls in (
    Tasks, RubricWritten, PolicyLoaded, Sampler, Resumed, RolloutError, Step, Exported,
    Heldout, Done, Interrupted, Failed)}


def parse_progress(line: str) -> ProgressEvent | None:
    """One line of the training process as an event; None for a blank line."""
    line = line.strip()
    if not line:
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return Text(message=line)
    return from_json(data) if isinstance(data, dict) else Text(message=line)


def from_json(data: dict[str, Any]) -> ProgressEvent:
    """An event from its JSON object. Keys it does not know are left out, so logs written
    by a newer deskmate still read; one it cannot make sense of is shown as text."""
    cls = _KINDS.get(str(data.get("event")))
    if cls is None:
        return Text(message=json.dumps(data))
    known = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in known})
    except TypeError:  # a field missing
        return Text(message=json.dumps(data))


def describe(event: ProgressEvent) -> str:
    """The event as one line of text, the same in the CLI and the Finetune screen."""
    match event:
        case Step():
            return _describe_step(event)
        case Tasks():
            return f"{event.train} training tasks, {event.heldout} held out ({event.source})"
        case PolicyLoaded():
            return f"policy {event.base} on {event.device} ({event.backend})"
        case Sampler():
            return f"rollouts sampled by {event.reason}"
        case RubricWritten():
            return f"rubric for {event.task}: {event.criteria} criteria"
        case RolloutError():
            return f"step {event.step}: a rollout of {event.task} could not run: {event.message}"
        case Resumed():
            return f"resumed after step {event.step}"
        case Exported():
            return f"adapter exported: {event.adapter}"
        case Heldout():
            return (f"held-out {event.which}: score {score(event.reward_mean)} "
                    f"on {event.tasks} tasks")
        case Done():
            return "done: the adapter is ready"
        case Interrupted():
            return "stopped: the last checkpoint resumes it"
        case Failed():
            return f"failed: {event.message}"
        case Text():
            return event.message
    return json.dumps(event.to_json())


def _describe_step(step: Step) -> str:
    """Step, reward, rubric pass rates, speed, ETA."""
    parts = [f"step {step.step}/{step.steps}",
             f"reward {step.reward_mean:.3f} ± {step.reward_std:.3f}"]
    if step.pass_rates:
        parts.append(" ".join(f"{k.replace('_', ' ')} {v:.0%}"
                              for k, v in step.pass_rates.items()))
    parts.append(f"{step.tokens_per_s:.0f} tok/s")
    if step.eta_s > 0:
        parts.append(f"ETA {step.eta_s / 60:.1f} min")
    return " · ".join(parts)


def score(value: float | None) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "–"
