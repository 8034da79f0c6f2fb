from helpers import json_object

EXPECTED = {"books": 25, "games": 65, "music": 15}


def verify(workspace, answer):
    data = json_object(workspace / "totals.json")
    if data is None:
        return 0.0
    hits = sum(isinstance(data.get(k), int | float) and data[k] == v for k, v in EXPECTED.items())
    return hits / len(EXPECTED)
