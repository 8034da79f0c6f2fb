import re

from helpers import convert

FLIGHT_MINUTES = 8 * 60 + 5


def expected():
    """Departure in New York time plus the flight time (it leaves after 02:00 New York
    time and lands the same day there, so no clock change falls inside it)."""
    hour, minute = map(int, convert("10:20", "Europe/Lisbon", "America/New_York").split(":"))
    total = (hour * 60 + minute + FLIGHT_MINUTES) % (24 * 60)
    return f"{total // 60:02d}:{total % 60:02d}"


def verify(workspace, answer):
    path = workspace / "landing.txt"
    if not path.exists():
        return 0.0
    found = re.fullmatch(r"(\d{1,2}):(\d{2})", path.read_text().strip())
    if not found:
        return 0.0
    return float(f"{int(found[1]):02d}:{found[2]}" == expected())
