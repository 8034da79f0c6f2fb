"""``deskmate chat`` with no prompt, in a terminal: a chat in the plain terminal.

Each line typed is a turn of one recorded session (``Conversation``, as the app's chat:
the same store, listed in ``deskmate sessions`` and the app's F2); the answer streams as
it is written. The model answers alone, with no tools (as ``deskmate chat PROMPT``).
Ctrl-C cancels the running turn (the cut answer is recorded as cut, as the app does)
or clears the line being typed; Ctrl-D or ``/exit`` quits; ``/new`` starts a new
session. Lines are edited and recalled with readline where Python has it, from the
prompt history the app keeps too (``services.prompt_history``).

After each answer a dim ``ctx 1.2k/8.2k`` on stderr says how much of the context
window the last model call filled (``/context`` says it in words). ``/compact``
summarises the older turns into one message (``services.compaction``, as the app's
``/compact``); past ``NEAR_FULL`` of the window that happens by itself after the answer.
"""

from __future__ import annotations

import queue
import re
import signal
import sys
import threading
from typing import TYPE_CHECKING

import click

from deskmate.app.services.compaction import reading

if TYPE_CHECKING:
    from deskmate.app.agent.events import AgentEvent
    from deskmate.app.llm import ChatModel
    from deskmate.app.services.compaction import Compaction
    from deskmate.app.services.conversation import Conversation

PROMPT = "› "
COMMANDS = {"/new": "start a new session",
            "/compact": "summarise the older turns into one message (all stays recorded)",
            "/context": "how much of the model's context window the session fills",
            "/exit": "quit (Ctrl-D does too)", "/help": "this list"}
# A word after the slash, then a space or the end: "/etc/hosts: what is it?" is a prompt.
_COMMAND = re.compile(r"/[A-Za-z][\w-]*(?:\s.*)?", re.S)
_DONE = object()  # the turn's thread has no more events


def repl(conversation: Conversation, model: ChatModel) -> None:
    """Read, answer, repeat, until Ctrl-D or ``/exit``."""
    _hear_ctrl_c()
    history = _history()
    conversation.build(model, None)
    click.echo(f"deskmate chat · {model.info.name} · no tools · recorded in Sessions · "
               "/help lists commands · Ctrl-C cancels a turn · Ctrl-D quits", err=True)
    window = model.info.context_size
    used = 0  # what the last model call read and wrote, in tokens
    while True:
        try:
            line = input(PROMPT)
        except EOFError:  # Ctrl-D
            click.echo(err=True)
            return
        except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line, as a shell does
            click.echo("^C", err=True)
            continue
        text = line.strip()
        if not text:
            continue
        if history is not None:
            history.keep(line)
        if text == "/exit":
            return
        if text == "/new":
            conversation.new_session()
            conversation.build(model, None)
            used = 0
            click.echo("[a new session]", err=True)
        elif text == "/help":
            for name, what in COMMANDS.items():
                click.echo(f"  {name:9} {what}", err=True)
        elif text == "/context":
            click.echo(_context(used, window), err=True)
        elif text == "/compact":
            used = compact(conversation, used)
        elif _COMMAND.fullmatch(text):  # a typo must not become a prompt
            click.echo(f"{text.split()[0]} is not a command here: " + ", ".join(COMMANDS)
                       + " (the app, `deskmate`, has more)", err=True)
        else:
            used = turn(conversation, text) or used
            meter, near_full = reading(used, window)
            if used:
                _dim(meter)
            if near_full:  # before the next prompt: it may not fit any more
                _dim("[the session nears the model's context window: compacting]")
                used = compact(conversation, used, auto=True)


