"""The other screens under run_test(): sessions, MCP servers, models, first run,
help and remapped keys. Real store, real config file writes, real MCP servers."""

from __future__ import annotations

import dataclasses
import json
import sys
import tomllib

import pytest
from conftest import TEST_SERVERS, toy_server
from test_ui_support import (
    ask,
    make_app,
    ready,
    record_notifications,
    scripted,
    turn_done,
    wait_for,
)
from textual.widgets import DataTable

from deskmate.app import paths
from deskmate.app.config import Config, KeysConfig, load_config
from deskmate.app.store import get_session, list_sessions, open_db
from deskmate.app.ui.app import DeskmateApp
from deskmate.app.ui.blocks import ReplyBlock, UserBlock
from deskmate.app.ui.dialogs import AskScreen, ConfirmScreen
from deskmate.app.ui.first_run import FirstRunScreen
from deskmate.app.ui.help import HelpScreen


async def type_answer(app, pilot, text: str) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="the question")
    app.screen.query_one("#answer").value = text
    await pilot.press("enter")


async def two_sessions(app, pilot) -> None:
    await ready(app, pilot)
    for text in ("What is the capital of France?", "And of Italy?"):
        await ask(app, pilot, text)
        await turn_done(app, pilot)
    await pilot.press("ctrl+n")
    await ready(app, pilot)
    await ask(app, pilot, "Say zebra")
    await turn_done(app, pilot)


async def first_run_dialog(app, pilot) -> None:
    """Wait until the first-run dialog is drawn (the model loads after the first frame)."""
    await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen)
                   and app.screen.query("#first-run-options"), what="the first-run dialog")


def rows(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_sessions_list_search_resume(home):
    model = scripted("Paris.", "Rome.", "zebra", "Still Paris.")
    app = make_app(model)
    async with app.run_test(size=(120, 40)) as pilot:
        await two_sessions(app, pilot)
        await pilot.press("f2")
        table = app.screen.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, what="two sessions")
        assert [r[1] for r in rows(table)] == ["Say zebra", "What is the capital of France?"]
        await pilot.press("slash")
        app.screen.query_one("#session-query").value = "Italy"
        await pilot.press("enter")
        await wait_for(pilot, lambda: table.row_count == 1, what="one hit")
        assert "Italy" in rows(table)[0][4]
        await pilot.press("enter")  # resume
        await wait_for(pilot, lambda: app.current_mode == "chat", what="the chat")
        await ready(app, pilot)
        assert [b.render().plain for b in app.chat.query(UserBlock)] == [
            "What is the capital of France?", "And of Italy?"]
        assert [b.source for b in app.chat.query(ReplyBlock)] == ["Paris.", "Rome."]
        await ask(app, pilot, "And of France again?")
        await turn_done(app, pilot)
        # The model saw the resumed transcript, and the turn was recorded in that session.
        assert [m.content for m in model.calls[-1] if m.role == "user"] == [
            "What is the capital of France?", "And of Italy?", "And of France again?"]
        session_id = app.conversation.session_id
    detail = get_session(open_db(), session_id)
    assert [t.turn for t in detail.turns] == [1, 2, 3]


async def test_a_session_resumes_in_its_mode_and_names_its_model(home):
    """A code-mode session made with another model resumes in code mode (the app was
    started in eager mode), and a notification says which model goes on with it."""
    from deskmate.app.agent import events as ev
    from deskmate.app.store import Recorder

    recorder = Recorder.new(open_db(), model="qwen-other", mode="code")
    for event in [ev.TurnStarted(turn=1, user_message="Hi"),
                  ev.MessageAppended(position=0, role="system", content="You help."),
                  ev.MessageAppended(position=1, role="user", content="Hi"),
                  ev.MessageAppended(position=2, role="assistant", content="Hello."),
                  ev.FinalAnswer(step=1, text="Hello."),
                  ev.TurnFinished(turn=1, status="answered", steps=1, model_calls=1,
                                  tool_calls=0, prompt_tokens=5, completion_tokens=2,
                                  wall_s=0.1)]:
        recorder.record(event)
    app = make_app(scripted(), mode="eager")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("f2")
        table = app.screen.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, what="the session")
        await pilot.press("enter")  # resume
        await wait_for(pilot, lambda: app.current_mode == "chat", what="the chat")
        await wait_for(pilot, lambda: app.conversation.active_mode == "code",
                       what="the agent in code mode")
        assert any("recorded with qwen-other" in said and "scripted" in said
                   for said in app.said)
        await pilot.press("ctrl+n")  # a new session: the app's own mode again
        await wait_for(pilot, lambda: app.conversation.active_mode == "eager",
                       what="the agent in eager mode")


