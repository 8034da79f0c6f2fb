from helpers import json_object

EXPECTED = {"dhl": 19.5, "ups": 11.5, "fedex": 20.0}


def verify(workspace, answer):
    """One check per carrier (its total within a cent); nothing for another carrier or
    a value that is not a number."""
    data = json_object(workspace / "delivered-kg.json")
    if data is None:
        return 0.0
    found = {}
    for key, value in data.items():
        if isinstance(value, str):
            try:
                value = float(value.lower().replace("kg", "").strip())
            except ValueError:
                return 0.0
        if isinstance(value, bool) or not isinstance(value, int | float):
            return 0.0
        found[str(key).strip().lower()] = value
    if set(found) - set(EXPECTED):
        return 0.0
    hits = sum(k in found and abs(found[k] - v) < 0.01 for k, v in EXPECTED.items())
    return hits / len(EXPECTED)
