"""A server's request to use the model (MCP sampling) in the real app under run_test():
the dialog shows who asks and what; allowed, the app's model answers the tool; declined,
the tool reads the refusal. Scripted model, the real samples.py server (trusted)."""

from __future__ import annotations

import pytest
from conftest import toy_server
from test_ui_support import ask, call, events, make_app, ready, scripted, turn_done, wait_for
from textual.widgets import Static

from deskmate.app.ui.sampling import SampleScreen

pytestmark = pytest.mark.slow

HAIKU = "samples__haiku"


def server(call_timeout: float = 30):
    return toy_server("samples", "samples.py", trust=True, call_timeout=call_timeout)


def poem(messages) -> str:
    """The scripted model's answer to the sampling request (and only to it)."""
    assert messages[0].role == "system" and messages[0].content == "You are a poet."
    return "Waves fold into foam"


async def dialog(app, pilot) -> SampleScreen:
    await ready(app, pilot)
    await ask(app, pilot, "write a haiku")
    await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the dialog")
    return app.screen  # type: ignore[return-value]


def tool_result(posted) -> str:
    [finished] = events(posted, "ToolCallFinished")
    return finished.result


async def test_allowed_the_apps_model_answers_the_tool(home):
    # A 2 s call timeout, and 3 s spent deciding: the call's clock stood still.
    model = scripted(call(HAIKU, topic="waves", max_tokens=64), poem, "Here it is.")
    app = make_app(model, servers=[server(call_timeout=2)])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        screen = await dialog(app, pilot)
        shown = [str(s.render()) for s in screen.query(Static)]
        assert any("samples asks during haiku to use the local model (up to 64 "
                   "tokens)" in s for s in shown), shown
        assert any("system: You are a poet." in s for s in shown)
        assert any("user: A haiku about waves." in s for s in shown)
        await pilot.pause(3.0)
        await pilot.press("ctrl+s")
        await turn_done(app, pilot)
        assert tool_result(posted) == "model=scripted|stop=endTurn|text=Waves fold into foam"
        assert model.params[1].max_tokens == 64 and model.params[1].temperature == 0.0
        assert events(posted, "TurnFinished")[0].status == "answered"
        assert app.sampler.allowed == set()  # once only


@pytest.mark.parametrize("key", ["ctrl+d", "escape"])
async def test_declined_the_tool_reads_the_refusal(home, key):
    model = scripted(call(HAIKU), "It was declined.")
    app = make_app(model, servers=[server()])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await dialog(app, pilot)
        await pilot.press(key)
        await turn_done(app, pilot)
        assert tool_result(posted).startswith("error: declined: the user declined")
        assert len(model.calls) == 2  # the turn's two steps; the model never sampled


async def test_allowed_for_the_server_asks_once_per_session(home):
    model = scripted(call(HAIKU), poem, call(HAIKU), poem, "Two poems.")
    app = make_app(model, servers=[server()])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await dialog(app, pilot)
        await pilot.press("ctrl+a")
        await turn_done(app, pilot)
        results = [e.result for e in events(posted, "ToolCallFinished")]
        assert results == ["model=scripted|stop=endTurn|text=Waves fold into foam"] * 2
        assert app.sampler.allowed == {"samples"}


async def test_cancelling_the_turn_declines(home):
    app = make_app(scripted(call(HAIKU), "unused"), servers=[server()])
    posted: list = []
    async with app.run_test(size=(120, 50), message_hook=posted.append) as pilot:
        await dialog(app, pilot)
        app.action_cancel()
        await turn_done(app, pilot)
        await wait_for(pilot, lambda: not isinstance(app.screen, SampleScreen), 10,
                       "the dialog closed")
        assert events(posted, "TurnFinished")[0].status == "cancelled"