def _hear_ctrl_c() -> None:
    """Make Ctrl-C reach the chat. A program started in the background of a script
    (``cmd &`` without job control, as CI runners and ``nohup`` wrappers do) inherits
    SIGINT ignored, and Python then installs no KeyboardInterrupt at all: Ctrl-C would
    do nothing and a long answer could not be cancelled. Every Ctrl-C here is caught
    (cancel the turn, clear the line), so taking SIGINT back never kills the chat."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def turn(conversation: Conversation, text: str) -> int | None:
    """One turn, its answer streamed to stdout; Ctrl-C cancels it and waits for its end
    (so that what was cut is recorded before the next prompt). Returns the tokens its
    last model call read and wrote (None: no call ended)."""
    from deskmate.app.agent import events as ev

    cancel = threading.Event()
    events: queue.Queue[AgentEvent | object] = queue.Queue()

    def work() -> None:
        try:
            for event in conversation.run(text, cancel):
                events.put(event)
        except Exception as exc:  # said on this terminal; the chat goes on
            events.put(ev.AgentError(kind=type(exc).__name__, message=str(exc)))
        finally:
            events.put(_DONE)

    threading.Thread(target=work, name="deskmate-turn", daemon=True).start()
    wrote, used = False, None
    while True:
        try:  # a Ctrl-C may land anywhere in here, showing an event included
            event = events.get(timeout=0.2)
            if event is _DONE:
                break
            if isinstance(event, ev.ModelMessage):
                used = event.usage.prompt_tokens + event.usage.completion_tokens
            wrote = _show(event) or wrote
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            if not cancel.is_set():
                cancel.set()
                click.echo("\n[cancelling …]", err=True)
    if wrote:
        click.echo()
    return used


def compact(conversation: Conversation, used: int, auto: bool = False) -> int:
    """``/compact``: the older turns summarised by the model (Ctrl-C cancels it, the
    session as it was); the tokens the session now fills, as far as known."""
    from deskmate.app.services.compaction import NothingToCompact
    from deskmate.app.services.compaction import compact as summarise

    cancel = threading.Event()
    done: list[Compaction | BaseException] = []

    def work() -> None:
        try:
            done.append(summarise(conversation, cancel=cancel))
        except Exception as exc:  # said here; the session stays as it was
            done.append(exc)

    thread = threading.Thread(target=work, name="deskmate-compact", daemon=True)
    thread.start()
    if not auto:
        _dim("[compacting: the model summarises the older turns …]")
    while thread.is_alive():
        try:
            thread.join(0.2)
        except KeyboardInterrupt:
            cancel.set()
            click.echo("[cancelling …]", err=True)
    result = done[0]
    if isinstance(result, NothingToCompact):
        if not auto:  # one long turn: the meter says the rest
            click.echo(f"[not compacted: {result}]", err=True)
        return used
    if isinstance(result, BaseException):
        click.echo(f"[not compacted: {result}]", err=True)
        return used
    where = (f"; the full transcript stays in session {result.kept_in}, this one goes on "
             f"in {result.session}" if result.session else "")
    click.echo(f"[compacted: {result.messages_before} messages became "
               f"{result.messages_after}{where}]", err=True)
    # Until the next call reads it, the size is unknown: what the summary replaced is
    # no longer there, so the meter starts again.
    return 0


def _context(used: int, window: int) -> str:
    """``/context``, in words."""
    if not used:
        return "context: no model call read this session yet (or it was just compacted)"
    share = f" of the {window:,}-token window ({used / window:.0%})" if window > 0 else ""
    return (f"context: the last model call read and wrote {used:,} tokens{share}; "
            f"/compact summarises the older turns, /new starts afresh")


def _dim(text: str) -> None:
    """A quiet line on stderr (dim where stderr is a terminal; click drops the styling
    elsewhere)."""
    click.echo(click.style(text, dim=True), err=True)


def _show(event: AgentEvent | object) -> bool:
    """Write what a person reads of ``event``; True when it was answer text."""
    from deskmate.app.agent import events as ev

    if isinstance(event, ev.ModelDelta):
        click.echo(event.text, nl=False)
        sys.stdout.flush()
        return True
    if isinstance(event, ev.AgentError):
        click.echo(f"\n[error: {event.message}]", err=True)
    elif isinstance(event, ev.TurnFinished) and event.status != "answered":
        click.echo(f"\n[{event.status}]", err=True)
    return False


class _History:
    """readline's history, loaded from and kept in the prompt history file."""

    def __init__(self, readline) -> None:  # the module, when Python has it
        from deskmate.app.services.prompt_history import PromptHistory, history_path

        self.readline = readline
        self.store = PromptHistory(history_path())
        self.sent: list[str] = []
        try:
            self.sent = self.store.load()
        except OSError as exc:
            click.echo(f"The prompt history cannot be read: {exc}", err=True)
        for entry in self.sent:
            readline.add_history(entry)

    def keep(self, line: str) -> None:
        if self.sent and self.sent[-1] == line:
            return
        self.sent.append(line)
        try:
            self.store.add(line, self.sent)
        except OSError as exc:
            click.echo(f"The prompt history cannot be kept: {exc}", err=True)


def _history() -> _History | None:
    try:
        import readline
    except ImportError:  # Windows' Python: input() still works, without recall
        return None
    return _History(readline)
