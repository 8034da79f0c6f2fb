from helpers import git


def verify(workspace, answer):
    """A quarter each: old_deploy.sh gone from the last commit, the other files still in
    it, the commit's message, a clean tree."""
    files = git(workspace, "ls-tree", "--name-only", "HEAD").splitlines()
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        "old_deploy.sh" not in files,
        {"deploy.sh", "README.md"} <= set(files),
        message == "remove old deploy script",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
