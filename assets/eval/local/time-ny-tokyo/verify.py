from datetime import datetime
from zoneinfo import ZoneInfo


def convert(hhmm, source, target):
    """HH:MM in source today (the time server's reading of 'today') as HH:MM in target."""
    today = datetime.now(ZoneInfo(source)).date()
    hour, minute = map(int, hhmm.split(":"))
    start = datetime(today.year, today.month, today.day, hour, minute, tzinfo=ZoneInfo(source))
    return start.astimezone(ZoneInfo(target)).strftime("%H:%M")


def verify(workspace, answer):
    return float(convert("09:30", "America/New_York", "Asia/Tokyo") in answer)
