from helpers import git


def verify(workspace, answer):
    head = git(workspace, "rev-parse", "HEAD")
    committed = git(workspace, "show", "HEAD:mail.py")
    checks = [
        git(workspace, "rev-list", "--count", "HEAD") == "2",
        "recieve" not in committed.lower() and "receive" in committed.lower(),
        head[:7] in answer,
    ]
    return sum(checks) / len(checks)
