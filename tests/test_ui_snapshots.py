"""Snapshot tests of every screen (pytest-textual-snapshot; `--snapshot-update` redraws).

Content is made deterministic: an isolated home, a scripted model, sessions recorded
with fixed timestamps, and agent events whose durations are fixed before they reach
the screen (the only clock-dependent numbers it draws).
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from conftest import ROOT, toy_server
from test_ui_support import (
    ask,
    call,
    lay_out_below,
    make_app,
    ready,
    scripted,
    turn_done,
    wait_for,
)

from deskmate.app.agent import events as ev
from deskmate.app.config import Config
from deskmate.app.llm import Usage
from deskmate.app.store import Recorder, open_db, transaction
from deskmate.app.ui.app import DeskmateApp
from deskmate.app.ui.approval import ApprovalScreen
from deskmate.app.ui.blocks import ActionBlock, ReplyBlock
from deskmate.tools.hub import ServerConfig

SIZE = (110, 34)
AT = 1767225600.0  # 2026-01-01 00:00 UTC


@pytest.fixture(autouse=True)
def fixed_place(home, tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)  # the models screen lists .gguf files of the cwd
    yield
    time.tzset()


def fixed_durations(app) -> None:
    """Wrap the conversation so events carry fixed durations; stop the cursor blinking."""
    app.chat.query_one("#prompt").cursor_blink = False
    run = app.conversation.run

    def steady(text, cancel, **options):
        for event in run(text, cancel, **options):
            if hasattr(event, "duration_s"):
                event = dataclasses.replace(event, duration_s=0.25)
            if hasattr(event, "wall_s"):
                event = dataclasses.replace(event, wall_s=1.5)
            yield event

    app.conversation.run = steady


def record_sessions() -> None:
    db = open_db()
    for n, (sid, question, answer) in enumerate([
            ("aaaa00000001", "What is the capital of France?", "**Paris.**"),
            ("bbbb00000002", "List three prime numbers", "2, 3 and 5.")]):
        at = AT + n * 3600
        recorder = Recorder.new(db, model="scripted", mode="eager", session_id=sid)
        for event in [
                ev.TurnStarted(turn=1, user_message=question, at=at),
                ev.MessageAppended(position=0, role="system", content="You help.", at=at),
                ev.MessageAppended(position=1, role="user", content=question, at=at),
                ev.ModelMessage(step=1, text=answer, finish_reason="stop",
                                usage=Usage(prompt_tokens=20, completion_tokens=4), at=at),
                ev.MessageAppended(position=2, role="assistant", content=answer, at=at),
                ev.FinalAnswer(step=1, text=answer, at=at),
                ev.TurnFinished(turn=1, status="answered", steps=1, model_calls=1,
                                tool_calls=0, prompt_tokens=20, completion_tokens=4,
                                wall_s=0.5, at=at)]:
            recorder.record(event)
        with transaction(db) as conn:
            conn.execute("UPDATE sessions SET created_at = ? WHERE id = ?", (at, sid))


def test_chat_with_a_tool_call(snap_compare):
    model = scripted(call("toy__add", a=20, b=22),
                     "The sum is **42**.\n\n| a | b | sum |\n|---|---|---|\n| 20 | 22 | 42 |")
    app = make_app(model, servers=[toy_server(trust=True)])

    async def run_before(pilot):
        await ready(app, pilot)
        fixed_durations(app)
        await ask(app, pilot, "What is 20 + 22?")
        await turn_done(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_approval_dialog(snap_compare):
    model = scripted(call("toy__echo", text="rm -rf /\u200b please"), "done")
    app = make_app(model, servers=[toy_server()])

    async def run_before(pilot):
        await ready(app, pilot)
        await ask(app, pilot, "echo something")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="approval")
        # The chat under the dialog has caught up: tool call waiting, raw reply removed.
        await wait_for(pilot, lambda: [b.status for b in app.chat.query(ActionBlock)] == [
            "waiting"] and not app.chat.query(ReplyBlock), what="the chat")
        app.chat.query_one("#prompt").cursor_blink = False
        await pilot.pause(0.3)
        app.chat.query_one("#transcript").scroll_end(animate=False, immediate=True)
        await pilot.pause(0.3)
        await lay_out_below(pilot, app.chat.screen)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sessions_screen(snap_compare):
    record_sessions()
    app = make_app(scripted())

    async def run_before(pilot):
        await ready(app, pilot)
        await pilot.press("f2")
        table = app.screen.query_one("#sessions-table")
        await wait_for(pilot, lambda: table.row_count == 2, what="sessions")
        await wait_for(pilot, lambda: app.screen.query_one("#session-preview").source,
                       what="the preview")
        await app.workers.wait_for_complete()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_servers_screen(snap_compare):
    # Relative to the checkout, so the picture does not depend on where it lives.
    toy = ServerConfig(name="toy", command=".venv/bin/python",
                       args=("tests/servers/toy.py",), cwd=str(ROOT))
    app = make_app(scripted(), servers=[toy])

    async def run_before(pilot):
        await ready(app, pilot)
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.screen.query_one("#server-tools").source,
                       what="the tools")
        await app.workers.wait_for_complete()
        # The toy server's stderr log carries its own timestamps: not part of the picture.
        app.screen.query_one("#server-stderr").display = False

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_models_screen(snap_compare):
    app = make_app(scripted())

    async def run_before(pilot):
        await ready(app, pilot)
        await pilot.press("f4")
        await wait_for(pilot, lambda: app.screen.query_one("#models-table").row_count >= 3,
                       what="the models")

    assert snap_compare(app, terminal_size=(130, 30), run_before=run_before)


def test_first_run_dialog(snap_compare):
    app = DeskmateApp(Config())

    async def run_before(pilot):
        from deskmate.app.ui.first_run import FirstRunScreen

        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="first run")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_finetune_screen(snap_compare, tiny_model_path, monkeypatch):
    """As on a machine with a 24 GB card (nvidia-smi's answer stood in for)."""
    from deskmate.app.config import ModelConfig
    from deskmate.finetune import hardware

    monkeypatch.setattr(hardware, "detect_gpus",
                        lambda: [hardware.Gpu("NVIDIA GeForce RTX 4090", 24.0, 22.5)])
    model = scripted()
    app = DeskmateApp(Config(model=ModelConfig(name=str(tiny_model_path))),
                      model_factory=lambda c, s: model, mode="eager")

    async def run_before(pilot):
        await ready(app, pilot)
        await pilot.press("f5")
        await wait_for(pilot, lambda: bool(app.screen.survey), what="the survey")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_question_dialog(snap_compare, mcp_bin):
    """A server's form (the everything server's, defaults filled in) over the chat."""
    from test_hub_callbacks import everything

    from deskmate.app.ui.elicit import ElicitScreen

    model = scripted(call("everything__trigger-elicitation-request"), "done")
    app = make_app(model, servers=[everything(mcp_bin, trust=True)])

    async def run_before(pilot):
        await ready(app, pilot)
        # Before the dialog covers the chat: the chat is not redrawn under it.
        app.chat.query_one("#prompt").cursor_blink = False
        await ask(app, pilot, "fill in the form")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitScreen), what="question")
        await wait_for(pilot, lambda: [b.status for b in app.chat.query(ActionBlock)] == [
            "waiting"] and not app.chat.query(ReplyBlock), what="the chat")
        field = app.screen.query_one("#field-0")
        await wait_for(pilot, lambda: app.focused is field, what="the first field's focus")
        field.cursor_blink = False
        await pilot.pause(0.3)
        await lay_out_below(pilot, app.chat.screen)

    assert snap_compare(app, terminal_size=(110, 40), run_before=run_before)


def test_help_screen(snap_compare):
    app = make_app(scripted())

    async def run_before(pilot):
        await ready(app, pilot)
        await pilot.press("f1")

    assert snap_compare(app, terminal_size=(110, 60), run_before=run_before)


def test_light_theme(snap_compare):
    app = make_app(scripted("A short answer."))

    async def run_before(pilot):
        await ready(app, pilot)
        fixed_durations(app)
        await pilot.press("ctrl+t")
        await ask(app, pilot, "hello")
        await turn_done(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
