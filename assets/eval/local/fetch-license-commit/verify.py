import subprocess

from helpers import git


def verify(workspace, answer):
    try:
        committed = git(workspace, "show", "HEAD:LICENSE")
    except subprocess.CalledProcessError:
        return 0.0
    checks = [
        "Zero-Clause BSD" in committed,
        "Permission to use, copy, modify" in committed,
        git(workspace, "log", "-1", "--format=%s") == "Add license",
    ]
    return sum(checks) / len(checks)
