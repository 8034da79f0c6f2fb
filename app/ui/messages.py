"""Typed messages that thread workers post to the UI (they never touch widgets).

Workers hold no widget references and write nothing onto the app: each posts one of
these to the app (or to the screen that started it), carrying what it made (a model, a
hub, an agent), and the handler, on the event loop, takes it on and updates the widgets.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the agent's events load with the first turn, not at start-up
    from deskmate.app.agent.events import AgentEvent
    from deskmate.app.config import Config
    from deskmate.app.llm.base import ChatModel
    from deskmate.app.services.conversation import BuiltAgent
    from deskmate.app.store import ResumedSession, SessionDetail
    from deskmate.tools.hub import Hub, ServerState
    from deskmate.tools.policy import ApprovalRequest, Decision


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
    """An agent was built (after a model load, a resume or a server change)."""

    def __init__(self, built: BuiltAgent, build: int) -> None:
        self.built = built  # its warning: e.g. the sandbox is unavailable, eager mode used
        self.build = build  # which request made it: only the latest one is taken on
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

    request: ApprovalRequest
    decision: Decision = "deny"
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self, decision: Decision) -> None:
        self.decision = decision
        self.done.set()


class ApprovalAsked(Message):
    def __init__(self, pending: PendingApproval) -> None:
        self.pending = pending
        super().__init__()


class HubChanged(Message):
    """A server's state changed (posted from the hub's own thread)."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        super().__init__()


class ServerRestarted(Message):
    """A server was restarted on its own (its tools may have changed): the app rebuilds
    the agent, whose prompt and bridge list them."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__()


class HubStarted(Message):
    """The MCP hub is up: every enabled server answered or failed."""

    def __init__(self, hub: Hub, states: list[ServerState]) -> None:
        self.hub = hub
        self.states = states
        super().__init__()


class ConfigChanged(Message):
    """The config file was rewritten; ``restart_hub`` when servers changed."""

    def __init__(self, config: Config, note: str = "", restart_hub: bool = False,
                 reload_model: bool = False) -> None:
        self.config = config
        self.note = note
        self.restart_hub = restart_hub
        self.reload_model = reload_model
        super().__init__()


class SessionResumed(Message):
    def __init__(self, resumed: ResumedSession, detail: SessionDetail) -> None:
        self.resumed = resumed
        self.detail = detail  # to redraw the transcript
        super().__init__()


class DownloadProgress(Message):
    def __init__(self, spec: str, done: int, total: int | None) -> None:
        self.spec = spec
        self.done = done
        self.total = total
        super().__init__()


@dataclass(frozen=True, eq=False)
class Pull:
    """One model download: what, whether to use it after, and its cancel switch."""

    spec: str
    use_after: bool = False
    cancel: threading.Event = field(default_factory=threading.Event)


class DownloadFinished(Message):
    def __init__(self, pull: Pull, path: str = "", error: str = "") -> None:
        self.pull = pull
        self.path = path
        self.error = error
        super().__init__()

    @property
    def spec(self) -> str:
        return self.pull.spec


class FeedbackStored(Message):
    def __init__(self, turn: int, rating: int) -> None:
        self.turn = turn
        self.rating = rating
        super().__init__()
