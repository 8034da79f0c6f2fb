"""The chat's side of compaction (``services.compaction``): ``/compact``, and by itself
after a turn whose last model call filled ``NEAR_FULL`` of the context window.

A mixin of ``ChatView``: while the model writes the summary the view is busy (what is
typed meanwhile is queued, as during a turn); a notice in the transcript says what was
summarised and where the full session stays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

if TYPE_CHECKING:
    from deskmate.app.services.compaction import Compaction
    from deskmate.app.services.conversation import Conversation
    from deskmate.app.ui.context_meter import ContextMeter
    from deskmate.app.ui.transcript import Transcript


class Compacting(Widget):
    """Needs of the view, besides a widget's: ``conversation``, ``transcript``,
    ``set_status``, ``send_queued``; ``busy`` is the view's (queues what is typed).
    It goes last among the view's bases: Textual takes a widget's CSS type names (and
    so its default CSS) along the first widget base of each class."""

    busy = reactive(False)
    conversation: Conversation
    transcript: Transcript

    if TYPE_CHECKING:  # the view's own, declared here for the type checker only
        def set_status(self, text: str) -> None: ...

        def send_queued(self) -> None: ...

    class Compacted(Message):
        def __init__(self, done: Compaction | None, error: str = "", auto: bool = False,
                     nothing: bool = False) -> None:
            self.done = done
            self.error = error
            self.auto = auto
            self.nothing = nothing  # too few turns to compact
            super().__init__()

    def start_compaction(self, auto: bool = False) -> None:
        """``/compact`` (or the automatic one): summarise all but the last turn."""
        if self.busy:
            self.notify("A turn is running: Esc cancels it, then /compact.",
                        severity="warning")
        elif self.conversation.runtime is None:
            self.notify("No model is ready yet (F4 opens the models).",
                        severity="warning")
        else:
            self.busy = True
            self.set_status("compacting: the model summarises the older turns …")
            self.compact_worker(self.conversation, auto)

    @work(thread=True, group="compact", exit_on_error=False)
    def compact_worker(self, conversation: Conversation, auto: bool) -> None:
        from deskmate.app.services.compaction import NothingToCompact, compact

        try:
            message = self.Compacted(compact(conversation), auto=auto)
        except NothingToCompact as exc:
            message = self.Compacted(None, str(exc), auto, nothing=True)
        except Exception as exc:  # the model's or the store's: the session stays as it was
            message = self.Compacted(None, f"{type(exc).__name__}: {exc}", auto)
        self.post_message(message)

    def on_compacting_compacted(self, message: Compacted) -> None:
        from deskmate.app.ui.blocks import Notice

        message.stop()
        self.busy = False
        done = message.done
        if done is None and message.auto and message.nothing:
            pass  # one long turn: nothing older to summarise, the meter says the rest
        elif done is None:
            self.notify(message.error, title="Not compacted",
                        severity="information" if message.auto else "warning")
        else:
            why = "The session neared the model's context window: " if message.auto else ""
            where = (f" The full transcript stays in session {done.kept_in}; this one goes "
                     f"on in {done.session} (\"compacted: …\" in Sessions)."
                     if done.session else "")
            self.transcript.add(Notice(
                f"**Compacted.** {why}the older turns are now one summary the model wrote "
                f"({done.messages_before} messages became {done.messages_after}).{where}"
                f"\n\n> {done.summary[:600]}", "info"))
            self.meter().reset()
            self.set_status("compacted · the next call reads the summary")
        self.send_queued()

    def meter(self) -> ContextMeter:
        from deskmate.app.ui.context_meter import ContextMeter

        return self.query_one(ContextMeter)
