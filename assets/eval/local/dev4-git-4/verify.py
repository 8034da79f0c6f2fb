import re
import tomllib
from pathlib import Path

from helpers import git, git_or_none

# Three Python files under src/ lack the header: cli.py gets it as its second line, below
# its #! line; station.py and units.py as their first. __init__.py has it already (a second
# one is a slip), py.typed is no Python file, and tests/ stays as it is. 3 files changed;
# slips: 4 (__init__.py again, or the test) or 5, the header above the #! line.
HEADER = "# SPDX-License-Identifier: MIT"
SHEBANG = ["src/weatherbox/cli.py"]
FIRST = ["src/weatherbox/station.py", "src/weatherbox/units.py"]
UNCHANGED = ["src/weatherbox/__init__.py", "src/weatherbox/py.typed", "tests/test_units.py",
             "README.md", "LICENSE"]
COUNT = 3
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5}


def _setup():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return task["setup"]["files"]


def _lines(text):
    """The lines without trailing spaces, and without blank lines at the end."""
    lines = [line.rstrip() for line in (text or "").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _headed(text, original, at):
    """``text`` is ``original`` with the header put in as line ``at`` (0 or 1), a blank line
    after it allowed."""
    old = _lines(original)
    return _lines(text) in ([*old[:at], HEADER, *old[at:]], [*old[:at], HEADER, "", *old[at:]])


def _count(answer):
    """The first count from 2 to 5 the answer gives, as digits or a word."""
    text = answer.lower()
    found = [(m.start(), int(m[1])) for m in
             re.finditer(r"(?<![\w.,:/-])([2-5])(?![\w:/-])(?![.,]\d)", text)]
    found += [(m.start(), n) for word, n in WORDS.items()
              for m in re.finditer(rf"\b{word}\b", text)]
    return min(found)[1] if found else None


def verify(workspace, answer):
    """A sixth each, on what HEAD holds: cli.py with the header right below its #! line;
    station.py and units.py with it as their first line (each otherwise unchanged);
    __init__.py, py.typed, the test and the rest unchanged; one commit on top of the first,
    with the message asked for; a clean tree; 3 as the count the answer gives first."""
    files = _setup()
    head = {rel: git_or_none(workspace, "show", f"HEAD:{rel}") for rel in files}
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        all(_headed(head[rel], files[rel], 1) for rel in SHEBANG),
        all(_headed(head[rel], files[rel], 0) for rel in FIRST),
        all(head[rel] is not None and _lines(head[rel]) == _lines(files[rel])
            for rel in UNCHANGED),
        git(workspace, "rev-list", "--count", "HEAD") == "2" and message == "add spdx headers",
        git(workspace, "status", "--porcelain") == "",
        _count(answer) == COUNT,
    ]
    return sum(checks) / len(checks)
