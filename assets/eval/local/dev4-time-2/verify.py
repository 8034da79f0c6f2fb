import csv
import io
import re
import tomllib
import unicodedata
from pathlib import Path

from helpers import convert

# Today's local times in UTC: Colombo 17:00 (+5:30: on time, exactly at the deadline), Buenos
# Aires 17:20 (-3: 20 min late), London 15:45 or 16:45, Tokyo 14:50, Kathmandu 17:05 (+5:45:
# 5 min late), Dubai 16:58, Chicago 15:30 or 16:30, Nairobi 17:12 (12 min late). Whatever the
# day, Buenos Aires, Kathmandu and Nairobi are the late ones. Slips: Colombo listed (0 min);
# Kathmandu at +5:30 (20 min) or +6 (on time); Buenos Aires's offset added the wrong way.
DEADLINE = 17 * 60


def _plain(text):
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def _offices():
    """[(office, minutes after the deadline, negative when on time)] in the CSV's order."""
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    rows = csv.DictReader(io.StringIO(task["setup"]["files"]["submissions.csv"]))
    out = []
    for row in rows:
        hour, minute = map(int, convert(row["submitted_local"], row["time_zone"], "UTC")
                           .split(":"))
        out.append((row["office"], hour * 60 + minute - DEADLINE))
    return out


def _listed(path, offices):
    """[(office, minutes)] of the file's lines, in order: the office a line names and the
    first whole number after its name (None without one)."""
    out = []
    for line in _plain(path.read_text()).splitlines():
        for office in offices:
            match = re.search(rf"\b{_plain(office)}\b", line)
            if match:
                number = re.search(r"(?<![\d.:])\d+(?![\d:])", line[match.end():])
                out.append((office, int(number[0]) if number else None))
                break
    return out


def verify(workspace, answer):
    """The mean of nine checks on late.txt: each late office listed with its minutes late,
    each office on time not listed (5 + 3 late ones); the late ones in the CSV's order."""
    path = workspace / "late.txt"
    if not path.is_file():
        return 0.0
    offices = _offices()
    listed = _listed(path, [office for office, _ in offices])
    minutes = dict(listed)
    late = [office for office, delay in offices if delay > 0]
    checks = [minutes.get(office) == delay if delay > 0 else office not in minutes
              for office, delay in offices]
    checks.append(len(minutes) == len(listed) and [o for o, _ in listed if o in late] == late)
    return sum(checks) / len(checks)
