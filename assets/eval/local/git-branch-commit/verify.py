import subprocess


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def verify(workspace, answer):
    try:
        on_docs = git(workspace, "ls-tree", "-r", "--name-only", "docs").split()
    except subprocess.CalledProcessError:
        return 0.0
    on_main = git(workspace, "ls-tree", "-r", "--name-only", "main").split()
    return (float("docs/intro.md" in on_docs) + float("docs/intro.md" not in on_main)) / 2
