"""A CSV header's column name passed to a tool as a value: the hint that says to skip the
header row, on its own and through the code-mode loop with a real MCP server."""

from __future__ import annotations

import pytest
from conftest import run_scripted, toy_server

from deskmate.app.agent import events as ev
from deskmate.app.agent.header_rows import header_hint, header_rows
from deskmate.tools.hub import Hub

LOOK = ("filesystem.read_text_file(path='/w/team.csv'):\n"
        "name,timezone\nAna,America/Sao_Paulo\nMei,Asia/Singapore\n")


def test_a_blocks_first_line_of_column_names_is_its_header():
    assert header_rows([LOOK]) == [("name", "timezone")]
    assert header_rows(["id,team,status\n101,web,open\n"]) == [("id", "team", "status")]
    # Column names alone give no header: its rows could be names too.
    assert header_rows(["name,team\nAna,web\nBo,infra\n"]) == []
    # Prose with a comma, a single column, a line with no line after it.
    assert header_rows(["Daily standup: 09:30, Asia/Singapore\n", "total\n3\n",
                        "name,timezone"]) == []


def test_a_column_name_given_as_a_value_gets_the_hint():
    hint = header_hint({"source_timezone": "timezone", "time": "09:30"}, ["", LOOK])
    assert hint.startswith("\nHint: source_timezone='timezone' is a column name")
    assert "'name,timezone' is the CSV's header" in hint and "lines[1:]" in hint
    # A record's value, or a text never shown, is not a column name.
    assert header_hint({"source_timezone": "Asia/Singapore"}, [LOOK]) == ""
    assert header_hint({"source_timezone": "timezone"}, ["no table here"]) == ""
    assert header_hint({"count": 3}, [LOOK]) == ""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    with Hub([toy_server(call_timeout=5)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready"
        yield hub


def test_a_loop_over_every_line_is_told_the_first_is_the_header(hub):
    cell = ("text = toy.echo(text='name,count\\nAna,3\\nBo,4')\n"
            "for line in text.split('\\n'):\n"
            "    name, count = line.split(',')\n"
            "    print(name, toy.add(a=count, b=1))")
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: done",
                                "Final answer: done"], "Add one to each count.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "Hint: a='count' is a column name" in output
    assert "'name,count' is the CSV's header, not a record" in output