async def test_sessions_rename_delete_export(home, tmp_path):
    app = make_app(scripted("Paris.", "Rome.", "zebra"))
    async with app.run_test(size=(120, 40)) as pilot:
        await two_sessions(app, pilot)
        await pilot.press("f2")
        table = app.screen.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, what="two sessions")
        await pilot.press("r")
        await type_answer(app, pilot, "Animals")
        await wait_for(pilot, lambda: rows(table)[0][1] == "Animals", what="the new title")
        blocker = tmp_path / "a-file"
        blocker.write_text("")
        await pilot.press("e")  # a worker's error on a screen reaches the user
        await type_answer(app, pilot, str(blocker / "out.jsonl"))
        await wait_for(pilot, lambda: any(f"cannot write {blocker}" in n.message
                                          for n in app._notifications), what="the error")
        out = tmp_path / "out.jsonl"
        await pilot.press("e")
        await type_answer(app, pilot, str(out))
        await wait_for(pilot, out.exists, what="the export")
        exported = out.read_text()
        out.write_text("the user's own file")
        for answer in ("n", "y"):  # an existing file is replaced only on a yes
            await pilot.press("e")
            await type_answer(app, pilot, str(out))
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="replace?")
            await pilot.press(answer)
            await pilot.pause(0.3)
            if answer == "n":
                assert out.read_text() == "the user's own file"
        await wait_for(pilot, lambda: out.read_text() == exported, what="the export again")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.press("n")  # no: nothing is deleted
        await pilot.pause(0.3)
        assert table.row_count == 2
        current = app.conversation.session_id  # the top row: the session in the chat
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.press("y")
        await wait_for(pilot, lambda: table.row_count == 1, what="the deletion")
        # The screen asks the app (a message up) for a new session in place of the gone one.
        await wait_for(pilot, lambda: app.conversation.session_id != current,
                       what="a new session")
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant"]
    assert record["messages"][2]["content"] == "zebra"
    assert [s.title for s in list_sessions(open_db())] == ["What is the capital of France?"]


