from helpers import git


def verify(workspace, answer):
    branches = git(workspace, "branch", "--list", "--format=%(refname:short)").splitlines()
    return float("feature/export-csv" in branches)
