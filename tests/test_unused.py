"""unused.py: names a cell assigns and never reads."""

from __future__ import annotations

from deskmate.app.agent.unused import unread_names, unused_note


def test_names_assigned_and_never_read():
    code = ("people = [{'name': 'A'}]\nfor person in people:\n    pass\n"
            "entities, _rest = [], []\nrelations = []\nprint(relations)\nbroken = (")
    assert unread_names(code) == []  # not Python: nothing is said
    code = code.removesuffix("\nbroken = (")
    assert unread_names(code) == ["person", "entities"]
    takers = {"entities": ["memory.create_entities(entities: list)"]}
    assert unused_note(code, lambda name: takers.get(name, [])) == (
        "Note: entities was made and not given to any call; "
        "memory.create_entities(entities: list) takes it.")
