from helpers import git, git_or_none

# What the first commit tracks; .env, build/ and harbor-debug.log are there but ignored.
TRACKED = [".gitignore", "README.md", "pyproject.toml", "src/harbor/__init__.py",
           "src/harbor/cli.py", "tests/test_cli.py"]


def _paths(text):
    """The paths the file lists, a line each (a bullet or a leading ./ aside)."""
    paths = []
    for line in (text or "").splitlines():
        path = line.strip().strip("`")
        for prefix in ("- ", "* "):
            path = path.removeprefix(prefix)
        path = path.strip().removeprefix("./")
        if path:
            paths.append(path)
    return paths


def verify(workspace, answer):
    """A fifth each: HEAD's MANIFEST.txt lists exactly the six tracked files; in
    alphabetical order (by byte or ignoring case); HEAD a second commit adding only
    MANIFEST.txt; its message; a clean tree."""
    paths = _paths(git_or_none(workspace, "show", "HEAD:MANIFEST.txt"))
    listed = sorted(paths) == sorted(TRACKED)
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r",
                          "HEAD") or ""
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        listed,
        listed and paths in (sorted(TRACKED), sorted(TRACKED, key=str.lower)),
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and changed.split() == ["MANIFEST.txt"],
        message == "add manifest",
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
