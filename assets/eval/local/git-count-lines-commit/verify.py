from helpers import git


def verify(workspace, answer):
    """A third each: the last commit's message, LINES.txt in it holding 6, a clean tree."""
    try:
        lines = git(workspace, "show", "HEAD:LINES.txt")
    except Exception:
        lines = ""
    checks = [
        git(workspace, "log", "-1", "--format=%s") == "Count lines",
        lines.strip() == "6",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