@pytest.mark.slow
async def test_servers_add_import_toggle_and_browse(home, tmp_path):
    app = make_app(scripted())
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("escape")  # nothing running: stays usable
        await pilot.press("f3")
        table = app.screen.query_one("#servers-table", DataTable)
        assert table.row_count == 0
        await pilot.press("a")
        await type_answer(app, pilot, "toy")
        await type_answer(app, pilot, f"{sys.executable} {TEST_SERVERS / 'toy.py'}")
        await wait_for(pilot, lambda: table.row_count == 1 and rows(table)[0][1] == "ready",
                       60, "toy to be ready")
        assert rows(table)[0][2] == "5"
        saved = tomllib.loads(paths.config_file().read_text())["mcp"]["servers"]["toy"]
        assert saved["command"] == sys.executable
        tools = app.screen.query_one("#server-tools").source
        assert "def add(a: int, b: int)" in tools and "5 tools" in tools
        # A restart goes up to the app as a message, and the app rebuilds the agent.
        await wait_for(pilot, lambda: app.conversation.runtime is not None, 60, "the agent")
        agent_before = app.conversation.runtime
        await pilot.press("r")
        await wait_for(pilot, lambda: app.conversation.runtime not in (None, agent_before),
                       60, "the agent rebuilt after the restart")
        await wait_for(pilot, lambda: rows(table)[0][1] == "ready", 60, "toy ready again")
        # Import a Claude Code .mcp.json with a second server and a clash.
        mcp_json = tmp_path / ".mcp.json"
        mcp_json.write_text(json.dumps({"mcpServers": {
            "toy": {"command": "other"},
            "toy2": {"command": sys.executable, "args": [str(TEST_SERVERS / "toy.py")]}}}))
        await pilot.press("i")
        await type_answer(app, pilot, str(mcp_json))
        await wait_for(pilot, lambda: table.row_count == 2 and
                       [r[1] for r in rows(table)] == ["ready", "ready"], 60, "both ready")
        config = load_config()
        assert config.mcp.servers["toy"].command == sys.executable  # kept, not replaced
        # Disable the second one.
        table.move_cursor(row=1)
        await pilot.press("space")
        await wait_for(pilot, lambda: rows(table)[1][1] == "disabled", 60, "disabled")
        assert load_config().mcp.servers["toy2"].enabled is False
        # The agent is rebuilt over the servers that are still enabled.
        await wait_for(pilot, lambda: app.conversation.runtime is not None and {
            t.server for t in app.conversation.runtime.catalog} == {"toy"}, 60, "the agent")


@pytest.mark.slow
async def test_a_broken_server_shows_its_error_and_stderr(home):
    broken = toy_server("broken", "exits_at_start.py", startup_timeout=10)
    app = make_app(scripted(), servers=[broken])
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: app._hub_ready, 60, "the hub")
        await pilot.press("f3")
        status = app.screen.query_one("#server-status")
        await wait_for(pilot, lambda: "failed" in str(status.render()), 30, "the failure")
        stderr = app.screen.query_one("#server-stderr")
        await wait_for(pilot, lambda: "stderr" in str(stderr.render()), 30, "stderr")


async def test_first_run_offers_the_tiny_model_and_writes_the_config(home):
    seen = []
    model = scripted("hello")

    def factory(config, spec):
        from deskmate.app.llm import NoModelConfigured

        seen.append(config.model.name)
        if not config.model.name:
            raise NoModelConfigured()
        return model

    app = DeskmateApp(Config(), model_factory=factory, mode="eager")
    async with app.run_test(size=(120, 40)) as pilot:
        await first_run_dialog(app, pilot)
        assert "Welcome to deskmate" in app.chat.query_one(".notice").source
        options = app.screen.query_one("#first-run-options")
        assert [o.id for o in options.options] == ["download", "local", "tiny"]
        options.highlighted = 2
        await pilot.press("enter")
        await ready(app, pilot)
        assert seen == ["", "tiny"] and app.model is model
    assert load_config().model.name == "tiny"


async def test_first_run_with_a_local_file(home, tiny_model_path):
    seen = []

    def factory(config, spec):
        from deskmate.app.llm import NoModelConfigured

        seen.append(config.model.name)
        if not config.model.name:
            raise NoModelConfigured()
        return scripted("hi")

    app = DeskmateApp(Config(), model_factory=factory, mode="eager")
    async with app.run_test(size=(120, 40)) as pilot:
        await first_run_dialog(app, pilot)
        app.screen.query_one("#first-run-options").highlighted = 1
        await pilot.press("enter")
        await type_answer(app, pilot, str(tiny_model_path))
        await ready(app, pilot)
    assert seen == ["", str(tiny_model_path.resolve())]


async def test_models_screen_sets_the_context(home):
    app = make_app(scripted())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("f4")
        table = app.screen.query_one("#models-table", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 3, what="the registry")
        assert "qwen3-4b" in [str(r[0]) for r in rows(table)]
        await pilot.press("x")
        await type_answer(app, pilot, "4096")
        await wait_for(pilot, lambda: app.config.model.context == 4096, what="the context")
        assert "context 4,096" in str(app.screen.query_one("#model-active").render())
        await pilot.press("x")
        await type_answer(app, pilot, "12")  # below the minimum: refused, file unchanged
        await pilot.pause(0.5)
        assert load_config().model.context == 4096


