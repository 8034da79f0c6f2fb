import re
import tomllib
from pathlib import Path

# web and admin both publish 8080; 8081 (api) and 8082 (metrics) are taken, so admin moves
# to 8083, its container port 3000 kept.
CLASH = '- "8080:3000"'
FIXED = re.compile(r"""-\s*(["']?)8083:3000\1""")


def _lines(text):
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def _original():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return _lines(task["setup"]["files"]["docker-compose.yml"])


def _fixed(text):
    """Every line as it was (any indentation, blank lines aside) except admin's port
    mapping, now 8083:3000 (quoted or not)."""
    lines, original = _lines(text), _original()
    if len(lines) != len(original):
        return False
    return all(bool(FIXED.fullmatch(line)) if old == CLASH else line == old
               for line, old in zip(lines, original, strict=True))


def verify(workspace, answer):
    """Two thirds for the file with admin on host port 8083 and nothing else changed; a third
    for an answer that names web, admin and the port 8080."""
    path = workspace / "docker-compose.yml"
    fixed = path.is_file() and _fixed(path.read_text())
    text = answer.lower()
    told = all(re.search(rf"\b{word}\b", text) for word in ("web", "admin", "8080"))
    return (2 * fixed + told) / 3
