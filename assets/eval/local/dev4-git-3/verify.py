import re
import tomllib
from pathlib import Path

from helpers import git, git_or_none

# APP_DB_URL, where it is not the start of APP_DB_URL_REPLICA, becomes DATABASE_URL in five
# files; deploy/reports.service names only the replica's variable and stays as it is, and so
# does every APP_DB_URL_REPLICA. Slips: the replica's variable renamed too (a plain search
# and replace: DATABASE_URL_REPLICA, reports.service changed); a file left out; no commit.
OLD = re.compile(r"\bAPP_DB_URL\b(?!_)")
CHANGED = ["ledgerly/config.py", "tests/test_config.py", "README.md", ".env.example",
           "deploy/web.service"]
UNCHANGED = ["deploy/reports.service", "ledgerly/__init__.py"]


def _setup():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return task["setup"]["files"]


def _lines(text):
    """The non-blank lines without their whitespace (a re-padded Markdown table is the same
    table), runs of dashes shortened."""
    out = []
    for line in (text or "").splitlines():
        line = re.sub(r"-{3,}", "---", re.sub(r"\s+", "", line))
        if line:
            out.append(line)
    return out


def _names(answer):
    """The files (of the seven) the answer names, by path or file name (README for
    README.md)."""
    text = answer.lower()
    named = set()
    for rel in CHANGED + UNCHANGED:
        name = rel.rsplit("/", 1)[-1].lower()
        name = re.escape(name).replace(r"\.md", r"(?:\.md)?")
        if re.search(rf"(?<![\w.-]){name}(?![\w-])", text):
            named.add(rel)
    return named


def verify(workspace, answer):
    """A fifth each, on what HEAD holds: the five files with APP_DB_URL renamed and nothing
    else changed; reports.service and __init__.py unchanged; one commit on top of the first,
    with the message asked for; a clean tree; the answer naming the five files and not
    reports.service."""
    files = _setup()
    renamed = all(_lines(git_or_none(workspace, "show", f"HEAD:{rel}"))
                  == _lines(OLD.sub("DATABASE_URL", files[rel])) for rel in CHANGED)
    kept = all(_lines(git_or_none(workspace, "show", f"HEAD:{rel}")) == _lines(files[rel])
               for rel in UNCHANGED)
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        renamed,
        kept,
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and message == "rename app_db_url to database_url",
        git(workspace, "status", "--porcelain") == "",
        _names(answer) == set(CHANGED),
    ]
    return sum(checks) / len(checks)