async def test_the_adapter_is_checked_before_it_is_saved_and_the_model_reloads(
        home, tiny_model_path, tmp_path):
    """F4's `o`: a path that is no LoRA adapter (missing, a model, another family's) is
    refused with the reason, and nothing is written or reloaded; a good one is saved and
    the model reloads with it, the header saying so throughout."""
    import threading

    from lora import write_random_lora

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.app.llm.gguf_file import inspect_gguf

    base = inspect_gguf(tiny_model_path)
    good = write_random_lora(tmp_path / "good.gguf", base)
    other = write_random_lora(tmp_path / "other.gguf", base, arch="qwen3")
    loads, gate = [], threading.Event()
    gate.set()

    def factory(config, spec):
        gate.wait(30)
        model = ScriptedModel([])
        model.info = dataclasses.replace(model.info, architecture=base.architecture,
                                         adapter=config.model.adapter)
        loads.append(model)
        return model

    app = record_notifications(DeskmateApp(Config(), model_factory=factory, mode="eager"))
    try:
        async with app.run_test(size=(130, 40)) as pilot:
            await ready(app, pilot)
            await pilot.press("f4")
            for path, why in ((tmp_path / "missing.gguf", "no such file"),
                              (tiny_model_path, "is a model, not a LoRA adapter"),
                              (other, "was made for 'qwen3' models, but the model is "
                                      f"'{base.architecture}'")):
                await pilot.press("o")
                await type_answer(app, pilot, str(path))
                await wait_for(pilot, lambda why=why: any(why in s for s in app.said),
                               what=why)
                assert str(path.resolve()) in app.said[-1]
            assert load_config().model.adapter == "" and len(loads) == 1
            assert app.model is loads[0] and app.sub_title == "scripted"
            gate.clear()  # the reload takes a while: the header must say so meanwhile
            await pilot.press("o")
            await type_answer(app, pilot, str(good))
            await wait_for(pilot, lambda: app.sub_title.startswith("loading"),
                           what="the header to say loading")
            assert load_config().model.adapter == str(good.resolve())
            gate.set()
            await wait_for(pilot, lambda: len(loads) == 2 and app.model is loads[1],
                           what="the reload")
            assert app.sub_title == "scripted + good.gguf"
            assert "good.gguf" in str(app.screen.query_one("#model-active").render())
    finally:
        gate.set()


def test_every_key_binding_is_a_config_key_with_the_same_default():
    from deskmate.app.ui.approval import ApprovalScreen
    from deskmate.app.ui.cell_approval import CellApprovalScreen
    from deskmate.app.ui.elicit import ElicitScreen
    from deskmate.app.ui.finetune import FinetuneScreen
    from deskmate.app.ui.models import ModelsScreen
    from deskmate.app.ui.prompt import PromptArea
    from deskmate.app.ui.servers import ServersScreen
    from deskmate.app.ui.sessions import SessionsScreen
    from deskmate.app.ui.task_picker import TaskPickerScreen

    defaults = dataclasses.asdict(KeysConfig())
    ids = []
    for owner in (DeskmateApp, PromptArea, ApprovalScreen, ElicitScreen, SessionsScreen,
                  ServersScreen, ModelsScreen, FinetuneScreen, TaskPickerScreen,
                  CellApprovalScreen):
        for binding in owner.BINDINGS:
            if binding.id is not None:
                assert defaults.get(binding.id) == binding.key, (owner.__name__, binding.id)
                ids.append(binding.id)
    assert sorted(ids) == sorted(defaults)  # and no config key without its binding


