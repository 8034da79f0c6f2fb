"""A delete of records that nothing in the turn has read is refused once, with the
server's tools that read (app/agent/blind_delete.py); through the code-mode loop with the
real MCP memory server, which says success for a delete that matches nothing."""

from __future__ import annotations

import json

import pytest
from conftest import run_scripted

from deskmate.app.agent import events as ev
from deskmate.app.agent.blind_delete import deletes_records
from deskmate.tools.hub import Hub, ServerConfig

COFFEE = "orders an oat flat white every morning"


def test_a_delete_by_records_not_by_name():
    relation = [{"from": "Jonah Price", "to": "coffee", "relationType": "orders"}]
    assert deletes_records("delete_relations", {"relations": relation})
    assert deletes_records("deleteObservations", {"deletions": [{"entityName": "J"}]})
    assert not deletes_records("delete_entities", {"entityNames": ["Jonah Price"]})
    assert not deletes_records("create_relations", {"relations": relation})


@pytest.fixture()
def memory_hub(tmp_path, mcp_bin):
    """(hub, graph file): the real memory server over a graph with Jonah Price."""
    graph = tmp_path / "memory.jsonl"
    graph.write_text(json.dumps({"type": "entity", "name": "Jonah Price", "entityType": "person",
                                 "observations": ["works at the bakery", COFFEE]}) + "\n")
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    server = ServerConfig("memory", command=str(npm / "mcp-server-memory"),
                          env={"MEMORY_FILE_PATH": str(graph)})
    with Hub([server], tmp_path) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub, graph


def outputs(events) -> list[str]:
    return [e.content for e in events if isinstance(e, ev.Observation)]


TASK = "Jonah Price has given up coffee. Remove the note about his coffee order."


def test_a_guessed_delete_is_refused_and_names_the_readers_then_runs_as_told(memory_hub):
    hub, graph = memory_hub
    guess = ("print(memory.delete_relations(relations=[{'from': 'Jonah Price', "
             "'to': 'coffee order', 'relationType': 'has'}]))")
    events = run_scripted(hub, [f"```python\n{guess}\n```",
                                f"```python\n{guess}\n```", "Final answer: -"], TASK)
    refused, again = outputs(events)[:2]
    assert ("memory.delete_relations was not run: it deletes the records it is given only "
            "where they match exactly, and nothing this turn has read them") in refused
    assert "memory.open_nodes(names: list[str])" in refused
    assert "Relations deleted successfully" in again  # made again: the model's call
    assert COFFEE in graph.read_text()


def test_a_delete_after_a_read_runs_and_removes_what_was_read(memory_hub):
    hub, graph = memory_hub
    cell = ("node = memory.open_nodes(names=['Jonah Price'])\n"
            "note = [o for o in node['entities'][0]['observations'] if 'white' in o]\n"
            "print(memory.delete_observations(deletions=[{'entityName': 'Jonah Price', "
            "'observations': note}]))")
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: -"], TASK)
    assert "was not run" not in outputs(events)[0]
    assert COFFEE not in graph.read_text() and "works at the bakery" in graph.read_text()
