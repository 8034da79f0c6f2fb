"""The check of an answer that picks the most or a count off printed data by eye
(worked_out.py): which requests ask for it, which code does the work, and the check
through the loop with the real filesystem server."""

from __future__ import annotations

import pytest
from conftest import run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.parse import WORK_IT_OUT, is_feedback
from deskmate.app.agent.worked_out import asks_to_work_out, work_it_out, worked_out


def test_requests_that_ask_to_compare_or_count():
    assert asks_to_work_out("Which entity has the most observations?") == ("compare", "most")
    assert asks_to_work_out("How many lines does it have?") == ("count", "How many")
    assert asks_to_work_out("What is the average score?") == ("count", "average")
    # "first"/"last" ending a clause compare; before a noun they name a thing.
    assert asks_to_work_out("Which event happened first, and on what date?") == (
        "compare", "first")
    assert asks_to_work_out("Who finished last?") == ("compare", "last")
    assert asks_to_work_out("What did the first commit add?") is None
    assert asks_to_work_out("Who wrote the last line of notes.txt?") is None
    # A thing named, not compared; a price looked up; words inside paths.
    assert asks_to_work_out("Who made the most recent commit?") is None
    assert asks_to_work_out("How much does the Trail Runner cost?") is None
    assert asks_to_work_out("Read /w/fs-earliest-event/totals.csv and the-most.txt") is None


def test_code_that_compares_or_counts_and_tools_that_do():
    assert worked_out("compare", ["print(max(rows, key=lambda r: r[1]))"], [], [])
    assert worked_out("compare", ["for r in rows:\n    if r[1] > best: best = r[1]"], [], [])
    assert not worked_out("compare", ["for e in g['entities']:\n    print(len(e['o']))"],
                          [], [])
    assert worked_out("count", ["print(len(lines))"], [], [])
    assert worked_out("count", ["total = 0\nfor n in ns:\n    total += n"], [], [])
    assert not worked_out("count", ["print(text)"], [], [])
    # The tool did it: its name, or an argument's name (not a value: a path may say
    # anything).
    assert worked_out("count", ["print(r)"], [("everything", "get_sum")], [])
    assert worked_out("compare", ["print(r)"], [("filesystem", "list_directory_with_sizes")],
                      ['{"path": "/w", "sortBy": "size"}'])
    assert not worked_out("count", ["print(r)"], [("filesystem", "read_text_file")],
                          ['{"path": "/w/totals.txt"}'])
    assert is_feedback(work_it_out("compare", "most"))


@pytest.fixture(scope="module")
def hub(file_hub):
    return file_hub


def test_an_answer_read_off_the_data_by_eye_is_sent_back_once(hub):
    hub, workdir = hub
    log = workdir / "sizes.txt"
    log.write_text("alpha 12\nbeta 40\ngamma 31\n")
    task = f"Which entry in {log} has the largest number?"
    printed = f"```python\nprint(filesystem.read_text_file(path='{log}'))\n```"
    events = run_scripted(hub, [printed, "Final answer: gamma", "Final answer: beta"], task)
    asked = [e.content for e in events if isinstance(e, ev.MessageAppended)
             and e.role == "user" and e.content.startswith(WORK_IT_OUT)]
    assert asked == [work_it_out("compare", "largest")]
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["beta"]
    # Code that compared: the answer is taken at once.
    compared = (f"```python\nrows = [l.split() for l in filesystem.read_text_file("
                f"path='{log}').splitlines()]\nprint(max(rows, key=lambda r: int(r[1])))\n```")
    events = run_scripted(hub, [compared, "Final answer: beta"], task)
    assert not any(isinstance(e, ev.MessageAppended) and e.content.startswith(WORK_IT_OUT)
                   for e in events)
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["beta"]
