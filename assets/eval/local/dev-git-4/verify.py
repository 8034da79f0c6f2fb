from helpers import git, git_or_none

SETUP = """[metadata]
name = tidepool
version = {}
description = Tide tables for small harbours

[options]
packages = find:
python_requires = >=3.10"""


def _same(text, version):
    if text is None:
        return False
    lines = [line.strip() for line in text.strip().splitlines()]
    return lines == [line.strip() for line in SETUP.format(version).splitlines()]


def verify(workspace, answer):
    """A quarter each: release-1.5's setup.cfg with 1.5.0 (nothing else changed), its last
    commit's message, main's setup.cfg still 1.4.2, a clean tree."""
    release = git_or_none(workspace, "show", "release-1.5:setup.cfg")
    message = ""
    if release is not None:
        message = git(workspace, "log", "-1", "--format=%s", "release-1.5")
    checks = [
        _same(release, "1.5.0"),
        message.strip().rstrip(".").lower() == "release 1.5.0",
        _same(git_or_none(workspace, "show", "main:setup.cfg"), "1.4.2"),
        git(workspace, "status", "--porcelain") == "",
    ]
    return sum(checks) / len(checks)
