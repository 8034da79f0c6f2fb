from helpers import git, git_or_none

NOTES = "- ship the beta on Friday\n- ask Dana about the logo\n"


def verify(workspace, answer):
    """A quarter each: the last commit's message, NOTES.md in it with the notes, no
    notes.txt in it, a clean tree."""
    files = git(workspace, "ls-tree", "--name-only", "HEAD").splitlines()
    shown = git_or_none(workspace, "show", "HEAD:NOTES.md") or ""
    checks = [
        git(workspace, "log", "-1", "--format=%s") == "Rename notes",
        shown.strip() == NOTES.strip(),
        "notes.txt" not in files,
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
