"""What several verify.py files of this suite need: `from helpers import git, ...`.

The harness makes this file importable as ``helpers`` while each verify.py is loaded
(README.md, "The suite format").
"""

import json
import subprocess
from datetime import datetime
from zoneinfo import ZoneInfo


def git(workspace, *args):
    """The stripped output of ``git ARGS`` in the workspace; CalledProcessError on failure."""
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def memory_graph(workspace):
    """Entities (by name) and (from, relationType, to) relations of the memory server's file."""
    entities, relations = {}, []
    path = workspace / ".memory.jsonl"
    if not path.exists():
        return entities, relations
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") == "entity":
            entities[item["name"]] = item
        elif item.get("type") == "relation":
            relations.append((item["from"], item["relationType"], item["to"]))
    return entities, relations


def convert(hhmm, source, target):
    """HH:MM in source today (the time server's reading of 'today') as HH:MM in target."""
    today = datetime.now(ZoneInfo(source)).date()
    hour, minute = map(int, hhmm.split(":"))
    start = datetime(today.year, today.month, today.day, hour, minute, tzinfo=ZoneInfo(source))
    return start.astimezone(ZoneInfo(target)).strftime("%H:%M")
