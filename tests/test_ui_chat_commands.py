"""The chat's own commands and conveniences under run_test(), with the real app, agent
and SQLite store (a scripted model): /sessions, /export, /clear, /retry, /edit and
their completion; the prompt history across a restart; ``@path`` attachments; copying
a message or its code to the clipboard.
"""

from __future__ import annotations

import json

import pytest
from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for

from deskmate.app.services.mcp_input import FILE_CHARS, InputError, expand, path_mentions
from deskmate.app.services.prompt_history import LIMIT, PromptHistory, history_path
from deskmate.app.store import get_session, list_sessions, open_db
from deskmate.app.ui.attachment import AttachmentBlock
from deskmate.app.ui.blocks import ReplyBlock, UserBlock
from deskmate.app.ui.prompt import PromptArea


def prompt_of(app) -> PromptArea:
    return app.chat.query_one("#prompt", PromptArea)


async def test_retry_answers_again_and_keeps_the_old_answer_in_its_session(home):
    model = scripted("first answer", "second answer", "third answer")
    app = make_app(model)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is 6 x 7?")
        await turn_done(app, pilot)
        old = app.conversation.session_id
        await ask(app, pilot, "/retry")
        await wait_for(pilot, lambda: len(model.calls) == 2, what="the retried turn")
        await turn_done(app, pilot)
        branch = app.conversation.session_id
        # The model was asked the same question without its first answer.
        assert [m.role for m in model.calls[1]] == ["system", "user"]
        assert model.calls[1][1].content == model.calls[0][1].content
        assert [b.source for b in app.chat.query(ReplyBlock)][-1] == "second answer"
        # A follow-up goes on in the branch, after the retried answer.
        await ask(app, pilot, "And 6 x 8?")
        await turn_done(app, pilot)
        assert [m.content for m in model.calls[2] if m.role == "assistant"] == [
            "second answer"]
    db = open_db()
    assert branch != old
    kept = get_session(db, old)
    assert [m.content for m in kept.messages if m.role == "assistant"] == ["first answer"]
    retried = get_session(db, branch)
    assert retried.summary.title == "retry: What is 6 x 7?"
    assert [m.content for m in retried.messages if m.role == "assistant"] == [
        "second answer", "third answer"]
    assert [t.turn for t in retried.turns] == [1, 2]
    assert {s.id for s in list_sessions(db)} == {old, branch}


