import re
import tomllib
from pathlib import Path

from helpers import git, git_or_none

# Unreleased has an Added section and no Removed one: a minor release, 1.9.3 -> 1.10.0 (not
# 2.0.0, 1.9.4 or 1.10.3).
VERSION = "1.10.0"
HEADING = re.compile(r"##\s*\[?1\.10\.0\]?\s*(?:[-–—:]\s*|\(\s*)2026-03-02\s*\)?")
UNRELEASED = re.compile(r"##\s*\[?unreleased\]?", re.IGNORECASE)


def _lines(text):
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _original():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return _lines(task["setup"]["files"]["CHANGELOG.md"])


def _changelog(text):
    """(an empty "## Unreleased" heading right above "## 1.10.0 - 2026-03-02" where the old
    Unreleased heading was, every other line as it was): compared on non-blank lines, the
    new or renamed level-2 headings set aside for the second."""
    lines, old = _lines(text), _original()
    at = old.index("## Unreleased")
    headed = (len(lines) > at + 1 and UNRELEASED.fullmatch(lines[at]) is not None
              and HEADING.fullmatch(lines[at + 1]) is not None)
    releases = {line for line in old if line.startswith("## ") and line != old[at]}
    rest = [line for line in lines if not line.startswith("## ") or line in releases]
    return headed, rest == old[:at] + old[at + 1:]


def verify(workspace, answer):
    """A fifth each, on what HEAD holds: VERSION says 1.10.0; CHANGELOG.md has the old
    Unreleased heading renamed "## 1.10.0 - 2026-03-02" below a new, empty "## Unreleased";
    every other line of it unchanged; one commit on top of the first, "Release 1.10.0",
    changing both files; a clean tree."""
    version = git_or_none(workspace, "show", "HEAD:VERSION")
    headed, kept = _changelog(git_or_none(workspace, "show", "HEAD:CHANGELOG.md"))
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD")
    checks = [
        (version or "").strip() == VERSION,
        headed,
        kept,
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
        == f"release {VERSION}"
        and set((changed or "").split()) == {"VERSION", "CHANGELOG.md"},
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
