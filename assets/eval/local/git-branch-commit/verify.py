import subprocess

from helpers import git


def verify(workspace, answer):
    try:
        on_docs = git(workspace, "ls-tree", "-r", "--name-only", "docs").split()
    except subprocess.CalledProcessError:
        return 0.0
    on_main = git(workspace, "ls-tree", "-r", "--name-only", "main").split()
    return (float("docs/intro.md" in on_docs) + float("docs/intro.md" not in on_main)) / 2
