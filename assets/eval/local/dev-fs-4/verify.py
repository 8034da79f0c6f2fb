from helpers import json_object

EXPECTED = {"web": 3, "infra": 2, "mobile": 2, "billing": 0}


def verify(workspace, answer):
    """The share of teams with the right count (team names case-insensitive); a key that is
    no team counts as a miss."""
    data = json_object(workspace / "open-by-team.json")
    if data is None:
        return 0.0
    counts = {str(k).strip().lower(): v for k, v in data.items()}
    hits = sum(isinstance(counts.get(team), int | float) and not isinstance(counts[team], bool)
               and counts[team] == want for team, want in EXPECTED.items())
    extra = len(set(counts) - set(EXPECTED))
    return hits / (len(EXPECTED) + extra)
