"""An answer that gives none of the value its question asks for (a time for "when", a
number for "how many") is sent back once (app/agent/asked_value.py, answer_checks.py);
through the code-mode loop with the real filesystem server."""

from __future__ import annotations

from conftest import run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.asked_value import asked_kind, gives_none, lacks_check
from deskmate.app.agent.parse import is_feedback


def test_the_questions_that_ask_for_a_time_or_a_number():
    page = "When does the library close on Saturdays, according to http://h:1/lib.html?"
    assert asked_kind(page) == ("time or date", page)
    assert asked_kind("How many lines does notes.txt have?\nThanks.") == (
        "number", "How many lines does notes.txt have?")
    assert asked_kind("Count the rows of /w/a.csv and tell me how many there are.") == (
        "number", "Count the rows of /w/a.csv and tell me how many there are.")
    # A "when" that sets a condition, a request with no question: nothing asked.
    assert asked_kind("When you are done, write the total into /tmp/x.txt.") is None
    assert asked_kind("Sort the lines of /w/list.txt.") is None
    assert asked_kind("Is /w/when-due/how-many.txt empty?") is None  # words of a path


def test_answers_that_give_the_value_or_none():
    assert gives_none("time or date", "The library closes on Saturdays, as the page says.")
    assert not gives_none("time or date", "It closes at 16:30.")
    assert not gives_none("time or date", "It is closed on Sunday.")
    assert gives_none("number", "The file has several lines.")
    assert not gives_none("number", "There are none.")
    assert not gives_none("number", "It has 12 lines.")
    assert is_feedback(lacks_check("number", "How many?"))


def test_an_answer_without_the_time_asked_for_is_sent_back_once(file_hub):
    hub, workdir = file_hub
    hours = workdir / "hours.md"
    hours.write_text("| Day | Opens | Closes |\n| Saturday | 10:00 | 16:30 |\n")
    task = f"When does the library close on Saturdays, according to {hours}?"
    read = f"```python\nprint(filesystem.read_text_file(path='{hours}'))\n```"
    events = run_scripted(hub, [read, "Final answer: The library closes on Saturdays.",
                                "Final answer: It closes on Saturdays, as the file says."],
                          task)
    sent_back = [e.content for e in events if isinstance(e, ev.Observation)][1]
    assert sent_back == (f"That answer gives no time or date, and the request asks: "
                         f"\"{task}\". Find it in what the tools returned above (or print it "
                         "with code) and answer with it.")
    # Once a turn: the second such answer is taken.
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == [
        "It closes on Saturdays, as the file says."]
