from helpers import json_object

# Spent: groceries 414.70, eating out 172.30, household 100.35; transport 112.50 and
# entertainment 60.99 stayed within budget.
EXPECTED = {"groceries": 14.70, "eating out": 22.30, "household": 0.35}


def _number(value):
    if isinstance(value, str):
        value = value.replace("€", "").replace("$", "").strip()
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def verify(workspace, answer):
    """The share of overspent categories with the right excess (within half a cent), out
    of those plus every other key written (a category within budget, a made-up one);
    category names case-insensitive, "eating_out" is "eating out"."""
    data = json_object(workspace / "over-budget.json")
    if data is None:
        return 0.0
    found = {}
    for key, value in data.items():
        name = " ".join(str(key).strip().lower().replace("_", " ").replace("-", " ").split())
        found[name] = _number(value)
    hits = sum(found.get(name) is not None and abs(found[name] - want) < 0.005
               for name, want in EXPECTED.items())
    extra = len(set(found) - set(EXPECTED))
    return hits / (len(EXPECTED) + extra)
