import re

from helpers import git, git_or_none

# The Makefile as it should be: line 12, the coverage recipe's first line, indented with a
# tab instead of four spaces; every other line as it was.
FIXED = [
    "PYTHON ?= python3",
    "",
    ".PHONY: build test coverage clean",
    "",
    "build:",
    "\t$(PYTHON) -m build",
    "",
    "test:",
    "\t$(PYTHON) -m pytest -q",
    "",
    "coverage:",
    "\t$(PYTHON) -m pytest --cov=tidewatch --cov-report=term",
    "\t@echo \"coverage report written\"",
    "",
    "clean:",
    "\trm -rf dist build .coverage",
]


def _lines(text):
    """The file's lines without trailing spaces, and without blank lines at its end."""
    lines = [line.rstrip() for line in (text or "").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def verify(workspace, answer):
    """A fifth each: HEAD's Makefile fixed (the recipe line tab-indented, nothing else
    changed); HEAD a second commit that changes only the Makefile; its message; a clean
    tree; the coverage target named in the answer."""
    makefile = git_or_none(workspace, "show", "HEAD:Makefile")
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r",
                          "HEAD") or ""
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        makefile is not None and _lines(makefile) == FIXED,
        git(workspace, "rev-list", "--count", "HEAD") == "2" and changed.split() == ["Makefile"],
        message == "fix makefile indentation",
        git(workspace, "status", "--porcelain") == "",
        re.search(r"\bcoverage\b", answer.lower()) is not None,
    ]
    return sum(checks) / len(checks)
