import subprocess

from helpers import git

BRANCH = "feature/csv-export"


def _commit(workspace, ref):
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"],
                          cwd=workspace, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def verify(workspace, answer):
    """A third each: the branch exists at main's commit, HEAD is on it, and main still has
    only its first commit with a clean tree."""
    main = _commit(workspace, "main")
    head = subprocess.run(["git", "symbolic-ref", "-q", "--short", "HEAD"], cwd=workspace,
                          capture_output=True, text=True).stdout.strip()
    checks = [
        main is not None and _commit(workspace, BRANCH) == main,
        head == BRANCH,
        main is not None and git(workspace, "rev-list", "--count", "main") == "1"
        and git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