async def test_a_stale_reload_never_overwrites_a_fresh_one(home, monkeypatch):
    import time

    import deskmate.app.store as store

    app = make_app(scripted("Paris."))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is the capital of France?")
        await turn_done(app, pilot)
        await pilot.press("f2")
        screen = app.screen
        table = screen.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, what="the session")
        real, calls = store.list_sessions, []

        def first_one_slow_and_stale(db, limit=100):
            calls.append(limit)
            if len(calls) == 1:  # began first, answers last, with what it read then
                time.sleep(1.0)
                return []
            return real(db, limit=limit)

        monkeypatch.setattr(store, "list_sessions", first_one_slow_and_stale)
        screen.reload()
        await pilot.pause(0.2)
        screen.reload()
        await pilot.pause(1.5)
        assert len(calls) == 2 and table.row_count == 1


async def test_the_palette_offers_the_screens_own_actions(home):
    app = make_app(scripted("Paris."))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("f2")
        await pilot.pause()
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert {"Sessions: Rename", "Sessions: Export", "Sessions"} <= set(commands)
        assert commands["Sessions: Rename"].help == "Key r on this screen"
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert len(titles) == len(set(titles)), "no entry twice"
        assert "Keys" not in titles and "Help" in titles, "one way to list the keys"
        await pilot.press("f4")
        await pilot.pause()
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Models: Download" in commands
        commands["Models: Local file"].callback()  # runs on that screen: it asks for a path
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="the question")


async def test_keys_are_remapped_from_the_config_and_listed_in_help(home):
    app = DeskmateApp(Config(keys=KeysConfig(help="f9", sessions="ctrl+o",
                                             session_search="ctrl+f")),
                      model_factory=lambda c, s: scripted(), mode="eager")
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("f1")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("f9")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        listed = {(str(r[0]), str(r[2])): str(r[1]) for r in rows(table)}
        assert listed[("everywhere", "Sessions")] == "ctrl+o"
        assert listed[("approval", "Allow once")] == "y"
        await pilot.press("escape")
        await pilot.press("ctrl+o")
        assert app.current_mode == "sessions"
        assert listed[("sessions", "Search")] == "ctrl+f"  # a screen's key too
        await pilot.press("slash")
        assert app.focused.id != "session-query"
        await pilot.press("ctrl+f")
        assert app.focused.id == "session-query"


async def test_download_news_is_handled_once_and_drawn_on_the_models_screen(home, monkeypatch):
    """A download's progress and its end are posted to the app and handled there once;
    the app hands them to the models screen (they used to be posted again to the screen,
    whence they bubbled back to the app)."""
    import threading
    from pathlib import Path

    from deskmate.app.llm import download
    from deskmate.app.ui.messages import DownloadFinished, DownloadProgress
    from deskmate.app.ui.model_workers import ModelWorkers

    release = threading.Event()

    def pull(spec, progress, cancel):
        progress(5_000_000, 10_000_000)
        release.wait(30)
        return Path("/models/tiny.gguf")

    monkeypatch.setattr(download, "pull", pull)
    handled = []

    def counting(real):
        def handler(self, message):
            handled.append(message)
            real(self, message)
        return handler

    for name in ("on_download_progress", "on_download_finished"):
        monkeypatch.setattr(ModelWorkers, name, counting(getattr(ModelWorkers, name)))
    posted = []
    app = make_app(scripted())
    async with app.run_test(size=(120, 40), message_hook=posted.append) as pilot:
        await ready(app, pilot)
        await pilot.press("f4")
        bar = app.screen.query_one("#download-bar")
        app.download_model("tiny")
        await wait_for(pilot, lambda: "5 / 10 MB" in str(
            app.screen.query_one("#download-label").render()), what="the progress")
        assert bar.display
        release.set()
        await wait_for(pilot, lambda: not bar.display, what="the bar to go")
        await pilot.pause(0.2)
        assert "tiny is ready: /models/tiny.gguf" in app.said
    news = [m for m in posted if isinstance(m, (DownloadProgress, DownloadFinished))]
    assert [type(m).__name__ for m in news] == ["DownloadProgress", "DownloadProgress",
                                                "DownloadFinished"]
    assert handled == news and app.pull is None


