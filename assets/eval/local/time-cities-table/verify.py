from helpers import convert


def verify(workspace, answer):
    path = workspace / "times.md"
    if not path.exists():
        return 0.0
    rows = [line for line in path.read_text().splitlines() if line.strip().startswith("|")]
    zones = ["Europe/Paris", "America/Sao_Paulo", "Asia/Singapore", "Australia/Sydney"]
    hits = 0
    for zone in zones:
        expected = convert("12:00", "UTC", zone)
        hits += any(zone in row and expected in row for row in rows)
    return hits / len(zones)
