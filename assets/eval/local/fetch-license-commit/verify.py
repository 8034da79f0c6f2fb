import subprocess


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


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
