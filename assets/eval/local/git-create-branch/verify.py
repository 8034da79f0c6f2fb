from helpers import git


def verify(workspace, answer):
    branches = git(workspace, "branch", "--format=%(refname:short)").split()
    current = git(workspace, "rev-parse", "--abbrev-ref", "HEAD")
    return (float("feature/login" in branches) + float(current == "main")) / 2
