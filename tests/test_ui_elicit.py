"""A server's question in the real app under run_test(): the modal built from the
schema, accept / decline / Esc, the turn's cancel, the timeout; progress in the block.

Scripted model, the real everything server (trusted, so no approval comes first)."""

from __future__ import annotations

import json

import pytest
from test_hub_callbacks import everything
from test_ui_support import ask, call, events, make_app, ready, scripted, turn_done, wait_for
from textual.widgets import Checkbox, Input, RadioButton, RadioSet, SelectionList

from deskmate.app.store import open_db
from deskmate.app.ui.asking import QuestionAsked
from deskmate.app.ui.blocks import ActionBlock
from deskmate.app.ui.elicit import ElicitScreen

pytestmark = pytest.mark.slow

FORM = "everything__trigger-elicitation-request"


def server(mcp_bin):
    return everything(mcp_bin, trust=True, call_timeout=3)


async def asked(app, pilot, what: str) -> ElicitScreen:
    await ready(app, pilot)
    await ask(app, pilot, what)
    await wait_for(pilot, lambda: isinstance(app.screen, ElicitScreen), what="the question")
    assert app.chat.query_one(ActionBlock).status == "waiting"
    return app.screen  # type: ignore[return-value]


def result_of(posted) -> dict:
    [finished] = events(posted, "ToolCallFinished")
    return json.loads(finished.result.split("Raw result:", 1)[1])


def recorded(session_id: str) -> list[tuple]:
    with open_db() as db:
        return [tuple(r) for r in db.execute(
            "SELECT mode, action, content, decided_by, reason FROM elicitations "
            "WHERE session_id = ?", [session_id])]


async def test_a_form_from_the_schema_accepted(home, mcp_bin):
    app = make_app(scripted(call(FORM), "Thanks, Ada."), servers=[server(mcp_bin)])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        screen = await asked(app, pilot, "fill the form")
        # One widget per property, with the schema's defaults in place.
        fields = {f.name: screen.query_one(f"#field-{i}") for i, f in enumerate(
            screen.request.fields)}
        assert isinstance(fields["check"], Checkbox)
        assert isinstance(fields["integer"], Input) and fields["integer"].value == "42"
        assert isinstance(fields["untitledSingleSelectEnum"], RadioSet)
        assert fields["untitledSingleSelectEnum"].pressed_index == 0  # Monica
        assert isinstance(fields["titledMultipleSelectEnum"], SelectionList)
        assert fields["titledMultipleSelectEnum"].selected == ["fish-1"]
        # Required and checked: nothing is sent until the name is given.
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, ElicitScreen)
        assert "required" in str(screen.query_one("#elicit-error").render())
        fields["integer"].value = "500"
        fields["name"].value = "Ada"
        await pilot.press("ctrl+s")
        assert "at most 100" in str(screen.query_one("#elicit-error").render())
        fields["integer"].value = "7"
        fields["untitledSingleSelectEnum"].query(RadioButton)[2].value = True  # Joey
        await pilot.press("ctrl+s")
        await turn_done(app, pilot)
        sent = result_of(posted)
        assert sent["action"] == "accept"
        assert sent["content"]["name"] == "Ada" and sent["content"]["integer"] == 7
        assert sent["content"]["titledSingleSelectEnum"] == "hero-1"
        assert sent["content"]["untitledSingleSelectEnum"] == "Joey"
        assert app.chat.query_one(ActionBlock).status == "ok"
        session_id = app.conversation.session_id
    [(mode, action, content, by, _)] = recorded(session_id)
    assert (mode, action, by) == ("form", "accept", "user")
    assert json.loads(content)["name"] == "Ada"


@pytest.mark.parametrize("key,action", [("ctrl+d", "decline"), ("escape", "cancel")])
async def test_decline_and_escape(home, mcp_bin, key, action):
    app = make_app(scripted(call(FORM), "ok"), servers=[server(mcp_bin)])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await asked(app, pilot, "fill the form")
        await pilot.press(key)
        await turn_done(app, pilot)
        assert result_of(posted) == {"action": action}
        # Esc answered the question; it did not cancel the turn.
        assert events(posted, "TurnFinished")[0].status == "answered"
        session_id = app.conversation.session_id
    assert [(r[1], r[3]) for r in recorded(session_id)] == [(action, "user")]


async def test_cancelling_the_turn_cancels_the_question(home, mcp_bin):
    app = make_app(scripted(call(FORM), "unused"), servers=[server(mcp_bin)])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await asked(app, pilot, "fill the form")
        app.action_cancel()
        await turn_done(app, pilot)
        # The dialog is dismissed by a message of its own, which may land just after
        # the turn's end (it did in CI): wait for it rather than race it.
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitScreen), 10,
                       "the dialog closed")
        assert events(posted, "TurnFinished")[0].status == "cancelled"
        [answered] = events(posted, "ElicitationAnswered")
        assert (answered.action, answered.reason) == ("cancel", "the turn was cancelled")


async def test_an_unanswered_question_times_out(home, mcp_bin):
    app = make_app(scripted(call(FORM), "ok"), servers=[server(mcp_bin)])
    app.asker.timeout = 2
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "fill the form")
        await turn_done(app, pilot)
        # It was shown (a loaded machine may show it for less than the 2 s), then closed.
        assert any(isinstance(m, QuestionAsked) for m in posted)
        # (the dialog's close is a message of its own: the turn may end first)
        await wait_for(pilot, lambda: not isinstance(app.screen, ElicitScreen), 10,
                       "the question closed")
        assert result_of(posted) == {"action": "cancel"}
        [answered] = events(posted, "ElicitationAnswered")
        assert answered.decided_by == "policy" and "no answer within 2 s" in answered.reason


async def test_url_mode_shows_the_host_and_opens_only_on_accept(home, mcp_bin):
    url = "https://login.example.com/authorize?client=deskmate"
    app = make_app(scripted(call("everything__trigger-url-elicitation", url=url), "ok"),
                   servers=[server(mcp_bin)])
    opened: list[str] = []
    app.open_url = lambda url, **kwargs: opened.append(url)  # type: ignore[method-assign]
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        screen = await asked(app, pilot, "sign in")
        assert "login.example.com" in str(screen.query_one("#elicit-host").render())
        assert url in str(screen.query_one("#elicit-url").render())
        assert opened == []
        await pilot.click("#accept")
        await turn_done(app, pilot)
        assert opened == [url] and result_of(posted)["action"] == "accept"


async def test_progress_shows_in_the_running_block(home, mcp_bin):
    app = make_app(scripted(call("everything__trigger-long-running-operation", duration=4,
                                 steps=4), "done"), servers=[server(mcp_bin)])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "wait")
        await wait_for(pilot, lambda: "▰" in app.chat.query_one(ActionBlock).news, 20,
                       "progress in the block")
        assert "/4" in app.chat.query_one(ActionBlock).news
        await turn_done(app, pilot)
        block = app.chat.query_one(ActionBlock)
        # 4 s with a 3 s call timeout: the progress kept it alive.
        assert block.status == "ok" and block.news == ""
        assert len(events(posted, "ToolProgress")) == 4
