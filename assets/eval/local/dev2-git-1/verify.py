from helpers import git, git_or_none

BRANCH = "feature/csv-export"


def _commit(workspace, ref):
    return git_or_none(workspace, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")


def verify(workspace, answer):
    """A third each: the branch exists at main's commit, HEAD is on it, and main still has
    only its first commit with a clean tree."""
    main = _commit(workspace, "main")
    head = git_or_none(workspace, "symbolic-ref", "-q", "--short", "HEAD")
    checks = [
        main is not None and _commit(workspace, BRANCH) == main,
        head == BRANCH,
        main is not None and git(workspace, "rev-list", "--count", "main") == "1"
        and git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
