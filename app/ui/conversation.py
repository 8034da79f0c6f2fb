"""``Conversation``: the agent session behind the chat screen (no Textual here).

It owns the agent runtime, the session's permission policy and the recorder. Every
method blocks (model prompt evaluation, sandbox start, SQLite writes), so the app
calls them from thread workers only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from deskmate.app.config import Config
from deskmate.app.llm.base import ChatMessage, ChatModel
from deskmate.tools.policy import Approver, Policy

if TYPE_CHECKING:  # the agent loop loads with the first agent, not at start-up
    from deskmate.app.agent import events as ev

# Exceptions that mean "the code sandbox cannot run here"; the chat then falls back to
# eager JSON tool calls (no code execution at all) and says so.
_SANDBOX_UNAVAILABLE = (ImportError, OSError, RuntimeError)


class Conversation:
    def __init__(self, config: Config, approver: Approver | None, *, mode: str = "code",
                 record: bool = True, db_factory: Callable[[], Any] | None = None) -> None:
        self.config = config
        self.mode = mode
        self.default_mode = mode  # a new session's; a resumed one keeps its own
        self.record = record
        self._db_factory = db_factory
        self._db: Any = None
        self.policy = Policy(trusted_servers=self._trusted(), approver=approver)
        self.runtime: Any = None
        self.recorder: Any = None
        self.transcript: list[ChatMessage] = []
        self.active_mode = mode
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- building

    def build(self, model: ChatModel, hub: Any) -> str:
        """(Re)build the agent over ``hub`` on ``self.transcript``; returns a warning."""
        from deskmate.app.agent.factory import build_agent, options_from_config

        with self._lock:
            old, self.runtime = self.runtime, None
            if old is not None and old.sandbox is not None:
                old.sandbox.close()
            warning = ""
            mode = self.mode
            options = dict(policy=self.policy, transcript=self.transcript,
                           **options_from_config(self.config))
            try:
                runtime = build_agent(model, hub=hub, mode=mode, **options)
            except _SANDBOX_UNAVAILABLE as exc:
                if mode != "code":
                    raise
                mode = "eager"
                warning = (f"The code sandbox is unavailable ({exc}); tools are called "
                           "as JSON tool calls instead, without running code.")
                runtime = build_agent(model, hub=hub, mode=mode, **options)
            self.runtime, self.active_mode = runtime, mode
            return warning

    @property
    def db(self) -> Any:
        if self._db is None:
            from deskmate.app.store import open_db

            self._db = (self._db_factory or open_db)()
        return self._db

    # ---------------------------------------------------------------- turns

    def run(self, text: str, cancel: threading.Event) -> Iterator[ev.AgentEvent]:
        """One turn: the agent's events, each recorded before it is yielded."""
        if self.runtime is None:
            raise RuntimeError("no agent yet: load a model first")
        if self.record and self.recorder is None:
            from deskmate.app.store import Recorder

            info = self.runtime.agent.model.info
            self.recorder = Recorder.new(self.db, model=info.name, adapter=info.adapter,
                                         mode=self.active_mode)
        agent = self.runtime.agent
        try:
            for event in agent.run(text, cancel):
                if self.recorder is not None:
                    self.recorder.record(event)
                yield event
        finally:
            self.transcript = list(agent.transcript)
        self._save_kv_state()

    @property
    def session_id(self) -> str | None:
        return self.recorder.session_id if self.recorder is not None else None

    def rate(self, turn: int, up: bool) -> None:
        from deskmate.app.store import rate

        if self.session_id is None:
            raise RuntimeError("nothing recorded in this session yet")
        rate(self.db, self.session_id, "up" if up else "down", turn=turn)

    # ---------------------------------------------------------------- sessions

    def new_session(self) -> None:
        """Forget the transcript and the session's approvals; the next turn starts fresh."""
        self.recorder = None
        self.transcript = []
        self.mode = self.default_mode
        self.policy.allowed_tools.clear()
        self.policy.trusted_servers = self._trusted()

    def _trusted(self) -> set[str]:
        """The servers the config trusts; approvals given in a session are not kept."""
        return {s.name for s in self.config.mcp.servers.values() if s.trust}

    def resume(self, session_id: str, model: ChatModel | None) -> Any:
        """Continue a recorded session in its mode: its transcript, recorder and KV state
        (the KV state only with the model that made it)."""
        from deskmate.app.store import Recorder, resume

        resumed = resume(self.db, session_id)
        self.new_session()
        if resumed.summary.mode in ("code", "eager"):
            self.mode = resumed.summary.mode
        self.transcript = list(resumed.transcript)
        self.recorder = Recorder(self.db, resumed.summary.id) if self.record else None
        load_state = getattr(model, "load_state", None)
        if (load_state is not None and resumed.has_kv_state
                and not other_model(resumed.summary, model)):
            load_state(resumed.kv_state_path)
        return resumed

    def _save_kv_state(self) -> None:
        model = self.runtime.agent.model if self.runtime is not None else None
        save_state = getattr(model, "save_state", None)
        if save_state is None or self.session_id is None:
            return
        from deskmate.app.store.sessions import kv_state_path, prune_kv_states

        save_state(kv_state_path(self.session_id))
        prune_kv_states(keep=self.session_id)

    def close(self) -> None:
        if self.runtime is not None and self.runtime.sandbox is not None:
            self.runtime.sandbox.close()
        self.runtime = None


def other_model(summary: Any, model: ChatModel | None) -> str:
    """A note when ``model`` is not the one a recorded session was made with, else ""."""
    if model is None or not summary.model:
        return ""
    recorded = summary.model + (f" + {summary.adapter}" if summary.adapter else "")
    info = model.info
    loaded = info.name + (f" + {info.adapter}" if info.adapter else "")
    if recorded == loaded:
        return ""
    return (f"This session was recorded with {recorded}; it goes on with {loaded}, the "
            f"model loaded now (/model NAME switches).")
