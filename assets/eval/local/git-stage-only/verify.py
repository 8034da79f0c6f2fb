import subprocess


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def verify(workspace, answer):
    staged = git(workspace, "diff", "--cached")
    checks = [
        "+DEBUG = False" in staged,
        git(workspace, "rev-list", "--count", "HEAD") == "1",
    ]
    return sum(checks) / len(checks)
