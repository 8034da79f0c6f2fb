"""The chat's context meter: ``ctx used/window`` after each model call, in the warning
colour past 80% of the window, gone for a new session. The real app under run_test()
with a scripted model (its usage: a token per 4 characters)."""

from __future__ import annotations

import dataclasses

import pytest
from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for

from deskmate.app.services.compaction import reading, tokens
from deskmate.app.ui.context_meter import ContextMeter


def test_reading():
    assert [tokens(n) for n in (950, 1000, 3100, 8000, 8192, 32768, 131072)] == [
        "950", "1k", "3.1k", "8k", "8.2k", "33k", "131k"]
    assert reading(3100, 8192) == ("ctx 3.1k/8.2k", False)
    assert reading(6600, 8192) == ("ctx 6.6k/8.2k", True)  # 81%
    assert reading(500, 0) == ("ctx 500", False)  # the backend does not say its window


@pytest.mark.slow
async def test_meter_follows_each_call_and_warns_near_the_window(home):
    model = scripted("first answer", "second answer")
    app = make_app(model)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        meter = app.chat.query_one("#context", ContextMeter)
        assert not meter.display  # nothing read yet
        await ask(app, pilot, "hello")
        await turn_done(app, pilot)
        first = sum(len(m.content) for m in model.calls[0]) // 4 + len("first answer") // 4 + 1
        assert str(meter.render()) == f"ctx {tokens(first)}/33k"
        assert meter.display and not meter.has_class("-near-full")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: not meter.display, 30, "the meter reset")
        # A window the first call nearly fills: the meter warns (one turn: nothing older
        # to compact, and nothing said about it).
        model.info = dataclasses.replace(model.info, context_size=first + 5)
        await ready(app, pilot)
        await ask(app, pilot, "hello")
        await turn_done(app, pilot)
        assert meter.has_class("-near-full"), str(meter.render())
        assert str(meter.render()).endswith(f"/{first + 5}")
        assert "/compact" in str(meter.tooltip)
        await pilot.pause(0.5)
        assert not app.chat.busy and not any("compact" in s for s in app.said)
