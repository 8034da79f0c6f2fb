from helpers import git


def verify(workspace, answer):
    try:
        committed = git(workspace, "show", "HEAD:todo-count.txt").strip()
    except Exception:
        committed = ""
    checks = [
        committed == "3",
        git(workspace, "log", "-1", "--format=%s") == "Record TODO count",
    ]
    return sum(checks) / len(checks)
