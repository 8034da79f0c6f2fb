import re

from helpers import convert

ZONES = {"Ana": "America/Sao_Paulo", "Jonas": "Europe/Madrid", "Mei": "Asia/Singapore",
         "Raj": "Asia/Kolkata"}


def verify(workspace, answer):
    """The share of members whose line gives the right local time (9:30 for 09:30 is fine),
    less a member with two different times."""
    path = workspace / "standup-local.txt"
    if not path.is_file():
        return 0.0
    said = {}
    for line in path.read_text().splitlines():
        found = re.match(r"\W*([A-Za-z]+)\D*?(\d{1,2}):(\d{2})\b", line)
        if found:
            name = found.group(1).capitalize()
            said.setdefault(name, set()).add(f"{int(found.group(2)):02d}:{found.group(3)}")
    hits = sum(said.get(name) == {convert("09:30", "Asia/Singapore", zone)}
               for name, zone in ZONES.items())
    return hits / len(ZONES)
