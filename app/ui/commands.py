"""The chat's slash commands: the list (the chat, F1 and the hint show it) and reading
one from what was typed.

A command is handled by the app and never reaches the model, an unknown one included
(a typo must not become a prompt). Text that only starts with a slash, such as a path
(``/etc/hosts: what is it?``), is a prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str  # as typed: "/model"
    usage: str  # with its arguments: "/model [NAME|PATH]"
    what: str  # one line for F1 and the hint


COMMANDS = (
    SlashCommand("/help", "/help", "Every key and command (F1)"),
    SlashCommand("/new", "/new", "Start a new session (Ctrl+N)"),
    # A known model not on this machine yet is downloaded first; the choice is saved in
    # the config, as F4's is.
    SlashCommand("/model", "/model [NAME|PATH]",
                 "Alone: the model and the choices; with NAME|PATH: use it (saved)"),
    SlashCommand("/sessions", "/sessions", "Recent sessions, to resume one (F2)"),
    SlashCommand("/export", "/export [PATH]",
                 "This session as Markdown (default ./deskmate-ID.md; never overwrites)"),
    SlashCommand("/clear", "/clear", "Clear the transcript and start a new session"),
    # The old answer stays recorded; the retry goes on in a branch of the session
    # (app.services.retry).
    SlashCommand("/retry", "/retry",
                 "Answer the last prompt again (the old answer stays in its session)"),
    SlashCommand("/edit", "/edit", "Put the last prompt back in the input, to edit and send"),
    # Also done by itself when a turn filled 80% of the context (app.ui.compacting).
    SlashCommand("/compact", "/compact",
                 "Summarise the older turns into one message (the full session is kept)"),
)

# A word after the slash, then a space or the end: "/etc/hosts" is no command.
_COMMAND = re.compile(r"(/[A-Za-z][\w-]*)(?:\s+(.*))?", re.S)


@dataclass(frozen=True)
class Typed:
    """A command as typed: its name and the rest of the line."""

    name: str
    argument: str

    @property
    def known(self) -> bool:
        return any(c.name == self.name for c in COMMANDS)


def read_command(text: str) -> Typed | None:
    """The command ``text`` is, or None when it is a prompt."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return Typed(match.group(1).lower(), (match.group(2) or "").strip())


def hint() -> str:
    """The commands in one line, for an unknown one."""
    return "Commands: " + ", ".join(c.usage for c in COMMANDS) + " (F1 lists every key)."
