import re

from helpers import git, git_or_none

# jinja2 3.1.2, urllib3 1.26.18 and certifi 2023.7.22 are affected; requests 2.32.3 and
# flask 3.0.3 are already past their fixes (lowering flask to 2.2.5 would be a downgrade),
# and django is not used.
PINS = {"certifi": "2024.7.4", "flask": "3.0.3", "jinja2": "3.1.5", "pyyaml": "6.0.1",
        "requests": "2.32.3", "urllib3": "1.26.19"}
CHANGED = ("certifi", "jinja2", "urllib3")
PIN = re.compile(r"([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)")


def _pins(text):
    """{package: version} of the requirement lines (comments and blank lines skipped); None
    when a line is no exact pin or a package is pinned twice."""
    pins = {}
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.fullmatch(line)
        if match is None or match[1].lower() in pins:
            return None
        pins[match[1].lower()] = match[2]
    return pins


def verify(workspace, answer):
    """A sixth each, on what HEAD holds: jinja2, urllib3 and certifi each at its fixed
    version; the other pins as they were and nothing added; one commit on top of the first,
    with the message, and a clean tree; the three changed packages named in the answer."""
    pins = _pins(git_or_none(workspace, "show", "HEAD:requirements.txt")) or {}
    others = {name: version for name, version in PINS.items() if name not in CHANGED}
    text = answer.lower()
    checks = [
        *(pins.get(name) == PINS[name] for name in CHANGED),
        set(pins) == set(PINS) and all(pins[name] == v for name, v in others.items()),
        git(workspace, "rev-list", "--count", "HEAD") == "2"
        and git(workspace, "log", "-1", "--format=%s").strip().rstrip(".").lower()
        == "fix vulnerable pins"
        and git(workspace, "status", "--porcelain") == "",
        all(re.search(rf"\b{name}\b", text) for name in CHANGED),
    ]
    return sum(checks) / len(checks)