async def test_server_news_is_handled_once_and_redraws_the_servers_screen(home, monkeypatch):
    from deskmate.app.ui.app import DeskmateApp as App
    from deskmate.app.ui.messages import HubChanged
    from deskmate.app.ui.servers import ServersScreen
    from deskmate.tools.hub import ServerState

    handled, redrawn = [], []
    real_handler, real_redraw = App.on_hub_changed, ServersScreen.hub_changed
    monkeypatch.setattr(App, "on_hub_changed",
                        lambda self, m: (handled.append(m), real_handler(self, m)))
    monkeypatch.setattr(ServersScreen, "hub_changed",
                        lambda self: (redrawn.append(self), real_redraw(self)))
    app = make_app(scripted())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        app.post_message(HubChanged(ServerState("elsewhere", "ready")))  # on the chat
        await pilot.press("f3")
        await pilot.pause()
        app.post_message(HubChanged(ServerState("toy", "ready")))
        await pilot.pause(0.3)
    assert len(handled) == 2 and len(redrawn) == 1


async def test_the_preview_folds_the_system_prompt_and_scrolls_to_a_search_hit(home):
    long = "\n\n".join(f"Paragraph {i} about sailing ships." for i in range(60))
    app = make_app(scripted(long, "The word is zanzibar."))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(app, pilot)
        for text in ("Tell me about ships", "And the word?"):
            await ask(app, pilot, text)
            await turn_done(app, pilot)
        await pilot.press("f2")
        preview = app.screen.query_one("#session-preview")
        detail = app.screen.query_one(".screen-detail")
        await wait_for(pilot, lambda: "Paragraph 3 " in preview.source, what="the preview")
        assert "(system prompt, " in preview.source, "the system prompt is one line"
        assert preview.source.index("(system prompt") < preview.source.index("## user")
        assert detail.scroll_y == 0
        await pilot.press("slash")
        app.screen.query_one("#session-query").value = "zanzibar"
        await pilot.press("enter")
        await wait_for(pilot, lambda: detail.scroll_y > 20, what="the preview at the hit")


async def test_servers_edit_set_a_variable_remove_and_fold_signatures(home):
    from deskmate.app.services.servers import add_server

    add_server("toy", toy_server("toy").to_table(), None)  # in the config file, as users have
    app = make_app(scripted(), servers=list(load_config().mcp.servers.values()))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("f3")
        table = app.screen.query_one("#servers-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1 and rows(table)[0][1] == "ready",
                       60, "toy to be ready")
        panel = app.screen.query_one("#server-tools")
        await wait_for(pilot, lambda: "def add(" in panel.source, 30, "the signatures")

        def widest() -> int:
            code = panel.source.split("```python\n", 1)[1].rsplit("```", 1)[0]
            return max(len(line) for line in code.splitlines())

        # Folded to the panel, refolded when a scrollbar narrows it (a message later).
        await wait_for(pilot, lambda: widest() <= panel.size.width - 6, 30,
                       "the signatures folded to the panel")
        await pilot.press("v")
        await type_answer(app, pilot, "GREETING=hello")
        await wait_for(pilot, lambda: "env: GREETING" in str(
            app.screen.query_one("#server-status").render()), 60, "the env named")
        assert dict(load_config().mcp.servers["toy"].env) == {"GREETING": "hello"}
        await pilot.press("e")
        await type_answer(app, pilot, f"{sys.executable} -u {TEST_SERVERS / 'toy.py'}")
        await wait_for(pilot, lambda: load_config().mcp.servers["toy"].args[0] == "-u",
                       30, "the new command line")
        assert dict(load_config().mcp.servers["toy"].env) == {"GREETING": "hello"}
        await wait_for(pilot, lambda: table.row_count == 1 and rows(table)[0][1] == "ready",
                       60, "toy ready again")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: table.row_count == 0, 60, "the server gone")
        assert "toy" not in load_config().mcp.servers
