"""made_up_note: records given values that nothing the user or a tool said holds."""

from __future__ import annotations

from deskmate.app.agent.made_up import made_up_note, record_values


def test_only_short_worded_texts_inside_records_are_checked():
    arguments = {"path": "/w/notes.md", "content": "A summary nobody returned",
                 "names": ["Zed"], "rows": [{"id": 7, "when": "2025-01-02",
                                             "who": "Owen Price", "url": "http://x/y",
                                             "bio": "x" * 80, "tags": ["ops", "Oncall"]}]}
    assert list(record_values(arguments)) == ["Owen Price"]  # tags classify: not data


def test_a_value_with_a_word_the_data_holds_is_not_made_up():
    known = "## owen price\nsite reliability engineer\nstore them as person"
    records = {"entities": [{"name": "Owen Price", "entityType": "person",
                             "observations": ["Reliability engineer", "Team Lead"]}]}
    note = made_up_note("memory.create_entities", records, known, ["fetch.fetch"])
    assert note.startswith("Note: memory.create_entities was given 'Team Lead', found in")
    assert note.endswith("take them from what fetch.fetch returned.")
    # Nothing returned yet this turn: values from the model's own knowledge are fine.
    assert made_up_note("memory.create_entities", records, known, []) == ""
    records["entities"][0]["observations"] = ["Engineer"]
    assert made_up_note("memory.create_entities", records, known, ["fetch.fetch"]) == ""
