"""The chat's context meter: how much of the model's context window the session fills.

After each model call the status line shows ``ctx 3.1k/8k`` (the call's prompt and its
reply, against the loaded context size), in the warning colour from ``NEAR_FULL`` on:
past the window the model can no longer read the whole session.
"""

from __future__ import annotations

from textual.widgets import Static

# The meter warns from NEAR_FULL on, then the chat compacts; the reading is shared with
# the terminal chat's (app.cli.repl).
from deskmate.app.services.compaction import reading


class ContextMeter(Static):
    """``show`` after each model call; ``reset`` for a new session."""

    near_full = False  # the last reading reached NEAR_FULL of the window

    def show(self, used: int, window: int) -> None:
        text, near_full = reading(used, window)
        self.near_full = near_full
        self.update(text)
        self.display = True
        self.set_class(near_full, "-near-full")
        share = f" ({used / window:.0%})" if window > 0 else ""
        self.tooltip = (f"The last model call read and wrote {used:,} tokens of the "
                        f"{window:,}-token context window{share}." if window > 0 else
                        f"The last model call read and wrote {used:,} tokens.")
        if near_full:
            self.tooltip += (" After this turn the older turns are summarised (/compact), "
                             "or start a new session (ctrl+n).")

    def reset(self) -> None:
        self.update("")
        self.display = False
        self.near_full = False
        self.remove_class("-near-full")
