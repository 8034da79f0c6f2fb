import re

from helpers import git, git_or_none

CART = ['"""Shopping cart totals."""', "TAX_RATE = 0.21", "def total(prices):",
        "subtotal = sum(prices)", "return round(subtotal * (1 + TAX_RATE), 2)"]
README = ["# shop", "A tiny shopping cart for the market stall.",
          "Totals are rounded to the cent."]


def _lines(text):
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _commit(workspace, rev):
    """(subject, changed paths, cart.py, README.md) of a commit; None when there is none."""
    subject = git_or_none(workspace, "log", "-1", "--format=%s", rev)
    if subject is None:
        return None
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r", rev) or ""
    return (subject.strip().rstrip(".").lower(), set(changed.split()),
            _lines(git_or_none(workspace, "show", f"{rev}:cart.py")),
            _lines(git_or_none(workspace, "show", f"{rev}:README.md")))


def _rate(cart):
    return [re.sub(r"0\.210*\b", "0.21", line) for line in cart]


def verify(workspace, answer):
    """A fifth each: the commit before HEAD is "Raise tax rate" and changes only cart.py,
    to 0.21; HEAD is "Document tax rate" and changes only README.md, adding the line at
    its end; three commits in all (nothing more made); a clean tree; HEAD's cart.py still
    0.21."""
    first, second = _commit(workspace, "HEAD~1"), _commit(workspace, "HEAD")
    count = int(git(workspace, "rev-list", "--count", "HEAD"))
    checks = [
        first is not None and first[0] == "raise tax rate" and first[1] == {"cart.py"}
        and _rate(first[2]) == CART,
        second is not None and second[0] == "document tax rate"
        and second[1] == {"README.md"} and second[3] == [*README, "Prices include 21% tax."],
        count == 3,
        git(workspace, "status", "--porcelain") == "",
        second is not None and _rate(second[2]) == CART,
    ]
    return sum(checks) / len(checks)
