import subprocess

from helpers import git


def verify(workspace, answer):
    try:
        recorded = git(workspace, "show", "HEAD:LAST_COMMIT.txt")
    except subprocess.CalledProcessError:
        return 0.0
    checks = [
        recorded.strip() == "Initial commit",
        git(workspace, "log", "-1", "--format=%s") == "Record last commit",
    ]
    return sum(checks) / len(checks)
