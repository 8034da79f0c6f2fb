from datetime import datetime
from zoneinfo import ZoneInfo


def convert(hhmm, source, target):
    """HH:MM in source today (the time server's reading of 'today') as HH:MM in target."""
    today = datetime.now(ZoneInfo(source)).date()
    hour, minute = map(int, hhmm.split(":"))
    start = datetime(today.year, today.month, today.day, hour, minute, tzinfo=ZoneInfo(source))
    return start.astimezone(ZoneInfo(target)).strftime("%H:%M")


def verify(workspace, answer):
    path = workspace / "schedule-chicago.txt"
    if not path.exists():
        return 0.0
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    wanted = [
        (convert(t, "Europe/Berlin", "America/Chicago"), title)
        for t, title in (("08:00", "standup"), ("13:30", "design review"), ("17:15", "retro"))
    ]
    hits = sum(1 for line, (t, title) in zip(lines, wanted) if line.startswith(t) and title in line)
    return hits / len(wanted)
