from helpers import git


def verify(workspace, answer):
    checks = [
        git(workspace, "show", "HEAD:version.txt").strip() == "1.4.3",
        git(workspace, "log", "-1", "--format=%s") == "Bump version to 1.4.3",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
