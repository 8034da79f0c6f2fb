"""Copying a message or its code to the clipboard.

A transcript block that is ``Copyable`` takes the focus (a click, or Shift+Tab from the
prompt); ``c`` copies its text and ``k`` only its code (the fenced blocks of a reply,
the code or arguments of an action). The copy goes through Textual's
``App.copy_to_clipboard``: the OSC 52 sequence, which most terminals (and tmux with
``set-clipboard on``) pass to the system clipboard.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast

from textual.binding import Binding, BindingType

if TYPE_CHECKING:
    from textual.widget import Widget

# A fenced code block: its opening fence (``` or ~~~, three or more), an info string,
# the code, and the same fence closing it.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


def code_of(text: str) -> str:
    """The code of the fenced blocks in ``text``, one after the other ("" when none)."""
    return "\n".join(match.group(2).rstrip("\n") for match in _FENCE.finditer(text))


_COPY = (Binding("c", "copy_block", "Copy"), Binding("k", "copy_code", "Copy code"))
COPY_BINDINGS: list[BindingType] = list(_COPY)
COPY_KEYS = frozenset(b.key for b in _COPY)


class Copyable:
    """A block with text to copy: ``c`` copies it, ``k`` its code only.

    Mixed in after the widget class, which also says ``BINDINGS = COPY_BINDINGS`` and
    ``can_focus=True`` (``class UserBlock(Static, Copyable, can_focus=True)``): Textual
    takes a widget's default CSS along its first bases only (a widget mixin first would
    lose ``Static``'s ``height: auto``), and bindings from widget classes only."""

    def copy_text(self) -> str:
        """The block's whole text, as it would be pasted."""
        raise NotImplementedError

    def copy_code(self) -> str:
        """The block's code; by default the fenced blocks of its text."""
        return code_of(self.copy_text())

    def action_copy_block(self) -> None:
        _copy(cast("Widget", self), self.copy_text(), "Copied")

    def action_copy_code(self) -> None:
        _copy(cast("Widget", self), self.copy_code(), "Copied the code")


def _copy(widget: Widget, text: str, title: str) -> None:
    if not text.strip():
        widget.notify("Nothing to copy here: k copies fenced code, c the whole block.",
                      severity="warning")
        return
    widget.app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    widget.notify(f"{len(text):,} characters, {lines:,} line{'s' if lines != 1 else ''}, "
                  "to the clipboard (the terminal must allow OSC 52).", title=title)
