import re

from helpers import git, git_or_none


def _committed(workspace, rel):
    return git_or_none(workspace, "show", f"HEAD:{rel}") or ""


def verify(workspace, answer):
    """A fifth each: HEAD's __init__.py says 2.3.1 (and keeps its docstring), HEAD's
    pyproject.toml still says 2.3.1, the last commit's message, a clean tree, the old
    version 2.2.9 in the answer."""
    init = _committed(workspace, "src/tally/__init__.py")
    project = _committed(workspace, "pyproject.toml")
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        bool(re.search(r"""^__version__\s*=\s*["']2\.3\.1["']\s*$""", init, re.M))
        and "Tally: count things in text files." in init,
        bool(re.search(r'^version\s*=\s*"2\.3\.1"\s*$', project, re.M)),
        message == "sync version",
        git(workspace, "status", "--porcelain") == "",
        "2.2.9" in answer,
    ]
    return sum(checks) / len(checks)
