"""What a finetuning run is asked to do: ``RunSpec`` (written as the run folder's
``spec.json``), its parsed task source, and ``RunError`` for what the user must fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from deskmate.app.agent.modes import Mode
from deskmate.finetune.grpo import GRPOConfig

CPU_MAX_GGUF_BYTES = 1_000_000_000  # the CPU path is for tiny models only


class RunError(Exception):
    """A run that cannot go on for a reason the user can fix; the message says how.
    The process entry turns it into an ``error`` progress line and exit code 2."""


@dataclass(frozen=True)
class TaskSource:
    """Where a run's tasks come from, parsed once from the spec's ``tasks`` text."""

    kind: Literal["sessions", "suite", "generate"]
    suite: Path | None = None  # the eval suite's folder, for kind "suite"

    @classmethod
    def parse(cls, text: str) -> TaskSource:
        if text.startswith("suite:"):
            return cls("suite", Path(text.removeprefix("suite:")))
        if text == "sessions":
            return cls("sessions")
        if text == "generate":
            return cls("generate")
        raise RunError(f"{text!r} is no task source: use sessions, generate or suite:PATH")

    def __str__(self) -> str:
        return f"suite:{self.suite}" if self.kind == "suite" else self.kind


@dataclass(frozen=True)
class RunSpec:
    base: str  # what the policy loads: a Hugging Face checkpoint, or a .gguf (dequantized)
    serving_gguf: str  # the GGUF llama.cpp serves: the adapter is made for it, eval runs it
    tasks: str = "sessions"  # sessions | suite:PATH | generate (see ``source``)
    judge: str = ""  # judge: a .gguf path, "openai" (the configured endpoint), "" = serving
    device: str = "auto"  # auto | cuda | cpu
    mode: Mode = "code"  # agent mode of the rollouts
    heldout: float = 0.2  # fraction of tasks kept for the before/after evaluation
    max_tasks: int = 64  # most tasks in the run (generated or taken)
    rubrics: str = ""  # a rubrics TOML to apply (edited by the user); "" = none
    db_path: str = ""  # sessions database; "" = the default one
    run_id: int | None = None  # runs.id (set when the run is created)
    grpo: dict[str, Any] = field(default_factory=dict)  # GRPOConfig fields to override

    def config(self) -> GRPOConfig:
        return GRPOConfig(**self.grpo)

    @property
    def source(self) -> TaskSource:
        """The task source; raises RunError for one that is not."""
        return TaskSource.parse(self.tasks)


def cpu_allowed(base: str) -> bool:
    path = Path(base)
    return path.suffix == ".gguf" and path.is_file() and path.stat().st_size <= CPU_MAX_GGUF_BYTES
