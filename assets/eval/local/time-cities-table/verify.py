from datetime import datetime
from zoneinfo import ZoneInfo


def convert(hhmm, source, target):
    """HH:MM in source today (the time server's reading of 'today') as HH:MM in target."""
    today = datetime.now(ZoneInfo(source)).date()
    hour, minute = map(int, hhmm.split(":"))
    start = datetime(today.year, today.month, today.day, hour, minute, tzinfo=ZoneInfo(source))
    return start.astimezone(ZoneInfo(target)).strftime("%H:%M")


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
