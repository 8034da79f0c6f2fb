"""The note after a cell that came to nothing: what the tools returned that it never
printed (app/agent/unprinted.py)."""

from __future__ import annotations

from deskmate.app.agent.unprinted import NOTE, PREVIEW_CHARS, Returned, unprinted


def table(rows: int) -> str:
    return "| Name | Day |\n" + "".join(f"| Person {i} | Sunday |\n" for i in range(rows))


def test_a_short_result_is_shown_whole():
    page = table(30)  # ~660 characters: cut at 300, the later rows were never seen
    assert PREVIEW_CHARS < len(page) < 1_200
    note = unprinted([Returned("fetch.fetch", page)], shown="[]")
    assert note.startswith(NOTE) and page in note and "…" not in note


def test_a_long_result_is_cut_with_its_start():
    page = table(100)
    note = unprinted([Returned("fetch.fetch", page)], shown="")
    assert page[:PREVIEW_CHARS] + "…" in note and page not in note


def test_results_shown_whole_stay_within_the_note_budget():
    first, second = table(50), "x" * 1_100  # each short enough alone, not both
    note = unprinted([Returned("fs.read", first), Returned("git.log", second)], shown="")
    assert first in note and second[:PREVIEW_CHARS] + "…" in note and second not in note


def test_a_dict_cut_short_is_named_by_its_keys_and_a_short_one_shown_whole():
    graph = {"entities": [{"name": f"E{i}", "type": "person"} for i in range(60)],
             "relations": [{"from": "E1", "to": "E2"}]}
    note = unprinted([Returned("memory.read_graph", graph)], shown="")
    assert "its keys: 'entities': a list of 60 dicts" in note and "'relations'" in note
    small = {"entities": [{"name": "Ada"}], "relations": []}
    note = unprinted([Returned("memory.read_graph", small)], shown="")
    assert repr(small) in note and "its keys" not in note
