import re

from helpers import git, git_or_none

# @maya owns 5 paths: on /src/search/ Jonas is already an owner, so she is only taken off;
# on the 4 others (/docs/, /src/billing/, /infra/, /tests/billing/) @jonas takes her place.
# @mayank is someone else: a plain text replace of "@maya" turns him into "@jonasnk".
# Slips: 5 (the search path counted), "@jonas @jonas" on it, @mayank changed.
OWNERS = {
    "*": {"@lena"},
    "/docs/": {"@jonas", "@tom"},
    "/src/billing/": {"@jonas"},
    "/src/search/": {"@jonas"},
    "/src/auth/": {"@priya"},
    "/src/reports/": {"@mayank"},
    "/infra/": {"@jonas", "@priya"},
    "/tests/billing/": {"@jonas"},
}
ORDER = list(OWNERS)
COUNT = r"(?<![\w.,/@-])(4|four)(?![\w/-])(?![.,]\d)"
WRONG = r"(?<![\w.,/@-])(5|five)(?![\w/-])(?![.,]\d)"


def _rules(text):
    """[(pattern, [owners])] of the file's rules, comments and blank lines skipped."""
    rules = []
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            rules.append((line[0], line[1:]))
    return rules


def verify(workspace, answer):
    """A sixth each: HEAD's CODEOWNERS has the eight rules in their order with the right
    owners (each owner once; their order on a line is free); its comment kept; HEAD one
    commit on top of the first, changing only CODEOWNERS; its message; a clean tree; 4 (or
    "four") in the answer and not 5."""
    text = git_or_none(workspace, "show", "HEAD:.github/CODEOWNERS")
    rules = _rules(text)
    owners_ok = ([pattern for pattern, _ in rules] == ORDER
                 and all(len(owners) == len(set(owners)) and set(owners) == OWNERS[pattern]
                         for pattern, owners in rules))
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r",
                          "HEAD") or ""
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    message = message.replace("\u2019", "'")
    text_lower = answer.lower()
    checks = [
        owners_ok,
        (text or "").lstrip().startswith("# Who reviews what."),
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and changed.split() == [".github/CODEOWNERS"],
        message == "hand maya's code over to jonas",
        git(workspace, "status", "--porcelain") == "",
        re.search(COUNT, text_lower) is not None and re.search(WRONG, text_lower) is None,
    ]
    return sum(checks) / len(checks)
