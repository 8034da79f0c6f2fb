"""A whole-file write that would throw away most of a file the turn read is not run
(app/agent/overwrite.py): through the code-mode loop with the real MCP filesystem
server, and the rule on its own."""

from __future__ import annotations

import pytest
from conftest import run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.overwrite import asks_to_remove, loss, loss_error, whole_write
from deskmate.app.agent.turn_record import TurnRecord, whole_read

HOSTS = ("# Static table lookup for hostnames.\n127.0.0.1       localhost\n"
         "192.168.1.10    nas.local nas\n192.168.1.25    pihole.local\n")


def test_a_write_of_only_the_new_line_loses_the_rest():
    found = loss(HOSTS, "printer.local 192.168.1.40\n", "/w/hosts", "path")
    assert found is not None
    assert (found.lines, found.written) == (4, 1)
    assert "127.0.0.1       localhost" in found.dropped
    assert len(found.dropped) == 4


@pytest.mark.parametrize("new", [
    HOSTS + "192.168.1.40    printer.local\n",  # added to
    HOSTS.upper(),  # every line changed, its words kept
    "\n".join(sorted(HOSTS.splitlines())),  # reordered
    HOSTS.replace("192.168.1.25", "192.168.1.26"),  # one value fixed
    HOSTS.replace("    ", ","),  # reformatted
])
def test_a_write_that_keeps_the_files_words_is_no_loss(new):
    assert loss(HOSTS, new, "/w/hosts", "path") is None


def test_a_one_line_file_replaced_is_a_change():
    assert loss("version = 1.2.0\n", "2.0.0\n", "/w/VERSION", "path") is None


def test_what_counts_as_a_whole_file_write():
    assert whole_write("write_file", {"path": "/w/a", "content": "x"}) == ("path", "/w/a", "x")
    assert whole_write("append_file", {"path": "/w/a", "content": "x"}) is None
    assert whole_write("write_file", {"path": "/w/a", "content": "x", "mode": "append"}) is None
    assert whole_write("edit_file", {"path": "/w/a", "edits": []}) is None
    assert whole_write("move_file", {"source": "/w/a", "destination": "/w/b"}) is None


@pytest.mark.parametrize(("request_", "removes"), [
    ("Add printer.local to /w/hosts, keeping the entries that are there.", False),
    ("Fix the typo in /w/notes.txt.", False),
    ("Remove the duplicate lines from /w/list.txt.", True),
    ("Replace the contents of /w/a.txt with 'hello'.", True),
    ("Keep only the active rows in /w/stock.csv.", True),
    ("Empty the file /w/log.txt.", True),
])
def test_a_request_that_asks_to_remove_lets_the_write_drop(request_, removes):
    assert asks_to_remove(request_) is removes


def test_the_error_without_a_reader_says_what_to_do():
    found = loss(HOSTS, "x y\n", "/w/hosts", "path")
    assert found is not None
    text = loss_error("files.save", found)
    assert "write the whole text back" in text and "make the same call again" in text


def test_the_turn_refuses_once_a_write_that_loses_what_it_read():
    record = TurnRecord()
    write = {"path": "/w/hosts", "content": "printer.local 192.168.1.40\n"}
    adding = "Add printer.local to /w/hosts."
    assert record.loses("write_file", write, adding) is None  # never read: nothing known
    record.saw(True, {"path": "/w/hosts"}, HOSTS)
    assert record.loses("write_file", write, adding) is not None
    assert record.loses("write_file", write, adding) is None  # the same write, again
    other = {"path": "/w/hosts", "content": "printer.local 192.168.1.41\n"}
    assert record.loses("write_file", other, adding) is not None
    assert record.loses("write_file", other, "Overwrite /w/hosts with one entry.") is None


def test_a_read_of_a_head_longer_than_the_file_is_whole():
    assert whole_read({"path": "/w/a"}, "path", "x\n")
    assert whole_read({"path": "/w/a", "head": 41, "tail": None}, "path", "a\nb\nc\n")
    assert not whole_read({"path": "/w/a", "head": 3}, "path", "a\nb\nc\n")  # maybe more
    assert not whole_read({"path": "/w/a", "offset": 2}, "path", "a\n")
    assert not whole_read({"path": "/w/a", "head": True}, "path", "a\n")


def test_the_first_looks_read_keeps_a_short_file_from_a_write_of_garbage(file_hub):
    # The first look reads with a head (41 lines); a file shorter than that was read
    # whole, but taken as partly read, and a write of bytecode over mail.py went through.
    from deskmate.app.agent.factory import build_agent
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.tools.policy import Policy

    hub, workdir = file_hub
    mail = workdir / "mail.py"
    original = 'def recieve(inbox):\n    """Recieve all new messages."""\n    return list(inbox)\n'
    mail.write_text(original)
    cell = ("def receive(inbox):\n    return list(inbox)\n"
            f"print(filesystem.write_file(path='{mail}', "
            "content=receive.__code__.co_code.decode('latin-1')))")
    runtime = build_agent(ScriptedModel([f"```python\n{cell}\n```", "Final answer: -"]),
                          hub=hub, policy=Policy(yes_all=True))
    try:
        events = list(runtime.agent.run(f"The file {mail} misspells \"receive\". Fix it."))
    finally:
        runtime.sandbox.close()
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "filesystem.write_file was not run" in output
    assert mail.read_text() == original


def test_the_users_file_keeps_its_lines_and_the_model_is_shown_how(file_hub):
    hub, workdir = file_hub
    hosts = workdir / "hosts"
    hosts.write_text(HOSTS)
    read = f"print(filesystem.read_text_file(path='{hosts}'))"
    # positional, as the 1.5B wrote it: bound as meant, so no word about binding
    only_new = (f"print(filesystem.write_file('{hosts}', "
                "'printer.local 192.168.1.40\\n'))")
    kept = (f"text = filesystem.read_text_file(path='{hosts}')\n"
            f"print(filesystem.write_file(path='{hosts}', "
            "content=text + '192.168.1.40    printer.local\\n'))")
    events = run_scripted(hub, [f"```python\n{read}\n```", f"```python\n{only_new}\n```",
                                f"```python\n{kept}\n```", "Final answer: added"],
                          f"Add printer.local (192.168.1.40) to {hosts}.")
    outputs = [e.content for e in events if isinstance(e, ev.Observation)]
    refused = outputs[1]
    assert "filesystem.write_file was not run" in refused
    assert "'127.0.0.1       localhost'" in refused
    # the two lines that keep the file, with the write's own text, to copy
    assert (f"To keep its lines and add yours, write this cell (to change a line, replace "
            f"it in text before writing):\ntext = filesystem.read_text_file(path='{hosts}')\n"
            f"print(filesystem.write_file(path='{hosts}', content=text.rstrip('\\n') + "
            "'\\n' + 'printer.local 192.168.1.40\\n'))\nIf the request") in refused
    assert "positional" not in refused and "bound in signature order" not in refused
    assert "Successfully wrote" in outputs[2]
    assert hosts.read_text() == HOSTS + "192.168.1.40    printer.local\n"


def test_a_replace_the_user_asked_for_goes_through(file_hub):
    hub, workdir = file_hub
    hosts = workdir / "hosts2"
    hosts.write_text(HOSTS)
    cell = (f"print(filesystem.read_text_file(path='{hosts}'))\n"
            f"print(filesystem.write_file(path='{hosts}', content='127.0.0.1 localhost\\n'))")
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: done"],
                          f"Overwrite {hosts} so that it holds only localhost.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "Successfully wrote" in output
    assert hosts.read_text() == "127.0.0.1 localhost\n"
