from helpers import git


def verify(workspace, answer):
    checks = [
        git(workspace, "log", "-1", "--format=%s") == "Add changelog",
        "## 0.2.0" in git(workspace, "show", "HEAD:CHANGELOG.md"),
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
