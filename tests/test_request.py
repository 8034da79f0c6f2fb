"""Reading a request: a question or a change, the user's data named, its steps, and the
words the head start searches with."""

from __future__ import annotations

import pytest

from deskmate.app.agent.request import (
    asks_for_change,
    asks_for_information,
    clauses,
    copies_an_error,
    grounded_in,
    head_start_query,
    names_user_data,
    request_files,
)
from deskmate.tools.sandbox import RequestFiles


@pytest.mark.parametrize(("request_", "change"), [
    ('Set the "version" field of /w/package.json to 2.0.0. Leave the rest as it is.', True),
    ("Fetch the page and save the price to /tmp/a.txt", True),
    ("Read notes.md, then append a line", True),
    ("Who lives in Paris? Add an observation about it.", True),
    ("Rename a.txt to b.txt", True),
    ("How many incidents are still open?", False),
    ("What is in the last commit?", False),
    ("Which files changed?", False),  # a change asked about, not asked for
    ("Count the guests in a set of files", False),
    ("Tick off eggs and milk in /w/shopping.md and keep the rest.", True),
    ("Rewrite the dates in invoices.csv as YYYY-MM-DD.", True),
    ("What was the increase in sales in q3.csv?", False),  # a noun, not a clause's verb
])
def test_a_request_for_a_change_starts_a_clause_with_a_verb_that_changes(request_, change):
    assert asks_for_change(request_) is change


def test_questions_data_and_errors():
    assert asks_for_information("List the branches") and asks_for_information("Is it on?")
    assert not asks_for_information("Rename a.txt to b.txt")
    assert names_user_data("Sum the numbers in totals.csv")
    assert names_user_data("What is in the repository at ~/code?")
    assert not names_user_data("What is 2 + 2?")
    assert copies_an_error("Error: Traceback (most recent call last):\n  File ...")
    assert not copies_an_error("The error rate is 2%.")


def test_the_head_start_query_reads_a_url_as_a_web_page_and_a_path_as_its_file():
    assert head_start_query("Count the open items at http://127.0.0.1:8080/api/s.json?") == (
        "Count the open items at web page URL")
    assert head_start_query("Sum the numbers in /tmp/ws/data/numbers.csv please") == (
        "Sum the numbers in the file numbers.csv please")
    # A file said to be one keeps its word; a folder or a name with no extension is its name.
    assert head_start_query("Read the file /tmp/a/notes.md") == "Read the file notes.md"
    assert head_start_query("List /tmp/ws/logs and /tmp/ws/LICENSE") == "List logs and LICENSE"
    assert head_start_query("Get https://h/a.txt, save it") == "Get web page URL, save it"
    assert len(head_start_query("word " * 100)) <= 160


@pytest.mark.parametrize(("request_", "expected"), [
    ("Fetch the page web page URL and write prices.txt with the cheapest",
     ["Fetch the page web page URL", "write prices.txt with the cheapest"]),
    ("Read the file notes.md. Then add a line to it; keep the rest",
     ["Read the file notes.md", "Then add a line to it", "keep the rest"]),
    ("Download the page web page URL, save it as a.txt in the repository, and commit it to git",
     ["Download the page web page URL", "save it as a.txt in the repository", "commit it to git"]),
    ("What time is it in Tokyo?", []),  # one step: the whole request is the query
    ("Tom and Ann live in Oslo", []),  # too short a part is not a step
])
def test_a_request_splits_into_its_steps(request_, expected):
    assert clauses(request_) == expected


def test_an_answer_is_grounded_in_data_that_holds_a_value_it_gives():
    log = "Commit: 7148376\nAuthor: Robin Quill\nDate: 2026-12-02\nMessage: Initial commit"
    assert grounded_in("The author of the last commit is Robin Quill.", log, "Who committed last?")
    assert grounded_in("It was made on 2026-12-02.", log, "When?")
    assert not grounded_in("The author is unknown.", log, "Who committed last?")
    # A value the request already gave is not a sign of reading.
    assert not grounded_in("Robin Quill did.", log, "Did Robin Quill commit last?")
    assert not grounded_in("The commit failed.", log, "Who?")


def test_web_addresses_and_the_files_an_output_lists():
    from deskmate.app.agent.request import listed_files, web_addresses

    assert web_addresses("Get http://h:8/a.txt, then (see https://x.org/p?q=1). And "
                         "http://h:8/a.txt again.") == ["http://h:8/a.txt", "https://x.org/p?q=1"]
    output = ("--- /dev/null\n+++ b/Makefile\n[FILE] go.mod\n[DIR] src\n"
              "see notes.txt and the LICENSE")
    assert listed_files(output) == ["Makefile", "go.mod", "src", "notes.txt", "LICENSE"]


def test_a_step_the_request_rules_out():
    from deskmate.app.agent.request import ruled_out, tool_verb

    stage = "Append the line to settings.py and stage the change, but do not commit it."
    assert ruled_out(stage, tool_verb("git", "git_commit")) == "do not commit"
    assert ruled_out(stage, "add") == "" and ruled_out(stage, "append") == ""
    assert ruled_out("Stage it without committing.", "commit") == "without committing"
    assert ruled_out("Fix the typo; don't push yet", "push") == "don't push"
    assert ruled_out("Never delete anything.", tool_verb("files", "delete_file")) == "Never delete"
    # The verb has an object of its own: it says how, not which step to leave out.
    assert ruled_out("Write x.txt, do not add a trailing newline.", "add") == ""
    assert ruled_out("Commit the change.", "commit") == ""


def test_the_requests_files_by_the_names_it_gives_them():
    repo = "/w/repo"
    assert request_files(f"In the git repository at {repo}, count the lines of poem.txt, "
                         "write the number into LINES.txt, and commit it.") == RequestFiles(
        repo, (("poem.txt", f"{repo}/poem.txt"), ("LINES.txt", f"{repo}/LINES.txt")))
    # Files named by their paths: one folder holds both.
    assert request_files("/w/a/schedule.txt lists meetings; write /w/a/out/chicago.txt.") == (
        RequestFiles("/w/a", (("schedule.txt", "/w/a/schedule.txt"),
                              ("chicago.txt", "/w/a/out/chicago.txt"),
                              ("out/chicago.txt", "/w/a/out/chicago.txt"))))
    # Two folders that neither holds, a name two paths share, a name given bare beside
    # two folders (which one?), a file's name inside a web address: none is mapped.
    assert request_files("Copy /a/x.txt to /b/x.txt") == RequestFiles(None, ())
    assert request_files("Write report.txt in /ws/out/ from /ws/data.csv, as "
                         "https://x.org/notes.txt says.") == RequestFiles(
        "/ws", (("data.csv", "/ws/data.csv"),))
    assert request_files("What is 2/3 of 9? Write it to notes.txt.") is None
