"""``deskmate run``'s answers to a server's questions (MCP elicitation) and requests to
use the model (MCP sampling: ``TerminalAsker.approve_sampling``), on the terminal.

Used only when standard input is a terminal; otherwise ``run`` has no asker and every
question is declined. The question and its prompts go to standard error (standard
output carries only the answer). Input is read line by line while watching the run's
cancel event, so Ctrl-C (which cancels the turn) also ends a question left unanswered.
"""

from __future__ import annotations

import select
import threading
from typing import TextIO

import click

from deskmate.tools.hub.elicitation import (
    BadAnswer,
    ElicitAnswer,
    ElicitField,
    ElicitRequest,
    check_answer,
)
from deskmate.tools.hub.sampling import SampleDecision, SampleRequest, describe

_CANCELLED = ElicitAnswer("cancel", decided_by="policy", reason="the turn was cancelled")


class TerminalAsker:
    """``tools.hub.elicitation.Asker`` on the terminal (called from a hub worker thread)."""

    def __init__(self, cancel: threading.Event, stdin: TextIO) -> None:
        self.cancel = cancel
        self._stdin = stdin
        self._lock = threading.Lock()  # one question at a time on the terminal

    def __call__(self, request: ElicitRequest) -> ElicitAnswer:
        with self._lock:
            where = f" (during {request.tool})" if request.tool else ""
            _say(f"\n{click.style(request.server, bold=True)} asks{where}: {request.message}")
            if request.mode == "url":
                return self._url(request)
            choice = self._choose("[y] answer  [d] decline  [c] cancel", "ydc")
            if choice != "y":
                return _refusal(choice)
            content: dict = {}
            for f in request.fields:
                value = self._field(f)
                if value is None:
                    return _CANCELLED
                content.update(value)
            return ElicitAnswer("accept", content)

    def approve_sampling(self, request: SampleRequest) -> SampleDecision:
        """``tools.hub.sampling.Approver``: may this server use the local model?"""
        with self._lock:
            title, *lines = describe(request)
            _say(f"\n{click.style(request.server, bold=True)}{title[len(request.server):]}")
            for line in lines:
                _say(f"  {line}")
            choice = self._choose("[y] allow once  [s] allow this server for the session  "
                                  "[d] decline", "ysd")
            if choice == "c":  # the turn was cancelled, or input ended
                return SampleDecision("decline", decided_by="policy",
                                      reason="the turn was cancelled")
            return SampleDecision("once" if choice == "y" else "server" if choice == "s"
                                  else "decline")

    def _url(self, request: ElicitRequest) -> ElicitAnswer:
        host = request.host or "an unknown host"
        _say(f"  it asks you to open a link on {click.style(host, bold=True, fg='yellow')}:\n"
             f"  {request.url}")
        choice = self._choose("[o] open it in the browser  [y] I opened it myself  "
                              "[d] decline  [c] cancel", "oydc")
        if choice == "o":
            click.launch(request.url)
        return ElicitAnswer("accept") if choice in "oy" else _refusal(choice)

    def _field(self, f: ElicitField) -> dict | None:
        """The field's checked answer ({} when left out); None when cancelled."""
        if f.description:
            _say(click.style(f"  {f.description}", dim=True))
        if f.options:
            _say("  " + "  ".join(f"{i}) {label}" for i, (_, label) in enumerate(
                f.options, 1)) + ("  (several: 1,3)" if f.kind == "multi" else ""))
        default = f.default
        shown = ",".join(default) if isinstance(default, list) else default
        prompt = f"  {f.label}{' *' if f.required else ''}" + (
            f" [{shown}]" if shown is not None else "") + ": "
        while True:
            line = self._line(prompt)
            if line is None:
                return None
            value = _by_number(f, line.strip()) if line.strip() else default
            try:
                return check_answer((f,), {f.name: value})
            except BadAnswer as exc:
                _say(click.style(f"  {exc}", fg="red"))

    def _choose(self, prompt: str, keys: str) -> str:
        while True:
            line = self._line(f"  {prompt}: ")
            if line is None:
                return "c"
            if (key := line.strip().lower()[:1]) and key in keys:
                return key

    def _line(self, prompt: str) -> str | None:
        """A line typed on the terminal; None when the turn is cancelled or input ends."""
        click.echo(prompt, nl=False, err=True)
        while not self.cancel.is_set():
            readable, _, _ = select.select([self._stdin], [], [], 0.1)
            if readable:
                line = self._stdin.readline()
                return line.rstrip("\n") if line else None
        _say("")
        return None


def _by_number(f: ElicitField, text: str) -> str | list[str]:
    """``2`` for the second choice (``1,3`` for several), else the text as typed."""
    def one(token: str) -> str:
        token = token.strip()
        if token.isdigit() and 1 <= int(token) <= len(f.options):
            return f.options[int(token) - 1][0]
        return token

    if f.kind == "multi":
        return [one(t) for t in text.split(",") if t.strip()]
    return one(text) if f.kind == "enum" else text


def _refusal(choice: str) -> ElicitAnswer:
    return ElicitAnswer("decline" if choice == "d" else "cancel")


def _say(text: str) -> None:
    click.echo(text, err=True)
