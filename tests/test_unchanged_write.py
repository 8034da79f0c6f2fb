"""A write that gives a file the text it already held gets a note: through the code-mode
loop with the real MCP filesystem server, and the turn record's bookkeeping on its own."""

from __future__ import annotations

import pytest
from conftest import run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.parse import SAME_CODE
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.agent.turn_record import UNCHANGED_WRITE, TurnRecord, unchanged_note
from deskmate.tools.policy import Policy


def test_a_write_of_the_text_a_read_returned_is_unchanged():
    record = TurnRecord()
    assert record.saw(True, {"path": "/w/mail.py"}, "def recieve():\n") is None
    assert record.saw(False, {"path": "/w/mail.py", "content": "def recieve():"},
                      "ok") == ("path", "/w/mail.py")
    assert record.unchanged == ["/w/mail.py"]
    # Another text is a change; the same text written again after it is no news (the
    # change was made), not a write that changed nothing.
    assert record.saw(False, {"path": "/w/mail.py", "content": "def receive():"}, "ok") is None
    assert record.saw(False, {"path": "/w/mail.py", "content": "def receive():\n"},
                      "ok") is None
    assert record.unchanged == []


def test_a_servers_own_argument_names_are_kept_in_the_note():
    # Not every server calls it path=: the note names the argument the call was given.
    record = TurnRecord()
    record.saw(True, {"file_path": "/w/a.txt", "offset": None}, "one\n")
    named = record.saw(False, {"file_path": "/w/a.txt", "contents": "one"}, "ok")
    assert named == ("file_path", "/w/a.txt")
    note = unchanged_note("files.save", named)
    assert note.startswith(f"Note: files.save(file_path='/w/a.txt', …){UNCHANGED_WRITE}")
    # A change afterwards takes the file off the list of those left as they were.
    record.saw(False, {"file_path": "/w/a.txt", "contents": "two"}, "ok")
    assert record.unchanged == []


def test_only_a_whole_read_of_one_file_counts():
    record = TurnRecord()
    # Its first lines only: a write of those would cut the file, not leave it.
    record.saw(True, {"path": "/w/a.txt", "head": 1}, "one\n")
    assert record.saw(False, {"path": "/w/a.txt", "content": "one\n"}, "ok") is None
    # A head longer than the file (the first look's) read all of it.
    record.saw(True, {"path": "/w/d.txt", "head": 41}, "one\n")
    assert record.saw(False, {"path": "/w/d.txt", "content": "one\n"}, "ok") == (
        "path", "/w/d.txt")
    # A file never read, and a write of a path never seen.
    assert record.saw(False, {"path": "/w/b.txt", "content": "x"}, "ok") is None
    # Changed by a tool that writes no text (an edit): what was read no longer holds.
    record.saw(True, {"path": "/w/c.txt"}, "old\n")
    record.saw(False, {"path": "/w/c.txt", "edits": [{"oldText": "old", "newText": "new"}]},
               "ok")
    assert record.saw(False, {"path": "/w/c.txt", "content": "old\n"}, "ok") is None


@pytest.fixture(scope="module")
def hub(file_hub):
    return file_hub


def run(hub, cell: str, task: str):
    return run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: done",
                              "Final answer: done"], task)


def test_a_fix_that_replaced_nothing_is_told_it_changed_nothing(hub):
    hub, workdir = hub
    mail = workdir / "mail.py"
    mail.write_text('def recieve(inbox):\n    """Recieve all new messages."""\n')
    cell = (f"text = filesystem.read_text_file(path='{mail}')\n"
            "fixed = text.replace('receive', 'receive')\n"
            f"print(filesystem.write_file(path='{mail}', content=fixed))")
    events = run(hub, cell, f"Fix the spelling of receive in {mail}.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "Successfully wrote" in output
    assert f"Note: filesystem.write_file(path='{mail}', …){UNCHANGED_WRITE}" in output
    # A real fix gets no note.
    cell = cell.replace("replace('receive', 'receive')", "replace('recieve', 'receive')")
    events = run(hub, cell, f"Fix the spelling of receive in {mail}.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert UNCHANGED_WRITE not in output and "def receive" in mail.read_text()


def test_an_answer_right_after_the_note_is_sent_back_once(hub):
    hub, workdir = hub
    notes = workdir / "notes.txt"
    notes.write_text("keep\n")
    cell = (f"text = filesystem.read_text_file(path='{notes}')\n"
            f"print(filesystem.write_file(path='{notes}', content=text))")
    model = ScriptedModel([f"```python\n{cell}\n```", "Final answer: fixed", "Final answer: ok",
                           "Final answer: ok"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True),
                          limits=AgentLimits(first_look=False))
    try:
        events = list(runtime.agent.run(f"Change keep to kept in {notes}."))
    finally:
        runtime.sandbox.close()
    observations = [e.content for e in events if isinstance(e, ev.Observation)]
    assert len(observations) == 3 and observations[1].startswith("That answer comes right after")
    # A write that changed nothing is no change: an answer still reports one undone.
    assert observations[2].startswith("Nothing has been changed yet")
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["ok"]


def test_a_cell_written_again_after_a_change_runs_again(hub):
    # The 1.5B read the config again after writing it, and was told its output would be
    # the same: the file had changed since.
    hub, workdir = hub
    config = workdir / "reread.ini"
    config.write_text("port = 80800\n")
    read = f"print(filesystem.read_text_file(path='{config}'))"
    write = f"print(filesystem.write_file(path='{config}', content='port = 8080'))"
    events = run_scripted(hub, [f"```python\n{cell}\n```" for cell in (read, write, read, read)]
                          + ["Final answer: done"], f"Set the port in {config} to 8080.")
    outputs = [e.content for e in events if isinstance(e, ev.Observation)]
    assert "port = 80800" in outputs[0] and "Successfully wrote" in outputs[1]
    assert outputs[2] == "Output:\nport = 8080"  # run again: the write changed the file
    assert outputs[3].startswith(SAME_CODE)  # nothing changed since: a repeat


def test_the_text_a_write_of_this_turn_gave_written_again_is_not_unchanged():
    # The change was the first write's: the second is no news, not "nothing changed".
    record = TurnRecord()
    record.saw(True, {"path": "/w/a.txt"}, "old\n")
    assert record.saw(False, {"path": "/w/a.txt", "content": "new\n"}, "ok") is None
    assert record.saw(False, {"path": "/w/a.txt", "content": "new\n"}, "ok") is None
    assert record.unchanged == []
    # A file never read, written twice the same: no note either.
    record.saw(False, {"path": "/w/b.txt", "content": "x"}, "ok")
    assert record.saw(False, {"path": "/w/b.txt", "content": "x"}, "ok") is None
    # A no-op write of a file read stays noted, however often it is made.
    record.saw(True, {"path": "/w/c.txt"}, "same\n")
    for _ in range(2):
        assert record.saw(False, {"path": "/w/c.txt", "content": "same"}, "ok") == (
            "path", "/w/c.txt")
    assert record.unchanged == ["/w/c.txt"]
