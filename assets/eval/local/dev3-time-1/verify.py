import re

from helpers import convert

# Newfoundland is 3:30 (2:30 in summer) behind UTC and Nepal 5:45 ahead: 14:00 is 22:15 or
# 23:15 in Kathmandu. Whole-hour or half-hour rounding of either offset is off by 15 to 60
# minutes.
SOURCE, TARGET = "America/St_Johns", "Asia/Kathmandu"
TIME = re.compile(r"\b(\d{1,2})[:.h](\d{2})\s*(a\.?m\.?|p\.?m\.?)?(?!\d)", re.IGNORECASE)


def _minutes(hhmm):
    hour, minute = map(int, hhmm.split(":"))
    return hour * 60 + minute


def _times(answer):
    """The times of day the answer gives, as minutes after midnight (12-hour ones too)."""
    out = set()
    for hour, minute, half in TIME.findall(answer):
        hour, minute = int(hour), int(minute)
        if half:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if half.lower().startswith("p") else 0)
        if hour < 24 and minute < 60:
            out.add(hour * 60 + minute)
    return out


def verify(workspace, answer):
    """1.0 for today's 14:00 in St. John's as Kathmandu time in the answer; half of that
    when the answer also gives a time 15 to 60 minutes off it (a rounded offset)."""
    expected = _minutes(convert("14:00", SOURCE, TARGET))
    times = _times(answer)
    if expected not in times:
        return 0.0
    near = {(expected + delta) % 1440 for delta in (-60, -45, -30, -15, 15, 30, 45, 60)}
    return 0.5 if times & near else 1.0
