from helpers import git, git_or_none


def verify(workspace, answer):
    """A third each: HEAD's .gitignore has the line *.log, the last commit's message, a
    clean tree."""
    shown = git_or_none(workspace, "show", "HEAD:.gitignore") or ""
    lines = [line.strip() for line in shown.splitlines()]
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        "*.log" in lines,
        message == "ignore log files",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
