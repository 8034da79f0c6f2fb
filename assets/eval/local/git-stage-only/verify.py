from helpers import git


def verify(workspace, answer):
    staged = git(workspace, "diff", "--cached")
    checks = [
        "+DEBUG = False" in staged,
        git(workspace, "rev-list", "--count", "HEAD") == "1",
    ]
    return sum(checks) / len(checks)
