"""Helpers shared by the UI tests (no tests here): models, waiting, app factories."""

from __future__ import annotations

import json
import threading
import time

from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.config import Config, MCPConfig
from deskmate.app.llm import Delta, Finished, ModelInfo, Usage
from deskmate.app.ui.app import DeskmateApp


def call(name: str, **arguments) -> str:
    """An eager-mode tool call, as Qwen/Hermes models write them."""
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


class SlowModel:
    """Streams words slowly until cancelled, so a test can press Esc midway."""

    info = ModelInfo(name="slow", backend="test", context_size=4096)

    def __init__(self, words: int = 400, delay: float = 0.02) -> None:
        self.words, self.delay = words, delay
        self.cancelled = threading.Event()

    def stream(self, messages, params=None, cancel=None):
        sent = []
        for i in range(self.words):
            if cancel is not None and cancel.is_set():
                self.cancelled.set()
                yield Finished("".join(sent), "cancelled", Usage(completion_tokens=len(sent)))
                return
            sent.append(f"w{i} ")
            yield Delta(sent[-1])
            time.sleep(self.delay)
        yield Finished("".join(sent), "stop", Usage(completion_tokens=len(sent)))

    def close(self) -> None:
        pass


def make_app(model=None, servers=(), mode: str = "eager", **config) -> DeskmateApp:
    cfg = Config(mcp=MCPConfig(servers={s.name: s for s in servers}), **config)
    if model is None:
        app = DeskmateApp(cfg, mode=mode)
    else:
        app = DeskmateApp(cfg, model_factory=lambda c, spec: model, mode=mode)
    return record_notifications(app)


def record_notifications(app: DeskmateApp) -> DeskmateApp:
    """Keep every notification in ``app.said``, also those expired by the time a wait
    gives up (errors show for 12 s; a wait lasts up to 60): a timed-out wait prints
    them all."""
    app.said = []  # type: ignore[attr-defined]
    notify = app.notify

    def recording(message, *args, **kwargs):
        app.said.append(str(message))  # type: ignore[attr-defined]
        return notify(message, *args, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return app


async def lay_out_below(pilot, screen) -> None:
    """Lay out and draw ``screen`` (under a dialog) now, as it stands.

    Textual lays out the top screen on every ``pilot.pause()`` but a screen under a
    dialog only when its own timer gets round to it: a snapshot of a dialog would show
    the chat as it was at some earlier moment (on a loaded machine an action's title cut
    at the width it had before the question). ``pilot.pause`` does this for the top screen.
    """
    # Twice: a change that alters a widget's width (an action's title gaining "waiting")
    # is laid out on one pass and drawn at its new width on the next; with one pass the
    # dialog's snapshot now and then showed the title cut (test_question_dialog).
    for _ in range(2):
        screen._on_timer_update()
        await pilot.pause()


def scripted(*replies, chunk: int = 6) -> ScriptedModel:
    return ScriptedModel(list(replies), chunk=chunk)


async def wait_for(pilot, predicate, timeout: float = 60.0, what: str = "",
                   context=None) -> None:
    """Wait until ``predicate()``; on a timeout say what the screen showed, every
    notification, and ``context()`` (what else the test can tell)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            app = pilot.app
            said = getattr(app, "said", None) or [n.message for n in app._notifications]
            more = f"; {context()}" if context is not None else ""
            raise AssertionError(f"timed out waiting for {what or predicate} (screen "
                                 f"{type(app.screen).__name__}, focus {app.focused!r}, "
                                 f"notifications {said}{more})")
        await pilot.pause(0.05)


async def ready(app, pilot) -> None:
    # The agent is built once the MCP servers answered or failed (up to their timeout).
    await wait_for(pilot, lambda: app.conversation.runtime is not None, timeout=180,
                   what="the agent")


async def ask(app, pilot, text: str) -> None:
    app.chat.query_one("#prompt").load_text(text)
    app.chat.query_one("#prompt").focus()
    await pilot.press("enter")


async def turn_done(app, pilot, timeout: float = 60.0) -> None:
    await wait_for(pilot, lambda: not app.chat.busy, timeout, "the turn to end")
    await pilot.pause()


def events(posted, kind):
    from deskmate.app.ui.messages import AgentEventPosted

    return [m.event for m in posted
            if isinstance(m, AgentEventPosted) and type(m.event).__name__ == kind]
