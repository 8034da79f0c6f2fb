import re

from helpers import memory_graph

CITIES = {"Ines Duarte": "berlin", "Tom Okafor": "berlin", "Jonas Weber": "munich",
          "Mei Lin": "singapore", "Ana Ruiz": "madrid"}
TEAMS = {"Ines Duarte": "data", "Tom Okafor": "platform", "Jonas Weber": "platform",
         "Mei Lin": "design", "Ana Ruiz": "sales"}


def _cities(entity):
    notes = [str(note).strip().lower() for note in entity.get("observations", [])]
    return {note.split(":", 1)[1].strip() for note in notes if note.startswith("city:")}


def _teams_kept(entity, team):
    notes = [str(note).strip().lower() for note in entity.get("observations", [])]
    return f"team: {team}" in notes


def verify(workspace, answer):
    """One check per person (exactly their current city, and their team kept), one for
    2 in the answer; the mean."""
    entities, _ = memory_graph(workspace)
    checks = []
    for name, city in CITIES.items():
        entity = entities.get(name)
        checks.append(entity is not None and _cities(entity) == {city}
                      and _teams_kept(entity, TEAMS[name]))
    checks.append(re.search(r"\b(2|two)\b", answer.lower()) is not None)
    return sum(checks) / len(checks)
