import subprocess

from helpers import git


def verify(workspace, answer):
    """A third each: HEAD's .gitignore has the line *.log, the last commit's message, a
    clean tree."""
    shown = subprocess.run(["git", "show", "HEAD:.gitignore"], cwd=workspace,
                           capture_output=True, text=True)
    lines = [line.strip() for line in shown.stdout.splitlines()] if shown.returncode == 0 else []
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        "*.log" in lines,
        message == "ignore log files",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
