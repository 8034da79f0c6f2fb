import re

from helpers import json_object

GERMAN = {
    "app.title": "Gezeitentabellen",
    "menu.about": "Über",
    "menu.settings": "Einstellungen",
    "station.nearby": "Stationen in deiner Nähe",
    "station.search": "Stationen suchen",
    "tide.low": "Niedrigwasser",
    "tide.high": "Hochwasser",
    "units.feet": "Fuß",
    "units.metres": "Meter",
}
MISSING, PLACEHOLDER = "station.favourite", "Add to favourites"


def verify(workspace, answer):
    """A quarter each: de.json a JSON object with exactly en.json's keys (the missing one
    added, nothing else), the added key holding the English text, the other nine German
    texts unchanged, the key station.favourite named in the answer."""
    data = json_object(workspace / "locales" / "de.json") or {}
    named = re.search(rf"(?<![\w.]){re.escape(MISSING)}(?![\w])", answer.lower())
    checks = [
        set(data) == {*GERMAN, MISSING},
        str(data.get(MISSING, "")).strip() == PLACEHOLDER,
        all(data.get(key) == text for key, text in GERMAN.items()),
        named is not None,
    ]
    return sum(checks) / len(checks)
