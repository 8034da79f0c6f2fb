from helpers import git


def verify(workspace, answer):
    """Half for CHANGELOG.md (as committed at HEAD) ending with `Released from` and the first
    commit's short hash, its old lines kept; half for HEAD's message and its parent being
    that first commit."""
    first = git(workspace, "rev-list", "--max-parents=0", "HEAD")
    try:
        committed = git(workspace, "show", "HEAD:CHANGELOG.md")
    except Exception:
        return 0.0
    lines = [line.strip() for line in committed.splitlines() if line.strip()]
    text_ok = (bool(lines) and lines[-1] == f"Released from {first[:7]}"
               and "- Export to CSV" in lines)
    message = git(workspace, "log", "-1", "--format=%s")
    parent = git(workspace, "rev-parse", "HEAD~1") if message else ""
    commit_ok = message == "Note release commit" and parent == first
    return 0.5 * text_ok + 0.5 * commit_ok
