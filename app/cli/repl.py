"""``deskmate chat`` with no prompt, in a terminal: a chat in the plain terminal.

Each line typed is a turn of one recorded session (``Conversation``, as the app's chat:
the same store, listed in ``deskmate sessions`` and the app's F2); the answer streams as
it is written. The model answers alone, with no tools (as ``deskmate chat PROMPT``).
Ctrl-C cancels the running turn (the cut answer is recorded as cut, as the app does)
or clears the line being typed; Ctrl-D or ``/exit`` quits; ``/new`` starts a new
session. Lines are edited and recalled with readline where Python has it, from the
prompt history the app keeps too (``services.prompt_history``).
"""

from __future__ import annotations

import queue
import re
import sys
import threading
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from deskmate.app.agent.events import AgentEvent
    from deskmate.app.llm import ChatModel
    from deskmate.app.services.conversation import Conversation

PROMPT = "› "
COMMANDS = {"/new": "start a new session", "/exit": "quit (Ctrl-D does too)",
            "/help": "this list"}
# A word after the slash, then a space or the end: "/etc/hosts: what is it?" is a prompt.
_COMMAND = re.compile(r"/[A-Za-z][\w-]*(?:\s.*)?", re.S)
_DONE = object()  # the turn's thread has no more events


def repl(conversation: Conversation, model: ChatModel) -> None:
    """Read, answer, repeat, until Ctrl-D or ``/exit``."""
    history = _history()
    conversation.build(model, None)
    click.echo(f"deskmate chat · {model.info.name} · no tools · recorded in Sessions · "
               "/help lists commands · Ctrl-C cancels a turn · Ctrl-D quits", err=True)
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
            click.echo("[a new session]", err=True)
        elif text == "/help":
            for name, what in COMMANDS.items():
                click.echo(f"  {name:6} {what}", err=True)
        elif _COMMAND.fullmatch(text):  # a typo must not become a prompt
            click.echo(f"{text.split()[0]} is not a command here: " + ", ".join(COMMANDS)
                       + " (the app, `deskmate`, has more)", err=True)
        else:
            turn(conversation, text)


def turn(conversation: Conversation, text: str) -> None:
    """One turn, its answer streamed to stdout; Ctrl-C cancels it and waits for its end
    (so that what was cut is recorded before the next prompt)."""
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
    wrote = False
    while True:
        try:  # a Ctrl-C may land anywhere in here, showing an event included
            event = events.get(timeout=0.2)
            if event is _DONE:
                break
            wrote = _show(event) or wrote
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            if not cancel.is_set():
                cancel.set()
                click.echo("\n[cancelling …]", err=True)
    if wrote:
        click.echo()


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