async def test_retry_with_nothing_to_retry_says_so(home):
    app = make_app(scripted("unused"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/retry")
        await wait_for(pilot, lambda: any("Nothing to retry" in s for s in app.said),
                       what="the refusal")
        await turn_done(app, pilot)
        assert app.conversation.session_id is None


async def test_edit_puts_the_last_prompt_back(home):
    app = make_app(scripted("an answer"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/edit")
        await pilot.pause()
        assert any("No prompt to edit" in s for s in app.said)
        await ask(app, pilot, "Summarise the file\nin two lines")
        await turn_done(app, pilot)
        await ask(app, pilot, "/edit")
        await pilot.pause()
        assert prompt_of(app).text == "Summarise the file\nin two lines"
        assert prompt_of(app).cursor_location == prompt_of(app).document.end


async def test_export_writes_markdown_and_never_overwrites(home, tmp_path):
    app = make_app(scripted("## Exported\n\nan answer"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "/export")
        await pilot.pause()
        assert any("Nothing is recorded" in s for s in app.said)
        await ask(app, pilot, "Tell me")
        await turn_done(app, pilot)
        target = tmp_path / "out.md"
        await ask(app, pilot, f"/export {target}")
        await wait_for(pilot, lambda: any("Exported 1 session" in s for s in app.said),
                       what="the export")
        text = target.read_text()
        assert "Tell me" in text and "## Exported" in text
        target.write_text("mine")
        await ask(app, pilot, f"/export {target}")
        await wait_for(pilot, lambda: any("exists and was left" in s for s in app.said),
                       what="the refusal")
        assert target.read_text() == "mine"


async def test_clear_starts_a_new_session_and_sessions_opens_the_list(home):
    app = make_app(scripted("one", "two"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "hello")
        await turn_done(app, pilot)
        first = app.conversation.session_id
        await ask(app, pilot, "/clear")
        await pilot.pause()
        assert not app.chat.query(UserBlock) and app.conversation.session_id is None
        await ready(app, pilot)
        await ask(app, pilot, "again")
        await turn_done(app, pilot)
        assert app.conversation.session_id not in (None, first)
        await ask(app, pilot, "/sessions")
        await wait_for(pilot, lambda: app.current_mode == "sessions", what="F2")


async def test_slash_commands_complete_in_the_prompt(home):
    app = make_app(scripted("unused"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        prompt = prompt_of(app)
        prompt.focus()
        await pilot.press("/", "r", "e")
        await pilot.pause()
        assert prompt.suggestion == "try"
        await pilot.press("right")
        assert prompt.text == "/retry"
        prompt.load_text("")
        await pilot.press("/", "e")  # /edit and /export: their common part, nothing more
        await pilot.pause()
        assert prompt.suggestion == ""
        await pilot.press("x")
        await pilot.pause()
        assert prompt.suggestion == "port"


async def test_the_prompt_history_survives_a_restart(home):
    app = make_app(scripted("one", "two"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "first question")
        await turn_done(app, pilot)
        await ask(app, pilot, "second\nquestion")
        await turn_done(app, pilot)
    lines = history_path().read_text().splitlines()
    assert [json.loads(line) for line in lines] == ["first question", "second\nquestion"]
    app = make_app(scripted())
    async with app.run_test() as pilot:
        prompt = prompt_of(app)
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "second\nquestion"
        await pilot.press("up")
        assert prompt.text == "first question"
    history_path().unlink()  # the user's way to forget it
    app = make_app(scripted())
    async with app.run_test() as pilot:
        assert prompt_of(app).sent == []


def test_the_history_file_is_bounded(tmp_path):
    path = tmp_path / "data" / "history.jsonl"
    history = PromptHistory(path, limit=5)
    kept: list[str] = []
    for i in range(23):
        kept.append(f"p{i}")
        history.add(f"p{i}", kept)
        assert len(path.read_text().splitlines()) < 10
    assert PromptHistory(path, limit=5).load() == [f"p{i}" for i in range(18, 23)]
    path.write_text('"ok"\nnot json\n{"a": 1}\n"also ok"\n')
    assert PromptHistory(path).load() == ["ok", "also ok"]
    assert LIMIT == 500


async def test_an_attached_file_is_shown_sent_and_recorded(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("The launch code is 4217.\n")
    (tmp_path / "big.txt").write_text("x" * (FILE_CHARS + 500))
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\0\0\x01")
    model = scripted("It is 4217.", "Noted.")
    app = make_app(model)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is in @./notes.txt and @big.txt?")
        await turn_done(app, pilot)
        [block] = app.chat.query(AttachmentBlock)  # @big.txt is a word, not a path
        assert "notes.txt" in str(block.render()) and not block.has_class("-cut")
        sent = model.calls[0][-1].content
        assert "File @./notes.txt" in sent and "The launch code is 4217." in sent
        await ask(app, pilot, "Now @./big.txt and @./blob.bin")
        await wait_for(pilot, lambda: len(app.chat.query(AttachmentBlock)) == 3,
                       what="two more attachment blocks")
        big, blob = list(app.chat.query(AttachmentBlock))[1:]
        assert "cut: the first 20,000 characters" in str(big.render())
        assert "binary" in str(blob.render()) and blob.has_class("-cut")
        # A missing file is said before anything is sent; the text stays to correct.
        await ask(app, pilot, "Read @./nope.txt")
        await pilot.pause()
        assert any("@./nope.txt: no such file" in s for s in app.said)
        assert prompt_of(app).text == "Read @./nope.txt"
        session = app.conversation.session_id
    detail = get_session(open_db(), session)
    assert "The launch code is 4217." in detail.messages[1].content


def test_path_mentions_are_told_from_server_mentions(tmp_path):
    assert path_mentions("see @/etc/hosts, @~/x.md and @../y. Not a@/b or @fs:file:///z") \
        == ["/etc/hosts", "~/x.md", "../y"]
    (tmp_path / "a.txt").write_text("has ``` fences")
    text = expand(f"look at @{tmp_path}/a.txt", None, [])
    assert "````\nhas ``` fences\n````" in text
    with pytest.raises(InputError, match="is a folder"):
        expand(f"@{tmp_path}", None, [])
    with pytest.raises(InputError, match="no such file"):
        expand("@./not-here.txt", None, [])


async def test_a_focused_message_and_its_code_are_copied(home):
    answer = "Run this:\n\n```python\nprint('hi')\n```\n\nThen that."
    app = make_app(scripted(answer))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "How do I greet?")
        await turn_done(app, pilot)
        reply = app.chat.query_one(ReplyBlock)
        reply.focus()
        await pilot.press("c")
        assert app.clipboard == answer
        await pilot.press("k")
        assert app.clipboard == "print('hi')"
        app.chat.query_one(UserBlock).focus()
        await pilot.press("c")
        assert app.clipboard == "How do I greet?"
        assert any("to the clipboard" in s for s in app.said)
        await pilot.press("x")  # any other key types into the prompt
        assert prompt_of(app).text == "x" and app.focused is prompt_of(app)


async def test_f1_lists_the_commands_attachments_copy_keys_and_meters(home):
    from textual.widgets import DataTable

    from deskmate.app.ui.help import HelpScreen

    app = make_app(scripted())
    async with app.run_test() as pilot:
        await ask(app, pilot, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="F1")
        table = app.screen.query_one(DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        keys = {row[1] for row in rows}
        for shown in ("/sessions", "/export [PATH]", "/clear", "/retry", "/edit", "c / k",
                      "@./file @/abs/file", "/compact", "up / down", "enter / click",
                      "▲ / ▼", "tok/s", "ctx used/window", "deskmate chat"):
            assert shown in keys, shown
        # Per-tool enable/disable, on F3.
        assert any(row[:2] == ["servers", "o"] and "Tool" in row[2] for row in rows)


async def test_a_tool_calls_arguments_and_result_are_copied(home):
    from conftest import toy_server
    from test_ui_support import call
    from textual.widgets._collapsible import CollapsibleTitle

    from deskmate.app.ui.blocks import ActionBlock

    model = scripted(call("toy__add", a=20, b=22), "The sum is 42.")
    app = make_app(model, servers=[toy_server(trust=True)])
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await ask(app, pilot, "What is 20 + 22?")
        await turn_done(app, pilot)
        block = app.chat.query_one(ActionBlock)
        block.query_one(CollapsibleTitle).focus()
        await pilot.press("c")
        assert '"a": 20' in app.clipboard and app.clipboard.endswith("42")
        await pilot.press("k")
        assert '"a": 20' in app.clipboard and "42" not in app.clipboard


async def test_a_workers_news_while_the_app_closes_reaches_no_view(home):
    # Model, server and agent news come from thread workers. Landing while the app
    # closes, it found the chat view still there and its children (the status line, the
    # sandbox label, the transcript) gone: a make test run failed on `#usage`.
    from deskmate.app.ui.messages import AgentReady, ModelFailed

    app = make_app(scripted())
    async with app.run_test() as pilot:
        await ready(app, pilot)
        view = app.chat
        assert app._live_views() == [view]
        await view.remove_children()
        app.exit()
        assert app._live_views() == []
        app.on_model_failed(ModelFailed("the model file went away"))
        # An agent built meanwhile is still taken on (the app closes it with the rest).
        assert app.model is not None
        built = app.conversation.prepare(app.model, app.hub)
        app.on_agent_ready(AgentReady(built, app._builds))
        assert app.conversation.runtime is built.runtime
