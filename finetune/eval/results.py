"""What one task run produced: made by the runner, stored by ``record``, summed by ``report``.

A module of its own so that those three import it rather than each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from deskmate.app.agent.modes import Mode
from deskmate.finetune.eval.checks import CheckResult


@dataclass(frozen=True)
class TaskRun:
    task: str
    mode: Mode
    repeat: int  # 0-based
    score: float | None  # None: no deterministic check (rubric only)
    success: bool | None
    checks: tuple[CheckResult, ...]
    status: str  # the turn's status, or "error" when the run could not happen
    answer: str
    prompt_tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    wall_s: float = 0.0
    session_id: str | None = None
    error: str = ""  # infrastructure failure (server, sandbox), not the model's
    # A --stable run's task served at another site address than every other run's (the
    # stable port was held by another program): it does not compare with its twin.
    off_stable: bool = False
