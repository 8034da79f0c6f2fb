import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from helpers import convert

ZONE = "America/New_York"


def _next_day(hhmm):
    """HH:MM tomorrow in New York, in UTC: the end, read as on the day it happens."""
    day = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=1)
    hour, minute = map(int, hhmm.split(":"))
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo(ZONE))
    return moment.astimezone(ZoneInfo("UTC")).strftime("%H:%M")


def expected():
    """(start, end) in UTC: 22:30 and 01:15 New York time (02:30-05:15 in New York's
    summer, 03:30-06:15 in its winter). The end converted as today's, as the time server
    does, or tomorrow's: they differ only across a change of clocks."""
    return convert("22:30", ZONE, "UTC"), {convert("01:15", ZONE, "UTC"), _next_day("01:15")}


def verify(workspace, answer):
    """Half each for the start and the end in UTC, when maintenance-utc.txt names exactly
    two times (2:30 for 02:30 too), start first."""
    path = workspace / "maintenance-utc.txt"
    if not path.is_file():
        return 0.0
    times = [f"{int(h):02d}:{m}" for h, m in re.findall(r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)",
                                                       path.read_text())]
    if len(times) != 2:
        return 0.0
    start, ends = expected()
    return 0.5 * (times[0] == start) + 0.5 * (times[1] in ends)
