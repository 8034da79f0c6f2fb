"""What several verify.py files of this suite need: `from helpers import git, ...`.

The harness makes this file importable as ``helpers`` while each verify.py is loaded
(README.md, "The suite format").
"""

import json
import re
import subprocess
from datetime import datetime
from zoneinfo import ZoneInfo


def git(workspace, *args):
    """The stripped output of ``git ARGS`` in the workspace; CalledProcessError on failure."""
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def git_or_none(workspace, *args):
    """The stripped output of ``git ARGS``, or None where git fails (no such commit, file
    or branch): what a verifier checks for, where ``git`` would raise."""
    done = subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def json_object(path):
    """The JSON object a file holds, or None (no file, not JSON, not an object)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


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


def people_in_memory(workspace, roles):
    """Of each {name: role}: 1/2 for an entity by that name, 1/2 more if its observations
    mention the role (case-insensitively); the mean over the people."""
    entities, _ = memory_graph(workspace)
    score = 0.0
    for name, role in roles.items():
        entity = entities.get(name)
        if entity is not None:
            notes = " ".join(entity.get("observations", [])).lower()
            score += 0.5 + 0.5 * float(role in notes)
    return score / len(roles)


def named_nearest(answer, names, word):
    """Which of ``names`` (lowercase) the answer gives for ``word`` (a pattern: "most",
    "highest|top|best"): in its first sentence with that word, the name nearest to it;
    without one, the one name it gives at all; None for none or several."""
    text = answer.lower()
    for sentence in re.split(r"[.\n;!?]+(?:\s|$)", text):
        words = [m.start() for m in re.finditer(rf"\b(?:{word})\b", sentence)]
        named = [(abs(m.start() - at), name) for name in names
                 for m in re.finditer(rf"\b{name}\b", sentence) for at in words]
        if named:
            return min(named)[1]
    named = {name for name in names if re.search(rf"\b{name}\b", text)}
    return named.pop() if len(named) == 1 else None
