import re

from helpers import memory_graph

# Sam Ortiz and Liz Moreau merge into Samuel Ortiz and Elizabeth Moreau; Kate Byrne is not
# in the graph, so Katherine Byrne stays as she is and 2 entities are deleted.
SHORT = ("Sam Ortiz", "Liz Moreau", "Kate Byrne")
KEPT = ("Samuel Ortiz", "Elizabeth Moreau", "Katherine Byrne", "Fjord Labs", "Project Kelp")
NOTES = {
    "Samuel Ortiz": {"works at Fjord Labs as a data engineer", "based in Porto",
                     "plays the cello", "phone: +351 912 555 018"},
    "Elizabeth Moreau": {"product designer", "vegetarian"},
    "Katherine Byrne": {"head of finance"},
}
RELATIONS = {
    ("Samuel Ortiz", "works_at", "Fjord Labs"),
    ("Samuel Ortiz", "works_on", "Project Kelp"),
    ("Elizabeth Moreau", "works_on", "Project Kelp"),
    ("Elizabeth Moreau", "mentors", "Samuel Ortiz"),
    ("Katherine Byrne", "manages", "Elizabeth Moreau"),
    ("Katherine Byrne", "works_at", "Fjord Labs"),
}
TWO = r"(?<![\w.,/+-])(2|two)(?![\w/-])(?![.,]\d)"


def _kind(relation_type):
    return "_".join(str(relation_type).strip().lower().replace("-", " ").split())


def _notes(entity):
    return {" ".join(str(note).split()) for note in entity.get("observations", [])}


def verify(workspace, answer):
    """A sixth each: no short-name entity left (none made for Kate Byrne); the five other
    entities still there; Samuel Ortiz with his and Sam's observations; Elizabeth Moreau
    with hers and Liz's (Katherine Byrne's unchanged); exactly the relations the merge
    leaves (each short name's moved to the full name, nothing to or from a deleted one);
    2 (or "two") in the answer. "works at" is works_at."""
    entities, relations = memory_graph(workspace)
    relations = {(a, _kind(kind), b) for a, kind, b in relations}
    checks = [
        not any(name in entities for name in SHORT),
        all(name in entities for name in KEPT),
        _notes(entities.get("Samuel Ortiz", {})) >= NOTES["Samuel Ortiz"],
        _notes(entities.get("Elizabeth Moreau", {})) >= NOTES["Elizabeth Moreau"]
        and _notes(entities.get("Katherine Byrne", {})) == NOTES["Katherine Byrne"],
        relations == RELATIONS,
        re.search(TWO, answer.lower()) is not None,
    ]
    return sum(checks) / len(checks)
