"""``AppHost``: what the screens may read from, and ask of, the app that hosts them.

Screens are opened by ``DeskmateApp`` (app/ui/app.py), which imports them, so they cannot
import it back to type ``self.app``. They see the app through this protocol instead;
app.py checks under ``TYPE_CHECKING`` that ``DeskmateApp`` satisfies it, so a renamed or
retyped member fails the type check rather than a screen at run time. Attributes are
read-only here: screens read the app's state and change it by posting messages (or by
the few workers below, which post their own results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from pathlib import Path

    from textual.dom import DOMNode
    from textual.worker import Worker

    from deskmate.app.config import Config
    from deskmate.app.llm.base import ChatModel
    from deskmate.app.services.conversation import Conversation
    from deskmate.app.ui.chat import ChatView
    from deskmate.app.ui.messages import DownloadProgress
    from deskmate.tools.hub import Hub


class AppHost(Protocol):
    """The app as its screens use it (``DeskmateApp`` and its ``ModelWorkers`` mixin)."""

    @property
    def config(self) -> Config: ...

    @property
    def config_path(self) -> Path | None:
        """The config file that edits from the screens rewrite (None: the default one)."""
        ...

    @property
    def model(self) -> ChatModel | None:
        """The loaded model; None until it is loaded, or when it failed to."""
        ...

    @property
    def hub(self) -> Hub | None:
        """The running MCP hub; None while it (re)starts."""
        ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def chat(self) -> ChatView: ...

    @property
    def download_state(self) -> DownloadProgress | None:
        """The running download's latest progress, for a screen opened during it."""
        ...

    def use_model(self, spec: str) -> Worker[None]:
        """Make ``spec`` the configured model and load it (a worker; errors are shown)."""
        ...

    def download_model(self, spec: str, use_after: bool = False) -> None: ...

    def cancel_download(self) -> bool:
        """Cancel the running download; False when there is none."""
        ...


def host(node: DOMNode) -> AppHost:
    """``node.app`` as the deskmate app. A cast, not a check: every screen and widget runs
    inside ``DeskmateApp`` (tests included), and importing it here to check would make an
    import cycle with app.py, which imports the screens."""
    return cast("AppHost", node.app)
