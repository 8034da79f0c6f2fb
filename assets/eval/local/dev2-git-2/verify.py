import subprocess

from helpers import git, git_or_none

REFERENCE = """code,berth,max_draft_m
N1,North quay,7.5
N2,North quay,6.8
S1,South pier,9.2"""


def _ignored(workspace, rel):
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", rel], cwd=workspace,
                          capture_output=True).returncode == 0


def verify(workspace, answer):
    """A fifth each: HEAD has data/reference.csv as it was; no other CSV committed and the
    exports (the one there and a next month's) still ignored; the last commit's message; a
    clean tree; the pattern *.csv in the answer."""
    reference = git_or_none(workspace, "show", "HEAD:data/reference.csv")
    tracked = git(workspace, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    checks = [
        reference == REFERENCE,
        [rel for rel in tracked if rel.endswith(".csv")] == ["data/reference.csv"]
        and _ignored(workspace, "data/export-2025-06.csv")
        and _ignored(workspace, "data/export-2025-07.csv"),
        git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
        == "track reference data",
        git(workspace, "status", "--porcelain") == "",
        "*.csv" in answer,
    ]
    return sum(checks) / len(checks)
