from helpers import convert


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
