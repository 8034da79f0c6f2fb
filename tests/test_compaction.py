"""Compaction: the older turns summarised by the model into one message, the session
going on in a compacted copy of itself (the recorded one is never rewritten), append-only
from there. A scripted model, the real Conversation and the real SQLite store."""

from __future__ import annotations

import threading

import pytest

from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.config import load_config
from deskmate.app.services.compaction import ACK, NothingToCompact, compact
from deskmate.app.services.conversation import Conversation
from deskmate.app.store import get_session, list_sessions
from deskmate.app.store.compaction import COMPACT_TITLE, SUMMARY_HEAD


def test_compaction_summarises_the_older_turns_and_goes_on_in_a_new_session(home, db):
    model = ScriptedModel(["Final answer: Paris", "Final answer: Rome",
                           "The user asked for the capitals of France (Paris) and Italy.",
                           "Final answer: Madrid"])
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db)
    conversation.build(model, None)
    for text in ("Capital of France?", "And of Italy?"):
        list(conversation.run(text, threading.Event()))
    first = conversation.session_id
    assert first is not None
    before = list(conversation.transcript)
    done = compact(conversation, keep_turns=1)
    # The summary call read the older turn, not the kept one.
    asked = model.calls[2][-1].content
    assert "Capital of France?" in asked and "Paris" in asked and "Italy" not in asked
    agent = conversation.runtime.agent
    assert [m.role for m in agent.transcript[:3]] == ["system", "user", "assistant"]
    assert agent.transcript[0] == before[0]
    assert agent.transcript[1].content.startswith(SUMMARY_HEAD)
    assert "France (Paris)" in agent.transcript[1].content and agent.transcript[2].content == ACK
    kept = before[next(i for i, m in enumerate(before) if m.content == "And of Italy?"):]
    assert agent.transcript[3:] == kept
    assert (done.messages_before, done.messages_after) == (len(before), 3 + len(kept))
    # Recorded: the old session as it was; the new one holds the compacted transcript.
    assert done.kept_in == first and done.session == conversation.session_id != first
    old = get_session(db, first)
    assert [m.content for m in old.messages] == [m.content for m in before]
    new = get_session(db, done.session)
    assert new.summary.title.startswith(COMPACT_TITLE)
    assert [m.content for m in new.messages] == [m.content for m in agent.transcript]
    assert len(new.turns) == 2  # the turns' records are kept with it
    # The next turn reads the compacted transcript and is appended to the new session.
    list(conversation.run("And of Spain?", threading.Event()))
    assert model.calls[3][1].content.startswith(SUMMARY_HEAD)
    new = get_session(db, done.session)
    assert [m.content for m in new.messages] == [m.content for m in conversation.transcript]
    assert new.messages[-1].position == len(conversation.transcript) - 1
    assert len(get_session(db, first).messages) == len(before)
    assert len(list_sessions(db)) == 2
    conversation.close()


def test_nothing_to_compact(home, db):
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db)
    conversation.build(ScriptedModel(["Final answer: hi"]), None)
    list(conversation.run("hello", threading.Event()))
    with pytest.raises(NothingToCompact, match="1 turn"):
        compact(conversation)
    conversation.close()


@pytest.mark.slow
async def test_compact_in_the_chat_by_hand_and_by_itself(home):
    import dataclasses

    from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for

    from deskmate.app.ui.blocks import Notice
    from deskmate.app.ui.context_meter import ContextMeter

    model = scripted("Paris", "Rome", "France: Paris.", "Madrid", "France, Italy, Spain.")
    app = make_app(model)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(app, pilot)
        for text in ("Capital of France?", "And of Italy?"):
            await ask(app, pilot, text)
            await turn_done(app, pilot)

        def notices() -> list[str]:
            return [str(n.source) for n in app.chat.query(Notice) if "Compacted" in n.source]

        await ask(app, pilot, "/compact")
        await wait_for(pilot, lambda: len(notices()) == 1, 60, "the compaction notice")
        agent = app.conversation.runtime.agent
        assert agent.transcript[1].content.startswith(SUMMARY_HEAD)
        assert "France: Paris." in notices()[0] and "neared" not in notices()[0]
        assert not app.chat.query_one(ContextMeter).display  # read again at the next call
        assert app.conversation.session_id is not None
        # A turn that fills 80% of the window is followed by a compaction of its own.
        model.info = dataclasses.replace(model.info, context_size=10)
        await ask(app, pilot, "And of Spain?")
        await wait_for(pilot, lambda: len(notices()) == 2, 60, "the automatic compaction")
        assert "neared the model's context window" in notices()[1]
        assert "France, Italy, Spain." in agent.transcript[1].content
        assert not app.chat.busy
        titles = [s.title for s in list_sessions(app.conversation.db)]
        assert sorted(titles) == ["Capital of France?", f"{COMPACT_TITLE}Capital of France?",
                                  f"{COMPACT_TITLE}Capital of France?"]


def test_a_failed_summary_leaves_the_session_as_it_was(home, db):
    from deskmate.app.llm import ModelError

    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db)
    conversation.build(ScriptedModel(["Final answer: a", "Final answer: b", "  "]), None)
    for text in ("one?", "two?"):
        list(conversation.run(text, threading.Event()))
    session, before = conversation.session_id, list(conversation.runtime.agent.transcript)
    with pytest.raises(RuntimeError, match="empty summary"):
        compact(conversation)
    with pytest.raises(ModelError, match="no reply #4"):  # the model fails outright
        compact(conversation)
    assert conversation.runtime.agent.transcript == before
    assert conversation.session_id == session and len(list_sessions(db)) == 1
    conversation.close()


@pytest.mark.slow
def test_compaction_with_the_real_tiny_model(home, db, tiny_model):
    conversation = Conversation(load_config(), None, mode="eager", db_factory=lambda: db,
                                max_tokens=48, keep_kv_state=False)
    conversation.build(tiny_model, None)
    for text in ("My cat is called Tom. Say hi.", "What is 2 + 2?"):
        list(conversation.run(text, threading.Event()))
    done = compact(conversation)
    transcript = conversation.runtime.agent.transcript
    assert done.summary and transcript[1].content.startswith(SUMMARY_HEAD)
    assert transcript[3].content == "What is 2 + 2?"
    events = list(conversation.run("Thanks.", threading.Event()))
    assert events[-1].status in ("answered", "max_tokens", "max_steps")
    stored = get_session(db, conversation.session_id)
    assert [m.content for m in stored.messages] == [m.content for m in transcript]
    conversation.close()
