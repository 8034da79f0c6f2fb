"""``deskmate sessions`` as a user runs it: real subprocesses on a real database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
from conftest import deskmate

from deskmate.app.agent import events as ev
from deskmate.app.store import Recorder, open_db


@pytest.fixture
def recorded(home):
    """Two sessions; returns their ids (the first one mentions a walrus)."""
    db = open_db()
    ids = []
    for n, word in enumerate(("walrus", "pelican")):
        recorder = Recorder.new(db, model="tiny")
        recorder.record(ev.TurnStarted(turn=1, user_message=f"find the {word}"))
        recorder.record(ev.MessageAppended(position=0, role="user", content=f"find the {word}"))
        recorder.record(ev.MessageAppended(position=1, role="assistant", content=f"answer {n}"))
        recorder.record(ev.ToolCallStarted(call_id="c1", step=1, server="zoo", tool="locate",
                                           arguments={"animal": word}))
        recorder.record(ev.TurnFinished(turn=1, status="answered", steps=1, model_calls=1,
                                        tool_calls=1, prompt_tokens=1, completion_tokens=1,
                                        wall_s=0.1))
        ids.append(recorder.session_id)
    db.close()
    return ids


def test_without_a_database_reading_commands_say_so_and_create_nothing(home):
    result = deskmate("sessions", "list", home=home)
    assert result.returncode == 0 and "No sessions recorded yet" in result.stdout
    assert deskmate("sessions", "search", "x", home=home).stdout.strip() == "No matches."
    result = deskmate("sessions", "show", "abc", home=home)
    assert result.returncode == 1 and "no sessions recorded yet" in result.stderr
    assert not (home / "data" / "deskmate.db").exists()


def test_list_show_search(home, recorded):
    walrus, pelican = recorded
    result = deskmate("sessions", home=home)  # bare `sessions` lists
    assert result.returncode == 0
    assert result.stdout.index(pelican) < result.stdout.index(walrus)  # newest first
    rows = json.loads(deskmate("sessions", "list", "--json", home=home).stdout)
    assert [r["id"] for r in rows] == [pelican, walrus]
    assert rows[0]["title"] == "find the pelican" and rows[0]["messages"] == 2

    shown = deskmate("sessions", "show", walrus[:5], home=home)
    assert shown.returncode == 0 and "find the walrus" in shown.stdout
    assert "zoo.locate" in shown.stdout
    detail = json.loads(deskmate("sessions", "show", walrus, "--json", home=home).stdout)
    assert detail["tool_calls"][0]["arguments"] == {"animal": "walrus"}

    hits = json.loads(deskmate("sessions", "search", "walrus", "--json", home=home).stdout)
    assert {h["session_id"] for h in hits} == {walrus}
    assert {h["kind"] for h in hits} == {"message", "tool_call"}
    odd = deskmate("sessions", "search", '"wal(rus', "NEAR", "OR", home=home)
    assert odd.returncode == 0 and "Traceback" not in odd.stderr


def test_export_jsonl_and_markdown(home, recorded, tmp_path):
    out = tmp_path / "train.jsonl"
    result = deskmate("sessions", "export", "--out", str(out), home=home)
    assert result.returncode == 0 and "exported 2 sessions" in result.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["messages"][0]["content"] for r in records] == ["find the walrus",
                                                              "find the pelican"]

    again = deskmate("sessions", "export", "--out", str(out), recorded[1], home=home)
    assert again.returncode == 2 and "--force" in again.stderr and str(out) in again.stderr
    assert len(out.read_text().splitlines()) == 2  # untouched
    forced = deskmate("sessions", "export", "--out", str(out), "--force", recorded[1],
                      home=home)
    assert forced.returncode == 0 and len(out.read_text().splitlines()) == 1

    md = deskmate("sessions", "export", "--format", "md", recorded[0], home=home)
    assert md.returncode == 0 and md.stdout.startswith("# find the walrus")

    unknown = deskmate("sessions", "export", "--out", str(tmp_path / "x.jsonl"), "nope",
                       home=home)
    assert unknown.returncode == 1 and "no session matches 'nope'" in unknown.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_rate_and_delete(home, recorded):
    walrus, pelican = recorded
    assert deskmate("sessions", "rate", walrus, "up", "-c", "spot on", home=home).returncode == 0
    rows = json.loads(deskmate("sessions", "list", "--json", home=home).stdout)
    assert {r["id"]: r["rating"] for r in rows} == {walrus: 1, pelican: None}
    bad = deskmate("sessions", "rate", walrus, "sideways", home=home)
    assert bad.returncode == 2

    refused = deskmate("sessions", "delete", pelican, home=home, stdin="n\n")
    assert refused.returncode != 0
    deleted = deskmate("sessions", "delete", pelican, "--yes", home=home)
    assert deleted.returncode == 0 and pelican in deleted.stdout
    rows = json.loads(deskmate("sessions", "list", "--json", home=home).stdout)
    assert [r["id"] for r in rows] == [walrus]
    missing = deskmate("sessions", "delete", pelican, "--yes", home=home)
    assert missing.returncode == 1 and "no session matches" in missing.stderr


def test_a_newer_database_is_refused_naming_the_file(home):
    open_db().close()
    path = home / "data" / "deskmate.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    result = deskmate("sessions", "list", home=home)
    assert result.returncode == 1
    assert str(path) in result.stderr and "newer deskmate" in result.stderr
    assert "Traceback" not in result.stderr


def test_importing_the_cli_does_not_load_the_store():
    code = "import sys, deskmate.app.cli; " \
           "print([m for m in ('sqlite_utils', 'deskmate.app.store') " \
           "if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_the_store_loads_without_sqlite_utils_or_pandas():
    """pandas alone costs seconds: the app pays for the store on its first recording."""
    code = "import sys, deskmate.app.store; print([m for m in ('sqlite_utils', 'pandas') " \
           "if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
