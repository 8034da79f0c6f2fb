"""turn_record.py: what a turn's calls leave for the loop's checks and the notes."""

from __future__ import annotations

from deskmate.app.agent.turn_record import REPEAT_LIMIT, TurnRecord
from deskmate.tools.catalog import Catalog
from deskmate.tools.signatures import signature
from deskmate.tools.spec import ToolSpec


def _tools():
    entities = {"type": "object", "properties": {"entities": {"type": "array"}},
                "required": ["entities"]}
    query = {"type": "object", "properties": {"query": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("memory", "create_entities", "Create.", entities),
                                  ToolSpec("memory", "search_nodes", "Search.", query),
                                  ToolSpec("notes", "create_entities", "Other.", entities)])
    return {(spec.server, signature(spec).name): (spec, signature(spec)) for spec in catalog}


def test_calls_changes_and_the_paths_changed():
    turn = TurnRecord()
    turn.ran("filesystem", "write_file", {"path": "/w/a.md", "content": "# A"})
    turn.changed_by({"path": "/w/a.md", "content": "# A"})
    turn.ran("git", "git_status", {"repo_path": "/w"})
    assert turn.calls == 2 and turn.changes == 1 and turn.changed == ["/w/a.md"]
    assert turn.called == [("filesystem", "write_file"), ("git", "git_status")]
    assert '"/w/a.md"' in turn.sent[0]


def test_identical_calls_past_the_limit_are_a_repeat():
    turn = TurnRecord()
    flags = [turn.repeated("git", "git_log", {"max_count": 1}) for _ in range(REPEAT_LIMIT + 1)]
    assert flags == [False] * REPEAT_LIMIT + [True]
    assert not turn.repeated("git", "git_log", {"max_count": 2})
    turn.new_step()  # eager mode: the same call over the turn's steps is the loop
    assert turn.repeated("git", "git_log", {"max_count": 1})


def test_code_mode_counts_identical_calls_within_a_step():
    # Each cell reads again what it uses: a fourth cell's read is not a runaway loop.
    turn = TurnRecord(per_step=True)
    for _ in range(REPEAT_LIMIT):
        assert not any(turn.repeated("fs", "read", {"path": "/a"}) for _ in range(REPEAT_LIMIT))
        turn.new_step()
    flags = [turn.repeated("fs", "read", {"path": "/a"}) for _ in range(REPEAT_LIMIT + 1)]
    assert flags == [False] * REPEAT_LIMIT + [True]


def test_results_are_kept_for_the_step_and_their_text_for_the_turn():
    turn = TurnRecord()
    turn.result("fetch.fetch", "Team: Owen Price", "Team: Owen Price", "")
    turn.result("memory.search_nodes", {"entities": []}, '{"entities": []}', "Note: empty")
    assert [r.call for r in turn.returned] == ["fetch.fetch", "memory.search_nodes"]
    assert turn.sources == ["fetch.fetch"] and turn.results == ["Team: Owen Price"]  # as written
    turn.new_step()
    assert turn.returned == [] and turn.sources == ["fetch.fetch"]


def test_records_made_up_after_a_read_get_one_note_a_step():
    turn = TurnRecord()
    made_up = {"entities": [{"name": "Alice Stone", "entityType": "person"}]}
    assert turn.made_up("memory.create_entities", made_up, 1, lambda: "") == ""  # no read
    turn.result("fetch.fetch", "Team: Owen Price", "Team: Owen Price", "")
    said = lambda: "Store the team from the page."  # noqa: E731
    note = turn.made_up("memory.create_entities", made_up, 1, said)
    assert "Alice Stone" in note
    assert turn.made_up("memory.create_entities", made_up, 1, said) == ""  # once a step
    copied = {"entities": [{"name": "Owen Price", "entityType": "person"}]}
    assert turn.made_up("memory.create_entities", copied, 2, said) == ""


def test_takers_are_tools_of_the_servers_used_that_were_not_called():
    tools, turn = _tools(), TurnRecord()
    assert turn.takers("entities", tools) == []  # no server used yet
    turn.ran("memory", "search_nodes", {"query": "Ada"})
    assert turn.takers("entities", tools) == ["memory.create_entities(entities: list)"]
    turn.ran("memory", "create_entities", {"entities": []})
    assert turn.takers("entities", tools) == []
