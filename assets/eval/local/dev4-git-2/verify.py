import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import git, git_or_none

# Two bugs: "<" where each band includes its limit (2 kg cost 7.90, 5 kg 11.90), and floor
# where every *started* kilogram over 10 counts (10.5 kg cost 11.90, 12.5 kg 14.30). Fixed:
# 12.5 kg = 11.90 + 3 x 1.20 = 15.50. Slips: only the "<" fixed, the complaint's bug (14.30
# for 12.5 kg, 10.5 kg still 11.90); rounding 12.5 kg up twice (16.70) or to 12 kg (14.30).
WEIGHTS = [0.4, 1.99, 2, 2.01, 3.5, 5, 5.01, 7, 10, 10.01, 10.5, 11, 12.5, 14, 20.2]
PRICE = 15.50
WRONG = {14.30, 13.10, 16.70}
# A clause that gives an old price as such ("it was 14.30 before") is no slip.
BEFORE = re.compile(r"\b(before|previously|used to|was|were|old|instead of|had been)\b")
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from shipping import shipping_cost
print(json.dumps([float(shipping_cost(w)) for w in json.loads(sys.argv[2])]))
"""


def expected(weight):
    for limit, price in ((2, 4.90), (5, 7.90), (10, 11.90)):
        if weight <= limit:
            return price
    return round(11.90 + 1.20 * math.ceil(weight - 10), 2)


def _right(source):
    """{weight: whether shipping_cost, run from ``source`` in a fresh interpreter, gives
    its price}; all False if it fails."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "shipping.py").write_text(source or "")
        try:
            done = subprocess.run([sys.executable, "-c", PROBE, folder, json.dumps(WEIGHTS)],
                                  capture_output=True, text=True, timeout=20)
            prices = json.loads(done.stdout) if done.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError):
            prices = None
    if prices is None:
        return dict.fromkeys(WEIGHTS, False)
    return {w: abs(p - expected(w)) < 0.005 for w, p in zip(WEIGHTS, prices, strict=True)}


def _told(answer):
    """15.50 in the answer (15.5, 15,50, €15.50) and no slip's price, except in a clause
    that gives it as the price before the fix."""
    text = re.sub(r"(?<=\d),(?=\d{1,2}\b)", ".", answer.lower())  # a decimal comma
    found, wrong = False, False
    for clause in re.split(r"[;!?\n]+|\.(?:\s|$)", text):
        numbers = {round(float(n), 2) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", clause)}
        found = found or PRICE in numbers
        wrong = wrong or bool(numbers & WRONG and not BEFORE.search(clause))
    return found and not wrong


def verify(workspace, answer):
    """A sixth each: HEAD's shipping_cost right at and around each band's limit (up to
    10 kg); right above 10 kg (every started kilogram); HEAD one commit on top of the first,
    changing only shipping.py; its message; a clean tree; 15.50 in the answer."""
    right = _right(git_or_none(workspace, "show", "HEAD:shipping.py"))
    changed = git_or_none(workspace, "diff-tree", "--no-commit-id", "--name-only", "-r",
                          "HEAD") or ""
    message = git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
    checks = [
        all(ok for weight, ok in right.items() if weight <= 10),
        all(ok for weight, ok in right.items() if weight > 10),
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and changed.split() == ["shipping.py"],
        message == "fix shipping rates",
        git(workspace, "status", "--porcelain") == "",
        _told(answer),
    ]
    return sum(checks) / len(checks)
