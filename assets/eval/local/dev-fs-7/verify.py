import csv

EXPECTED = {"billing": 7.0, "platform": 23 / 3, "support": 3.5}


def verify(workspace, answer):
    """A check for the header and one per team (its average within rounding to one
    decimal); nothing if a team is listed that does not exist."""
    path = workspace / "team-hours.csv"
    if not path.exists():
        return 0.0
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    if not lines:
        return 0.0
    rows = list(csv.reader(lines))
    header = [cell.strip().lower() for cell in rows[0]]
    found = {}
    for row in rows[1:]:
        if len(row) != 2:
            return 0.0
        try:
            found[row[0].strip().lower()] = float(row[1])
        except ValueError:
            return 0.0
    if set(found) - set(EXPECTED):
        return 0.0
    checks = [header == ["team", "avg_hours"]]
    checks += [team in found and abs(found[team] - want) <= 0.051
               for team, want in EXPECTED.items()]
    return sum(checks) / len(checks)
