"""The chat with a server's prompts and resources, under run_test(): ``/server:prompt``
(its missing arguments asked in a form), ``@server:uri`` attached, completion of both,
the prompts in F1 and the command palette. A real MCP server
(tests/servers/changing.py), a scripted model, the real app."""

from __future__ import annotations

import pytest
from conftest import toy_server
from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for
from textual.widgets import DataTable, Input

from deskmate.app.ui.blocks import UserBlock
from deskmate.app.ui.help import HelpScreen
from deskmate.app.ui.prompt import PromptArea
from deskmate.app.ui.prompt_args import PromptArgsScreen

pytestmark = pytest.mark.slow


def server():
    return toy_server("changing", "changing.py")


def last_user_message(model) -> str:
    return [m.content for m in model.calls[-1] if m.role == "user"][-1]


async def test_a_prompt_command_asks_for_its_missing_argument_then_sends_the_prompt(home):
    model = scripted("Looks fine.")
    app = make_app(model, servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/changing:review style=long")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptArgsScreen), what="form")
        form = app.screen
        assert form.query_one("#arg-1", Input).value == "long"  # what was typed is kept
        assert app.focused is form.query_one("#arg-0", Input)  # the missing one first
        await pilot.press("enter", "enter")  # a required one left empty is not sent
        assert isinstance(app.screen, PromptArgsScreen)
        assert any("path is required" in s for s in app.said)
        form.query_one("#arg-0", Input).value = "main.py"
        form.query_one("#arg-0", Input).focus()
        await pilot.press("enter", "enter")
        await wait_for(pilot, lambda: model.calls, what="the model to be asked")
        await turn_done(app, pilot)
        assert last_user_message(model) == "Review the file main.py. Keep the review long."
        shown = [str(b.render()) for b in app.chat.query(UserBlock)]
        assert shown == ["/changing:review path=main.py style=long"]  # declared order


async def test_escape_in_the_form_sends_nothing(home):
    model = scripted("unused")
    app = make_app(model, servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/changing:review")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptArgsScreen), what="form")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PromptArgsScreen)
        assert not model.calls and not app.chat.query(UserBlock)


async def test_a_wrong_prompt_name_is_said_and_kept_in_the_prompt(home):
    model = scripted("unused")
    app = make_app(model, servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/changing:reveiw path=a.py")
        await pilot.pause()
        assert any("did you mean 'review'" in s for s in app.said)
        assert app.chat.query_one(PromptArea).text == "/changing:reveiw path=a.py"
        assert not model.calls


async def test_a_mentioned_resource_is_attached_for_the_model(home):
    model = scripted("You have to buy milk.")
    app = make_app(model, servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is in @changing:notes://today ?")
        await wait_for(pilot, lambda: model.calls, what="the model to be asked")
        await turn_done(app, pilot)
        sent = last_user_message(model)
        assert sent.startswith("What is in @changing:notes://today ?\n\nResource @changing:")
        assert "Buy milk. Call Ada." in sent
        assert [str(b.render()) for b in app.chat.query(UserBlock)] == [
            "What is in @changing:notes://today ?"]


async def test_the_prompt_completes_resources_and_prompts(home):
    app = make_app(scripted("unused"), servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        area = app.chat.query_one(PromptArea)
        area.focus()
        await pilot.press(*"read @changing:notes://to")
        assert area.suggestion == "day"
        await pilot.press("right")
        assert area.text == "read @changing:notes://today"
        area.load_text("")
        await pilot.press(*"/changing:re")
        assert area.suggestion == "view"


async def test_prompts_are_in_f1_and_the_command_palette(home):
    app = make_app(scripted("unused"), servers=[server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        table = app.screen.query_one(DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert ["server prompt", "/changing:review path=… style=…", "Ask for a review of "
                "one file.", ""] in rows
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "/changing:review" in titles and "/changing:hello" in titles
