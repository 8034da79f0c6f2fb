import json
import tomllib
from pathlib import Path

from helpers import memory_graph

# The active rows: Alto Roasters supplies two products; CupCo and Bean Bros are inactive.
COUNTRY = {"Alto Roasters": "italy", "Nordic Oats": "sweden", "GreenPack": "netherlands",
           "Maison Beurre": "france"}
SUPPLIES = [("Alto Roasters", "Espresso beans"), ("Alto Roasters", "Decaf beans"),
            ("Nordic Oats", "Oat milk"), ("GreenPack", "Paper cups"),
            ("Maison Beurre", "Croissants")]
INACTIVE = ("CupCo", "Bean Bros")


def _setup_entities():
    """{name: observations} of the entities the task starts with."""
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    items = [json.loads(line) for line in task["setup"]["files"][".memory.jsonl"].splitlines()
             if line.strip()]
    return {item["name"]: item["observations"] for item in items}


def _relation(relations, source, target):
    """A "supplies" relation (any case, spaces or underscores) from source to target."""
    return any(a == source and b == target and kind.strip().lower().replace(" ", "_")
               == "supplies" for a, kind, b in relations)


def verify(workspace, answer):
    """The mean of eleven checks: each active supplier an entity of type supplier with its
    country in an observation "country: ..." (4); each of their supplies relations (5); no
    inactive supplier in the graph, as an entity or in a relation; the products and Mia
    Torres still there with their observations."""
    entities, relations = memory_graph(workspace)
    checks = []
    for name, country in COUNTRY.items():
        entity = entities.get(name, {})
        notes = [str(note).lower() for note in entity.get("observations", [])]
        checks.append(str(entity.get("entityType", "")).lower() == "supplier"
                      and any("country" in note and country in note for note in notes))
    checks += [_relation(relations, source, target) for source, target in SUPPLIES]
    names = {name.lower() for name in entities} | {name.lower() for a, _, b in relations
                                                   for name in (a, b)}
    checks.append(not any(name.lower() in names for name in INACTIVE))
    checks.append(all(sorted(entities.get(name, {}).get("observations", [])) == sorted(notes)
                      for name, notes in _setup_entities().items()))
    return sum(checks) / len(checks)
