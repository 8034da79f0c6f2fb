"""``Conversation``: one agent session, the same for the chat screen and ``deskmate run``.

It owns the agent runtime (agent, catalog, sandbox, over the caller's hub), the
session's permission policy and the recorder. ``run`` is the one record-then-yield
loop: each agent event is written to the store before a face sees it. Every method
blocks (model prompt evaluation, sandbox start, SQLite writes), so the TUI calls them
from thread workers only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskmate.app.config import Config
from deskmate.app.llm.base import ChatMessage, ChatModel
from deskmate.tools.policy import Approver, Policy
from deskmate.tools.sandbox.gate import CellApprover, CellGate

if TYPE_CHECKING:  # the agent loop loads with the first agent, not at start-up
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.factory import AgentRuntime
    from deskmate.app.agent.modes import Mode
    from deskmate.app.store import Database, Recorder, ResumedSession, SessionSummary
    from deskmate.tools.hub import Hub
    from deskmate.tools.hub.elicitation import Asker

# Exceptions that mean "the code sandbox cannot run here"; the chat then falls back to
# eager JSON tool calls (no code execution at all) and says so.
_SANDBOX_UNAVAILABLE = (ImportError, OSError, RuntimeError)


@dataclass(frozen=True)
class BuiltAgent:
    """An agent runtime made by ``Conversation.prepare``, not yet taken on."""

    runtime: AgentRuntime
    mode: Mode  # the mode it runs in: eager when the code sandbox could not start
    warning: str = ""  # why the mode differs from the one asked for


class Conversation:
    def __init__(self, config: Config, approver: Approver | None, *, mode: Mode = "code",
                 record: bool = True, db_factory: Callable[[], Database] | None = None,
                 yes: bool = False, yes_all: bool = False, max_steps: int | None = None,
                 max_tokens: int | None = None, keep_kv_state: bool = True,
                 asker: Asker | None = None, cell_approver: CellApprover | None = None
                 ) -> None:
        """``asker`` answers the questions servers ask during calls (None: declined);
        ``cell_approver`` is asked before each cell where nothing isolates the sandbox
        (None: such cells run only with --allow-unisolated);
        ``yes``/``yes_all`` approve calls without asking (headless runs); ``max_steps``
        and ``max_tokens`` override the config's limits; ``keep_kv_state`` saves the
        model's KV state after each turn so that a resumed session skips re-reading it
        (only the newest session's is kept)."""
        self.config = config
        self.mode: Mode = mode
        self.default_mode: Mode = mode  # a new session's; a resumed one keeps its own
        self.record = record
        self.keep_kv_state = keep_kv_state
        self._overrides = {"max_steps": max_steps, "max_tokens": max_tokens}
        self._db_factory = db_factory
        self._db: Database | None = None
        self.policy = Policy(trusted_servers=self._trusted(), approver=approver, yes=yes,
                             yes_all=yes_all)
        self.asker = asker
        self.cell_gate = CellGate(cell_approver)
        self.runtime: AgentRuntime | None = None
        self.recorder: Recorder | None = None
        self.transcript: list[ChatMessage] = []
        self.active_mode: Mode = mode

    # ---------------------------------------------------------------- building

    def build(self, model: ChatModel, hub: Hub | None, *, fall_back: bool = True) -> str:
        """(Re)build the agent over ``hub`` on ``self.transcript``; returns a warning.

        When the code sandbox cannot start and ``fall_back`` is set, the agent is built
        in eager mode and the warning says so; otherwise the error propagates.
        """
        if (old := self.detach()) is not None:
            old.close()
        built = self.prepare(model, hub, fall_back=fall_back)
        self.adopt(built)
        return built.warning

    def prepare(self, model: ChatModel, hub: Hub | None, *,
                fall_back: bool = True) -> BuiltAgent:
        """Build an agent over ``hub`` on ``self.transcript`` without taking it on.

        Blocking (prompt evaluation, sandbox start) and changes nothing here, so a UI
        builds in a worker thread and hands the result to ``adopt`` on its own thread.
        """
        from deskmate.app.agent.factory import build_agent, options_from_config

        mode = self.mode
        options = options_from_config(self.config, **self._overrides)

        def build(mode: Mode) -> AgentRuntime:
            return build_agent(model, hub=hub, mode=mode, policy=self.policy,
                               cell_gate=self.cell_gate,
                               transcript=self.transcript, asker=self.asker, **options)

        try:
            return BuiltAgent(build(mode), mode)
        except _SANDBOX_UNAVAILABLE as exc:
            if mode != "code" or not fall_back:
                raise
            warning = (f"The code sandbox is unavailable ({exc}); tools are called "
                       "as JSON tool calls instead, without running code.")
            return BuiltAgent(build("eager"), "eager", warning)

    def adopt(self, built: BuiltAgent) -> AgentRuntime | None:
        """Take on a prepared agent; returns the runtime it replaces, for the caller to
        close."""
        old = self.detach()
        self.runtime, self.active_mode = built.runtime, built.mode
        return old

    def detach(self) -> AgentRuntime | None:
        """Forget the runtime (no turn starts on it any more); the caller closes it."""
        old, self.runtime = self.runtime, None
        return old

    @property
    def db(self) -> Database:
        if self._db is None:
            from deskmate.app.store import close_interrupted, open_db

            self._db = (self._db_factory or open_db)()
            # This process's first look at the store: a session some killed process
            # left mid-turn is closed as interrupted before this one records.
            close_interrupted(self._db)
        return self._db

    # ---------------------------------------------------------------- turns

    def run(self, text: str, cancel: threading.Event, *,
            expand: bool = True) -> Iterator[ev.AgentEvent]:
        """One turn: the agent's events, each recorded before it is yielded. A turn
        cut short (cancelled, out of time) before the model's reply ended gets that
        reply, marked, as its last message (``store.recorder.cut_short_note``).
        ``expand=False`` sends ``text`` as is: a message the model read before
        (``/retry``), whose commands and attachments were already expanded."""
        if self.runtime is None:
            raise RuntimeError("no agent yet: load a model first")
        if self.record and self.recorder is None:
            from deskmate.app.store import Recorder

            info = self.runtime.agent.model.info
            self.recorder = Recorder.new(self.db, model=info.name, adapter=info.adapter,
                                         mode=self.active_mode)
        from deskmate.app.agent import events as ev
        from deskmate.app.store.recorder import cut_short_note

        prompt = self.model_input(text) if expand else text
        agent = self.runtime.agent
        cut = ""  # the text of a model call the turn's end cut short
        try:
            for event in agent.run(prompt, cancel):
                if isinstance(event, ev.ModelMessage):
                    cut = event.text if event.finish_reason == "cancelled" else ""
                elif isinstance(event, ev.TurnFinished):
                    # A turn cut short ends with the model's unfinished reply, marked:
                    # resume and export keep it, and the live transcript and a resumed
                    # one stay the same.
                    last = agent.transcript[-1].role if agent.transcript else None
                    if (note := cut_short_note(event.status, last, cut)) is not None:
                        agent.transcript.append(ChatMessage("assistant", note))
                        yield from self._recorded(ev.MessageAppended(
                            position=len(agent.transcript) - 1, role="assistant",
                            content=note))
                yield from self._recorded(event)
        finally:
            self.transcript = list(agent.transcript)
        if self.keep_kv_state:
            self._save_kv_state()

    def model_input(self, text: str) -> str:
        """What the model gets for ``text``: the tools' changes since the last turn first
        (the agent takes them on here, between turns), then the message with a
        ``/server:prompt`` expanded and ``@server:uri`` resources attached. Blocking;
        an unusable prompt command raises ``InputError`` before the turn starts."""
        from deskmate.app.agent.factory import follow_tools
        from deskmate.app.services.mcp_input import Reads, expand

        assert self.runtime is not None
        hub = self.runtime.hub
        if isinstance(hub, Reads):  # the training's gated hub offers tools only
            text = expand(text, hub, [s.name for s in hub.states()])
        else:  # still the user's @path files
            text = expand(text, None, [])
        note = follow_tools(self.runtime)
        return f"{note}\n\n{text}" if note else text

    def _recorded(self, event: ev.AgentEvent) -> Iterator[ev.AgentEvent]:
        if self.recorder is not None:
            self.recorder.record(event)
        yield event

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
        self.cell_gate.new_session()

    def _trusted(self) -> set[str]:
        """The servers the config trusts; approvals given in a session are not kept."""
        return {s.name for s in self.config.mcp.servers.values() if s.trust}

    def resume(self, session_id: str, model: ChatModel | None) -> ResumedSession:
        """Continue a recorded session in its mode: its transcript, recorder and KV state
        (the KV state only with the model that made it)."""
        resumed = self.load_session(session_id, model)
        self.continue_session(resumed)
        return resumed

    def load_session(self, session_id: str, model: ChatModel | None) -> ResumedSession:
        """Read a recorded session and load its KV state into ``model`` (when it made
        it). Blocking, and changes nothing here: a UI calls it in a worker thread and
        hands the result to ``continue_session`` on its own thread."""
        from deskmate.app.store import resume

        resumed = resume(self.db, session_id)
        load_state = getattr(model, "load_state", None)
        if (load_state is not None and resumed.has_kv_state
                and not other_model(resumed.summary, model)):
            load_state(resumed.kv_state_path)
        return resumed

    def continue_session(self, resumed: ResumedSession) -> None:
        """Go on with a session ``load_session`` read: its mode, transcript and recorder."""
        from deskmate.app.store import Recorder

        self.new_session()
        if resumed.summary.mode in ("code", "eager"):
            self.mode = resumed.summary.mode
        self.transcript = list(resumed.transcript)
        self.recorder = Recorder(self.db, resumed.summary.id) if self.record else None

    def _save_kv_state(self) -> None:
        model = self.runtime.agent.model if self.runtime is not None else None
        save_state = getattr(model, "save_state", None)
        if save_state is None or self.session_id is None:
            return
        from deskmate.app.store.sessions import kv_state_path, prune_kv_states

        save_state(kv_state_path(self.session_id))
        prune_kv_states(keep=self.session_id)

    def close(self) -> None:
        """Close the agent's sandbox; the hub and the model belong to the caller."""
        if self.runtime is not None:
            self.runtime.close()
        self.runtime = None


def other_model(summary: SessionSummary, model: ChatModel | None) -> str:
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
