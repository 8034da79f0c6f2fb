from helpers import git


def verify(workspace, answer):
    committed = git(workspace, "show", "HEAD:timeutil.py")
    checks = [
        git(workspace, "log", "-1", "--format=%s") == "Rename parse_date",
        "def parse_iso_date(" in committed,
        "parse_date(" not in committed.replace("parse_iso_date(", ""),
    ]
    return sum(checks) / len(checks)
