import subprocess


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def verify(workspace, answer):
    branches = git(workspace, "branch", "--format=%(refname:short)").split()
    current = git(workspace, "rev-parse", "--abbrev-ref", "HEAD")
    return (float("feature/login" in branches) + float(current == "main")) / 2
