"""What the Finetune screen shows of a run: a ``RunView`` rebuilt from its progress
events, the same way live and from ``progress.jsonl``.

Plain data, no widgets. The text of each event is ``finetune.progress.describe``, as the
CLI prints it; the screen adds only the keys that act on the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deskmate.finetune.progress import (
    Done,
    Heldout,
    Interrupted,
    ProgressEvent,
    Step,
    describe,
)

KEY_HINTS: dict[type[ProgressEvent], str] = {Done: "u serves it", Interrupted: "s resumes it"}


def log_line(event: ProgressEvent) -> str | None:
    """What the log shows of an event (steps are drawn, not logged)."""
    if isinstance(event, Step):
        return None
    hint = KEY_HINTS.get(type(event))
    return f"{describe(event)} ({hint})" if hint else describe(event)


@dataclass
class RunView:
    """What the screen draws of one run, rebuilt from its progress events."""

    run_id: int
    steps: list[Step] = field(default_factory=list)
    heldout: dict[str, Heldout] = field(default_factory=dict)  # base / adapter
    log: list[str] = field(default_factory=list)

    def add(self, event: ProgressEvent) -> None:
        if isinstance(event, Step):
            self.steps.append(event)
        elif isinstance(event, Heldout):
            self.heldout[event.which] = event
        if (text := log_line(event)) is not None:
            self.log.append(text)
