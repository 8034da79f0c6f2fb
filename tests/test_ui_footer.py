"""The footer fits a 140-column terminal on every screen (issue 17, item 8), and the keys
kept off it (``show=False``) are still listed in F1 help and the command palette."""

from __future__ import annotations

from test_ui_support import make_app, ready, scripted, wait_for
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from deskmate.app.config import Config
from deskmate.app.ui.app import DeskmateApp, key_groups
from deskmate.app.ui.help import key_rows

WIDTH = 140
SCREENS = ["f6", "f2", "f3", "f4", "f5"]  # chat, sessions, servers, models, finetune


def _own_shown(screen) -> set[str]:
    """The descriptions of the screen's own bindings that the footer shows (those the
    focused table does not shadow: enter is the table's)."""
    return {b.description for b in screen.BINDINGS
            if isinstance(b, Binding) and b.show and b.key != "enter"}


async def test_every_screens_footer_fits_140_columns(home):
    app = make_app(scripted("hi"))
    async with app.run_test(size=(WIDTH, 40)) as pilot:
        await ready(app, pilot)
        for key in SCREENS:
            await pilot.press(key)
            await pilot.pause()
            screen = app.screen
            footer = screen.query_one(Footer)

            def drawn(screen=screen, footer=footer) -> bool:
                keys = list(footer.query(FooterKey))
                shown = {k.description for k in keys}
                return (app.screen is screen and "Help" in shown
                        and _own_shown(screen) <= shown
                        and all(k.region.width > 0 for k in keys))

            await wait_for(pilot, drawn, what=f"the footer of {type(screen).__name__}")
            keys = list(footer.query(FooterKey))
            palette = [k for k in keys if k.has_class("-command-palette")]
            assert len(palette) == 1
            left = palette[0].region.x  # the palette key is docked at the right end
            over = [f"{k.key_display} {k.description} (ends at {k.region.right})"
                    for k in keys if not k.has_class("-command-palette")
                    and k.region.right > left]
            used = sum(k.outer_size.width for k in keys)
            assert not over, (f"{type(screen).__name__}'s footer is cut at {WIDTH} columns: "
                              f"{used} wide, past column {left}: {over}")
            assert footer.max_scroll_x == 0


async def test_keys_off_the_footer_are_in_help_and_the_palette(home):
    groups = key_groups()
    rows = {(where, what) for where, _, what, _ in key_rows(groups, Config().keys)}
    group_of = {id(bindings): where for where, bindings in groups}
    hidden_app = [b for b in DeskmateApp.BINDINGS if isinstance(b, Binding) and not b.show]
    assert {"Quit", "Chat"} <= {b.description for b in hidden_app}
    for b in hidden_app:
        assert ("everywhere", b.description) in rows
    app = make_app(scripted("hi"))
    async with app.run_test(size=(WIDTH, 40)) as pilot:
        await ready(app, pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Quit", "Chat"} <= titles  # Textual's own Quit; our "Chat" command
        hidden_somewhere = 0
        for key in SCREENS[1:]:
            await pilot.press(key)
            await wait_for(pilot, lambda: app.current_mode != "chat", what="the screen")
            screen = app.screen
            where = (screen.title or type(screen).__name__.removesuffix("Screen")).lower()
            titles = {c.title for c in app.get_system_commands(screen)}
            for b in screen.BINDINGS:
                assert isinstance(b, Binding) and b.description
                if not b.show:
                    hidden_somewhere += 1
                    assert f"{where.capitalize()}: {b.description}" in titles
                    assert (group_of[id(type(screen).BINDINGS)], b.description) in rows
            await pilot.press("f6")
            await wait_for(pilot, lambda: app.current_mode == "chat", what="the chat")
        assert hidden_somewhere >= 6
