import re
from datetime import datetime
from zoneinfo import ZoneInfo


def expected():
    """Adelaide's UTC offset less Lisbon's, now, in hours (a half hour always: 8.5, 9.5 or
    10.5 as their summer times come and go)."""
    now = datetime.now(ZoneInfo("UTC"))
    offset = (now.astimezone(ZoneInfo("Australia/Adelaide")).utcoffset()
              - now.astimezone(ZoneInfo("Europe/Lisbon")).utcoffset())
    return offset.total_seconds() / 3600


def said(text):
    """The hours a file says: 9.5, 9,5, +9.5 h, 9.5 hours, 9:30, 9h30, 9 hours 30 minutes;
    None for anything else."""
    text = " ".join(text.strip().lower().split())
    decimal = re.fullmatch(r"\+?(\d{1,2}(?:[.,]\d+)?)\s*(?:h|hrs?|hours?)?", text)
    if decimal:
        return float(decimal[1].replace(",", "."))
    parts = re.fullmatch(r"\+?(\d{1,2})\s*(?::|h|hrs?|hours?)\s*(?:and\s*)?(\d{1,2})\s*"
                         r"(?:m|mins?|minutes?)?", text)
    if parts and int(parts[2]) < 60:
        return int(parts[1]) + int(parts[2]) / 60
    return None


def verify(workspace, answer):
    """1.0 when ahead.txt says the hours Adelaide is ahead of Lisbon now, in any of the
    usual ways of writing 9.5 (see said)."""
    path = workspace / "ahead.txt"
    if not path.is_file():
        return 0.0
    hours = said(path.read_text())
    return float(hours is not None and abs(hours - expected()) < 1e-6)
