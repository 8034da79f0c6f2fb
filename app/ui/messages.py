"""Typed messages that thread workers post to the UI (they never touch widgets).

Workers hold no widget references: they post one of these to the app (or to the
screen that started them) and the handler, on the event loop, updates the widgets.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:  # the agent's events load with the first turn, not at start-up
    from deskmate.app.agent.events import AgentEvent
    from deskmate.app.llm.base import ChatModel


class ModelReady(Message):
    def __init__(self, model: ChatModel, spec: str | None) -> None:
        self.model = model
        self.spec = spec
        super().__init__()


class ModelFailed(Message):
    def __init__(self, error: str, first_run: bool = False) -> None:
        self.error = error
        self.first_run = first_run
        super().__init__()


class AgentReady(Message):
    """An agent runtime was built (after a model load, a resume or a server change)."""

    def __init__(self, warning: str = "") -> None:
        self.warning = warning  # e.g. the sandbox is unavailable and eager mode is used
        super().__init__()


class AgentEventPosted(Message):
    """One event of the running turn, in order."""

    def __init__(self, event: AgentEvent) -> None:
        self.event = event
        super().__init__()


class TurnEnded(Message):
    """The turn's worker is done (after TurnFinished, or after a crash)."""


@dataclass
class PendingApproval:
    """A question from the agent's thread; ``answer`` unblocks it."""

    request: Any  # tools.policy.ApprovalRequest
    decision: str = "deny"
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self, decision: str) -> None:
        self.decision = decision
        self.done.set()


class ApprovalAsked(Message):
    def __init__(self, pending: PendingApproval) -> None:
        self.pending = pending
        super().__init__()


class HubChanged(Message):
    """A server's state changed (posted from the hub's own thread)."""

    def __init__(self, state: Any) -> None:
        self.state = state
        super().__init__()


class HubStarted(Message):
    def __init__(self, states: list[Any]) -> None:
        self.states = states
        super().__init__()


class ConfigChanged(Message):
    """The config file was rewritten; ``restart_hub`` when servers changed."""

    def __init__(self, config: Any, note: str = "", restart_hub: bool = False,
                 reload_model: bool = False) -> None:
        self.config = config
        self.note = note
        self.restart_hub = restart_hub
        self.reload_model = reload_model
        super().__init__()


class SessionResumed(Message):
    def __init__(self, resumed: Any, detail: Any) -> None:
        self.resumed = resumed  # app.store.ResumedSession
        self.detail = detail  # app.store.SessionDetail, to redraw the transcript
        super().__init__()


class DownloadProgress(Message):
    def __init__(self, spec: str, done: int, total: int | None) -> None:
        self.spec = spec
        self.done = done
        self.total = total
        super().__init__()


class DownloadFinished(Message):
    def __init__(self, spec: str, path: str = "", error: str = "") -> None:
        self.spec = spec
        self.path = path
        self.error = error
        super().__init__()


class FinetuneProgress(Message):
    """One line of a training run's progress (see app/ui/finetune.py)."""

    def __init__(self, data: dict[str, Any], run_id: int) -> None:
        self.data = data  # the JSON object, or {"event": "text", "message": line}
        self.run_id = run_id
        super().__init__()


class FeedbackStored(Message):
    def __init__(self, turn: int, rating: int) -> None:
        self.turn = turn
        self.rating = rating
        super().__init__()
