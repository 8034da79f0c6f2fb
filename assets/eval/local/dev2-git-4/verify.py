from helpers import git, git_or_none

SORTED = ["black==24.4.2", "click==8.1.7", "Flask==3.0.3", "pytest==8.2.0",
          "requests==2.32.3", "SQLAlchemy==2.0.30"]


def verify(workspace, answer):
    """A third each: HEAD's requirements.txt holds the same six lines in case-insensitive
    order (blank lines and surrounding spaces aside), the last commit's message, a clean
    tree."""
    shown = git_or_none(workspace, "show", "HEAD:requirements.txt")
    lines = [line.strip() for line in (shown or "").splitlines() if line.strip()]
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        lines == SORTED,
        message == "sort requirements",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
