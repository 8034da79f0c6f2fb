import re

# Weekdays (a Wednesday), from Mill Road: the 08:24 gets in at 08:43 but runs on school days
# only (S), and the schools are on holiday; the 08:20 arrives at 08:45, which is "by 08:45".
# The 08:00 express (X) does not stop at Mill Road. Slips: the school bus (08:24, 08:43); the
# 08:05 (08:28), as if 08:45 were too late; the Saturday table (07:57, 08:19); the 08:31.
DEPARTURE, ARRIVAL = 8 * 60 + 20, 8 * 60 + 45
# Every time in the Mill Road and the Central Station columns (the two sets share none)
MILL_ROAD = {"07:50", "08:05", "08:20", "08:24", "08:31", "07:57", "08:27", "08:57"}
CENTRAL = {"08:12", "08:28", "08:23", "08:45", "08:43", "08:56", "08:19", "08:49", "09:19"}
TIME = re.compile(r"(?<![\d:.])(\d{1,2})[:.h](\d{2})(?![\d:])\s*(a\.?m\.?|p\.?m\.?)?",
                  re.IGNORECASE)


def _minutes(hhmm):
    hour, minute = map(int, hhmm.split(":"))
    return hour * 60 + minute


def _times(answer):
    """The times of day the answer gives, in order, as minutes after midnight."""
    out = []
    for hour, minute, half in TIME.findall(answer):
        hour, minute = int(hour), int(minute)
        if half:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if half.lower().startswith("p") else 0)
        if hour < 24 and minute < 60:
            out.append(hour * 60 + minute)
    return out


def verify(workspace, answer):
    """Half for 08:20 as the first Mill Road time the answer gives (8:20, 8.20 am too), half
    for 08:45 as the first Central Station time it gives."""
    times = _times(answer)
    mill = [t for t in times if t in {_minutes(x) for x in MILL_ROAD}]
    central = [t for t in times if t in {_minutes(x) for x in CENTRAL}]
    return 0.5 * (mill[:1] == [DEPARTURE]) + 0.5 * (central[:1] == [ARRIVAL])
