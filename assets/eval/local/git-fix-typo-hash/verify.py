import subprocess


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def verify(workspace, answer):
    head = git(workspace, "rev-parse", "HEAD")
    committed = git(workspace, "show", "HEAD:mail.py")
    checks = [
        git(workspace, "rev-list", "--count", "HEAD") == "2",
        "recieve" not in committed.lower() and "receive" in committed.lower(),
        head[:7] in answer,
    ]
    return sum(checks) / len(checks)
