"""The status line's live tok/s: a reading at most a few times a second while a model
call streams, from the first delta of each call; in the real app with the real tiny
llama.cpp model, it shows while a plain answer is written, before the call ends."""

from __future__ import annotations

import pytest
from test_ui_support import ask, ready, record_notifications, turn_done, wait_for
from textual.widgets import Static

from deskmate.app.config import Config, ModelConfig
from deskmate.app.ui.app import DeskmateApp
from deskmate.app.ui.status_rate import LiveRate


def test_live_rate_is_throttled_and_restarts_with_each_call():
    rate = LiveRate(hz=4)
    # 10 tokens a second for a second: a reading only once 0.25 s passed since the last.
    readings = [(i / 10, rate.feed(1, i / 10)) for i in range(11)]
    shown = [(t, r) for t, r in readings if r is not None]
    assert [t for t, _ in shown] == [0.3, 0.6, 0.9]
    assert shown[-1][1] == "step 1 · writing · 10 generated · 10 tok/s"
    # The next call (step) counts from its own first delta, at its own speed.
    assert rate.feed(2, 5.0) is None
    assert rate.feed(2, 5.1) is None
    assert rate.feed(2, 5.3) == "step 2 · writing · 3 generated · 7 tok/s"


@pytest.mark.slow
async def test_tok_s_shows_while_a_plain_answer_streams(home, tiny_model_path):
    config = Config(model=ModelConfig(name=str(tiny_model_path), context=2048, threads=1,
                                      temperature=0, max_tokens=400, seed=0))
    app = record_notifications(DeskmateApp(config, mode="eager"))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        usage = app.chat.query_one("#usage", Static)
        await ask(app, pilot, "Write a long story about a cat and a dog, in many "
                  "chapters.")
        await wait_for(pilot, lambda: "tok/s" in str(usage.render()) or not app.chat.busy,
                       180, "tok/s on the status line")
        # Seen during the turn: the call's own message (which ends its stream) would
        # have replaced it, and no reading is posted after that message.
        live = str(usage.render())
        assert app.chat.busy and "writing" in live and "tok/s" in live, live
        await turn_done(app, pilot, 180)
        assert "writing" not in str(usage.render())
